/**
 * bench/mcp's server process: fw's runtime handler (dev mode, so MCP is on) over an in-memory PGlite
 * seeded as bench/http seeds it. Prints `{"port": n}` once listening; `GET /__bench/cpu` answers its CPU time.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDatabase } from '../../runtime/db/database.ts';
import { createRuntimeHandler } from '../../runtime/http/handler.ts';
import { benchApp, prepareBenchDatabase } from '../http/app.ts';

const db = await createDatabase({ dataDir: 'memory://' });
await prepareBenchDatabase(db);
// No rate limit: the bench is one caller sending thousands of calls a minute.
const handler = createRuntimeHandler({ app: benchApp(), db, dev: true, mcp: { rateLimitPerMinute: 0 }, onError: () => {} });
// The CPU time this process used so far (µs), for run.ts's cost per call: on a shared machine CPU time
// is what a call costs, while throughput and latency also measure everyone else's load.
const server = createServer((req, res) => (req.url === '/__bench/cpu' ? res.end(JSON.stringify(process.cpuUsage())) : handler(req, res)));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
process.on('SIGTERM', () => {
  server.close();
  void db.close().then(() => process.exit(0));
});
