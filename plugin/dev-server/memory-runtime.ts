import { createMemoryDatabase } from '../../runtime/db/memory-database.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import type { RuntimeHandlerOptions } from '../../runtime/http/handler.ts';
import { createRuntime, type RuntimeOptions } from '../../runtime/create-runtime.ts';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import type { DevRuntime } from './dev-runtime.ts';

/**
 * An already loaded app on a throwaway in-memory PGlite migrated to its schema, shaped as the dev
 * runtime so `startApiServer` serves it (dev mode: dev-headers auth). `fw verify` boots on it while
 * `fw dev` holds the app database; `fwjs/testing` runs an app's tests on it.
 */
export async function createMemoryRuntime(
  root: string,
  app: AppDefinition,
  options: Pick<RuntimeHandlerOptions, 'auth' | 'ai' | 'onError' | 'clock'> & Pick<RuntimeOptions, 'worker'> = {},
): Promise<DevRuntime> {
  const { db, migration } = await createMemoryDatabase(app.schema);
  try {
    if (migration.blocked.length > 0) {
      throw new FwFailure('migration_blocked', 'The schema has changes fw will not apply automatically.', { diagnostics: migration.blocked, suggestions: ['fw db status --json'] });
    }
    const runtime = await createRuntime({ app, db, dev: true, ...options });
    return {
      root,
      db,
      handler: runtime.handler,
      live: runtime.live!,
      ...(runtime.worker ? { worker: runtime.worker } : {}),
      app: () => app,
      diagnostics: () => [],
      onServerError: () => () => {},
      reload: async () => ({ ok: true, app, migrated: [] }),
      close: () => runtime.close(),
    };
  } catch (error) {
    await db.close();
    throw error;
  }
}
