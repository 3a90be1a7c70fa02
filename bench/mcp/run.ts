/**
 * bench/mcp: what an MCP `tools/call` of a query costs beside the same HTTP call (issue #48: within
 * 1.3×). One server process (server.ts, PGlite in memory, the bench/http app), the same caller and the
 * same query (`listNotes`, 50 notes), `POST /queries/listNotes` against `POST /mcp` with a JSON-RPC
 * `tools/call`, in interleaved rounds; medians. One JSON document on stdout, progress on stderr.
 *
 *   node bench/mcp/run.ts > mcp.json        # BENCH_DURATION (5 s), BENCH_ROUNDS (3), BENCH_CONNECTIONS (16)
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { devHeaders } from '../http/app.ts';
import { type LoadResult, runLoad } from '../http/load.ts';

const durationSec = Number(process.env.BENCH_DURATION ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);

const child = spawn(process.execPath, [fileURLToPath(new URL('./server.ts', import.meta.url))], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise<number>((resolve, reject) => {
  createInterface({ input: child.stdout! }).once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
  child.once('exit', (code) => reject(new Error(`bench/mcp: the server exited with ${code}`)));
});
const base = `http://127.0.0.1:${port}`;

const variants = {
  http: { url: `${base}/queries/listNotes`, headers: { ...devHeaders }, body: JSON.stringify({ args: {} }) },
  mcp: {
    url: `${base}/mcp`,
    headers: { ...devHeaders, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'listNotes', arguments: {} } }),
  },
};

// Both answer the same 50 notes before any load.
const viaHttp = (await (await fetch(variants.http.url, { method: 'POST', headers: variants.http.headers, body: variants.http.body })).json()) as { result: unknown[] };
const viaMcp = (await (await fetch(variants.mcp.url, { method: 'POST', headers: variants.mcp.headers, body: variants.mcp.body })).json()) as { result: { content: Array<{ text: string }> } };
if (viaHttp.result.length !== 50 || JSON.stringify(JSON.parse(viaMcp.result.content[0]!.text)) !== JSON.stringify(viaHttp.result)) {
  throw new Error('bench/mcp: the HTTP and MCP answers differ');
}

const cpuNow = async () => {
  const { user, system } = (await (await fetch(`${base}/__bench/cpu`)).json()) as { user: number; system: number };
  return user + system;
};
const results: Record<keyof typeof variants, LoadResult[]> = { http: [], mcp: [] };
/** The server's CPU time per call in each round (µs). */
const cpuPerCall: Record<keyof typeof variants, number[]> = { http: [], mcp: [] };
for (const name of Object.keys(variants) as Array<keyof typeof variants>) await runLoad(variants[name], { connections, durationSec: 2 }); // warm-up
for (let round = 0; round < rounds; round++) {
  for (const name of (round % 2 === 0 ? ['http', 'mcp'] : ['mcp', 'http']) as Array<keyof typeof variants>) {
    const cpuBefore = await cpuNow();
    const result = await runLoad(variants[name], { connections, durationSec });
    cpuPerCall[name].push(((await cpuNow()) - cpuBefore) / Math.max(1, result.requests));
    if (result.non2xx + result.errors + result.timeouts > 0) throw new Error(`bench/mcp: ${name} answered ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
    results[name].push(result);
    process.stderr.write(`bench/mcp: round ${round + 1} ${name}: ${result.reqPerSec.toFixed(0)} req/s, p50 ${result.p50Ms} ms, ${cpuPerCall[name].at(-1)!.toFixed(0)} µs CPU a call\n`);
  }
}
child.kill('SIGTERM');

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const summary = (name: keyof typeof variants) => ({
  reqPerSec: Math.round(median(results[name].map((r) => r.reqPerSec))),
  p50Ms: median(results[name].map((r) => r.p50Ms)),
  p99Ms: median(results[name].map((r) => r.p99Ms)),
  cpuUsPerCall: Math.round(median(cpuPerCall[name])),
});
const http = summary('http');
const mcp = summary('mcp');
process.stdout.write(
  `${JSON.stringify({ database: 'pglite', entry: 'listNotes', connections, durationSec, rounds, http, mcp, mcpVsHttp: { throughput: Math.round((http.reqPerSec / mcp.reqPerSec) * 100) / 100, p50: Math.round((mcp.p50Ms / http.p50Ms) * 100) / 100, cpu: Math.round((mcp.cpuUsPerCall / http.cpuUsPerCall) * 100) / 100 } }, null, 2)}\n`,
);
