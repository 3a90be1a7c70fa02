/**
 * One fw process of runtime/live/live-cluster.test.ts: `node e2e/support/live-cluster-process.ts` with
 * DATABASE_URL set serves the cluster app (live-cluster-app.ts) with createRuntime on a free port, prints
 * `{"url": …}` once listening, and stops on SIGTERM or when its stdin closes. FW_LIVE_CLUSTER_LEASE_MS
 * sets the hub's `clusterLeaseMs`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRuntime } from '../../runtime/create-runtime.ts';
import { createDatabase } from '../../runtime/db/database.ts';
import { clusterApp } from './live-cluster-app.ts';

const leaseMs = process.env.FW_LIVE_CLUSTER_LEASE_MS;
const db = await createDatabase({ url: process.env.DATABASE_URL! });
const runtime = await createRuntime({
  app: clusterApp(),
  db,
  dev: true,
  live: { pruneIntervalMs: 0, onError: () => undefined, ...(leaseMs ? { clusterLeaseMs: Number(leaseMs) } : {}) },
});
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
process.stdin.on('end', stop).resume();
