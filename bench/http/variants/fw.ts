/** (a) fw's HTTP runtime, exactly as an app mounts it: `createRuntime` over `createDatabase` (no live queries, no worker). */
import { createDatabase } from '../../../runtime/db/database.ts';
import { createRuntime } from '../../../runtime/create-runtime.ts';
import { benchApp, prepareBenchDatabase, STATEMENT_TIMEOUT_MS } from '../app.ts';
import type { CreateVariant } from './types.ts';

export const createFwVariant: CreateVariant = async (spec) => {
  const db =
    spec.database === 'postgres'
      ? await createDatabase({ url: spec.url!, poolSize: spec.poolSize, statementTimeoutMs: STATEMENT_TIMEOUT_MS })
      : await createDatabase({ dataDir: 'memory://', statementTimeoutMs: STATEMENT_TIMEOUT_MS });
  if (spec.database === 'pglite') await prepareBenchDatabase(db);
  const runtime = await createRuntime({ app: benchApp(), db, dev: true, live: false });
  return { listener: (req, res) => runtime.handler(req, res), close: () => runtime.close() };
};
