/** (a) fw's HTTP runtime, exactly as an app mounts it: `createRuntimeHandler` over `createDatabase`. */
import { createDatabase } from '../../../runtime/db/database.ts';
import { createRuntimeHandler } from '../../../runtime/http/handler.ts';
import { benchApp, prepareBenchDatabase, STATEMENT_TIMEOUT_MS } from '../app.ts';
import type { CreateVariant } from './types.ts';

export const createFwVariant: CreateVariant = async (spec) => {
  const db =
    spec.database === 'postgres'
      ? await createDatabase({ url: spec.url!, poolSize: spec.poolSize, statementTimeoutMs: STATEMENT_TIMEOUT_MS })
      : await createDatabase({ dataDir: 'memory://', statementTimeoutMs: STATEMENT_TIMEOUT_MS });
  if (spec.database === 'pglite') await prepareBenchDatabase(db);
  const handler = createRuntimeHandler({ app: benchApp(), db, dev: true });
  return { listener: (req, res) => handler(req, res), close: () => db.close() };
};
