import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/**
 * Points fw's cache (FW_CACHE_DIR: PGlite templates and snapshots) at a directory of the calling
 * describe block's own while its tests run, and removes it after; resolves the directory once set.
 */
export function useTemporaryCache(): () => string {
  let cache: string | undefined;
  beforeAll(async () => {
    cache = await mkdtemp(path.join(tmpdir(), 'fw-cache-'));
    process.env.FW_CACHE_DIR = cache;
  });
  afterAll(async () => {
    delete process.env.FW_CACHE_DIR;
    if (cache) await rm(cache, { recursive: true, force: true });
  });
  return () => {
    if (!cache) throw new Error('useTemporaryCache: the cache is set in beforeAll; read it inside a test.');
    return cache;
  };
}
