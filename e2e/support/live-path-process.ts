/**
 * One fw process of runtime/live/live-path.property.test.ts: `node e2e/support/live-path-process.ts
 * <case.json>` with DATABASE_URL set. Builds the case's app (live-path-model.ts) and serves it with
 * createRuntime on a free port, prints `{"url": …}` on stdout once listening, and stops on SIGTERM or when its stdin closes (the test ended).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRuntime } from '../../runtime/create-runtime.ts';
import { createDatabase } from '../../runtime/db/database.ts';
import { buildApp, type CaseSpec } from './live-path-model.ts';

const spec = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as CaseSpec;
const db = await createDatabase({ url: process.env.DATABASE_URL! });
const runtime = await createRuntime({ app: buildApp(spec), db, dev: true, live: { pruneIntervalMs: 0, onError: () => undefined } });
const server = createServer(runtime.handler);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void runtime
    .close()
    .catch(() => undefined)
    .finally(() => {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    });
};
process.on('SIGTERM', stop);
// The test holds our stdin open: when it goes (even killed), so do we.
process.stdin.on('end', stop).resume();
