import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fwVersion } from '../../runtime/core/version.ts';
import { type Artifact, readStamp } from './render.ts';

/**
 * Why a file on disk is not what `fw generate` would write now: it is missing, it was made by another
 * fw version, its body no longer matches its header's hash (a hand edit), or it is simply stale.
 */
export type DriftReason = 'missing' | 'other-version' | 'edited' | 'stale';

export type ArtifactFile =
  | { path: string; status: 'written' | 'unchanged' }
  | { path: string; status: 'drifted'; reason: DriftReason; foundVersion?: string };

/**
 * Brings the artifacts on disk in line with `artifacts`, touching only files whose bytes differ (so
 * file watchers do not loop), each written whole through a rename. With `check`, writes nothing and
 * reports the differing files as drifted instead.
 *
 * @example
 *   await syncArtifacts(root, artifacts, { check: true })
 *   // [{ path: 'src/fw/_generated/api.json', status: 'drifted', reason: 'stale' }, { path: …, status: 'unchanged' }]
 */
export async function syncArtifacts(root: string, artifacts: readonly Artifact[], options: { check: boolean }): Promise<ArtifactFile[]> {
  return Promise.all(
    artifacts.map(async (artifact): Promise<ArtifactFile> => {
      const file = path.join(root, artifact.path);
      const existing = await readKnown(file);
      if (existing === artifact.content) return { path: artifact.path, status: 'unchanged' };
      if (options.check) return { path: artifact.path, status: 'drifted', ...driftOf(artifact, existing) };
      await mkdir(path.dirname(file), { recursive: true });
      const temporary = `${file}.${process.pid}.tmp`;
      await writeFile(temporary, artifact.content);
      await rename(temporary, file);
      remember(file, artifact.content, await stat(file));
      return { path: artifact.path, status: 'written' };
    }),
  );
}

// What this process last read or wrote at each artifact path, with the file's size and mtime then: a
// file whose stat still matches is not read again (dev regenerates on every edit; the files are large).
const known = new Map<string, { size: number; mtimeMs: number; content: string }>();

function remember(file: string, content: string, stats: { size: number; mtimeMs: number }): void {
  known.set(file, { size: stats.size, mtimeMs: stats.mtimeMs, content });
}

async function readKnown(file: string): Promise<string | undefined> {
  const stats = await stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (stats === undefined) return undefined;
  const last = known.get(file);
  if (last !== undefined && last.size === stats.size && last.mtimeMs === stats.mtimeMs) return last.content;
  const content = await readFile(file, 'utf8');
  remember(file, content, stats);
  return content;
}

function driftOf(artifact: Artifact, existing: string | undefined): { reason: DriftReason; foundVersion?: string } {
  if (existing === undefined) return { reason: 'missing' };
  const stamp = readStamp(artifact.format, existing);
  if (stamp.version !== null && stamp.version !== fwVersion) return { reason: 'other-version', foundVersion: stamp.version };
  return { reason: stamp.intact ? 'stale' : 'edited' };
}

/** One sentence saying why a file drifted (its path is said separately), e.g. for a `--check` failure. */
export function describeDrift(file: Extract<ArtifactFile, { status: 'drifted' }>): string {
  switch (file.reason) {
    case 'missing':
      return 'Missing: fw generate has not written it yet.';
    case 'other-version':
      return `Made by fw ${file.foundVersion}; this is fw ${fwVersion}.`;
    case 'edited':
      return 'Edited by hand: its content no longer matches its header hash.';
    case 'stale':
      return 'Differs from what fw generate makes from the current sources.';
  }
}

/**
 * The drifted files as one finding: every drifted file has the same fix (`fw generate`), so a report
 * says it once instead of once per file. `file` is the first drifted path (the one to open).
 *
 * @example
 *   summariseDrift(files) // { file: 'src/fw/_generated/api.json', message: 'src/fw/_generated/api.json is out of date (…); and 2 more: …' }
 */
export function summariseDrift(files: readonly ArtifactFile[]): { file: string; message: string } | null {
  const drifted = files.flatMap((f) => (f.status === 'drifted' ? [f] : []));
  const [first, ...rest] = drifted;
  if (first === undefined) return null;
  const more = rest.length === 0 ? '' : ` Also out of date: ${rest.map((f) => `${f.path} (${describeDrift(f).replace(/\.$/, '')})`).join(', ')}.`;
  return { file: first.path, message: `${first.path} is out of date. ${describeDrift(first)}${more}` };
}

/** The fix hint every drift finding carries. */
export const driftHint = 'Regenerate; never edit files under src/fw/_generated/ by hand.';
