import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import type { FwDatabase } from '../../runtime/db/database.ts';
import { openAppDatabase } from '../../plugin/database-target.ts';
import { loadAppOnce } from '../../plugin/load-app-once.ts';
import { fetchAdmin, resolveRuntimeUrl } from '../admin/admin-client.ts';
import { readRuntimeFile } from '../dev/runtime-file.ts';

type Ask = (route: string, method: 'GET' | 'POST', payload?: Record<string, unknown>) => Promise<unknown>;

/**
 * Runs a `fw db` command on the app's database: directly (`direct`, with the app loaded), or — when the
 * embedded database is locked by this app's running `fw dev` (PGlite admits one process) — through
 * that process's admin routes (`viaDev`), so every `fw db` command works beside the dev server.
 */
export async function withAppDatabase<R>(
  root: string,
  run: { direct(app: AppDefinition, db: FwDatabase): Promise<R>; viaDev(ask: Ask): Promise<unknown> },
): Promise<{ body: R } | { body: unknown; via: string }> {
  let db: FwDatabase;
  try {
    db = await openAppDatabase(root);
  } catch (error) {
    if (error instanceof FwFailure && error.kind === 'database_locked' && readRuntimeFile(root)) {
      const body = await run.viaDev((route, method, payload) => fetchAdmin({ root }, route, method, payload));
      return { body, via: resolveRuntimeUrl({ root }) };
    }
    throw error;
  }
  try {
    // The app is loaded only for a database read here: the running fw dev above has its own.
    return { body: await run.direct(await loadAppOnce(root), db) };
  } finally {
    await db.close();
  }
}
