/**
 * bench/http/router.ts: which maintained router should hold fw's route table? Builds fw's real route
 * set (its own routes, a realistic app's endpoints with params) in each candidate, then matches a mix
 * of request paths (entry calls, live streams, endpoints with params, a 405 and a 404) and prints the
 * lookups per second as JSON. No database, no sockets: the router alone. See README.md.
 *
 *   node bench/http/router.ts
 *
 * Candidates that are not installed are skipped (try one: npm install --no-save find-my-way rou3 hono).
 */
import { performance } from 'node:perf_hooks';

/** One route as fw registers it; the prefix routes take the rest of the path (wildcard). */
interface BenchRoute {
  method: string;
  path: string;
}

const WILDCARD = '*';

const fwRoutes: BenchRoute[] = [
  { method: 'GET', path: '/health' },
  { method: 'HEAD', path: '/health' },
  { method: 'GET', path: '/entries' },
  { method: 'HEAD', path: '/entries' },
  { method: 'POST', path: '/live' },
  { method: 'POST', path: '/ai/agents/run' },
  { method: 'POST', path: '/ai/agents/chat' },
  { method: 'GET', path: `/live/${WILDCARD}` },
  { method: 'POST', path: '/external/:service/commands/:name' },
  { method: 'POST', path: '/external/:service/queries/:name' },
  { method: 'GET', path: `/_fw/${WILDCARD}` },
  { method: 'POST', path: `/_fw/${WILDCARD}` },
  { method: 'POST', path: `/commands/${WILDCARD}` },
  { method: 'POST', path: `/queries/${WILDCARD}` },
];

// A support desk's REST surface (templates/b2b-support-web, plus webhooks): statics beside params.
const endpointRoutes: BenchRoute[] = [
  { method: 'GET', path: '/api/tickets' },
  { method: 'POST', path: '/api/tickets' },
  { method: 'GET', path: '/api/tickets/new' },
  { method: 'GET', path: '/api/tickets/:id' },
  { method: 'PATCH', path: '/api/tickets/:id' },
  { method: 'DELETE', path: '/api/tickets/:id' },
  { method: 'GET', path: '/api/tickets/:id/comments' },
  { method: 'POST', path: '/api/tickets/:id/comments' },
  { method: 'DELETE', path: '/api/tickets/:id/comments/:commentId' },
  { method: 'GET', path: '/api/customers/:customerId/tickets' },
  { method: 'GET', path: '/api/reports/daily' },
  { method: 'POST', path: '/hooks/stripe' },
  { method: 'POST', path: '/hooks/github' },
];

/** What clients send, weighted like an app's traffic: mostly entry calls and endpoints, some misses. */
const requests: BenchRoute[] = [
  { method: 'POST', path: '/queries/listTickets' },
  { method: 'POST', path: '/queries/listTickets' },
  { method: 'POST', path: '/commands/createTicket' },
  { method: 'POST', path: '/commands/assignTicket' },
  { method: 'POST', path: '/commands/addComment' },
  { method: 'GET', path: '/live/liveTickets' },
  { method: 'POST', path: '/live' },
  { method: 'GET', path: '/health' },
  { method: 'GET', path: '/api/tickets' },
  { method: 'GET', path: '/api/tickets/new' },
  { method: 'GET', path: '/api/tickets/4f1c2a9e-3b7d-4c1a-9e2f-8d6b5a4c3e21' },
  { method: 'GET', path: '/api/tickets/4f1c2a9e-3b7d-4c1a-9e2f-8d6b5a4c3e21/comments' },
  { method: 'DELETE', path: '/api/tickets/17/comments/42' },
  { method: 'GET', path: '/api/customers/acme/tickets' },
  { method: 'POST', path: '/hooks/stripe' },
  { method: 'PUT', path: '/api/tickets/17' }, // 405: the path is served, not with this method
  { method: 'GET', path: '/favicon.ico' }, // 404
];

/** A candidate: builds its table from the routes, then answers one lookup (truthy when found). */
interface Candidate {
  name: string;
  package: string;
  build(routes: BenchRoute[]): (method: string, path: string) => unknown;
}

type Loaded = Record<string, unknown>;

async function load(specifier: string): Promise<Loaded | undefined> {
  try {
    return (await import(specifier)) as Loaded;
  } catch {
    return undefined;
  }
}

/** Static segments first, so routers that keep registration order (Hono's) prefer the literal route. */
function literalFirst(routes: BenchRoute[]): BenchRoute[] {
  const rank = (route: BenchRoute) => route.path.split('/').map((s) => (s.startsWith(':') ? '1' : s === WILDCARD ? '2' : '0')).join('');
  return [...routes].sort((a, b) => rank(a).localeCompare(rank(b)));
}

async function candidates(): Promise<{ available: Candidate[]; skipped: string[] }> {
  const available: Candidate[] = [];
  const skipped: string[] = [];
  const fmw = await load('find-my-way');
  if (fmw) {
    const create = fmw.default as (options: object) => { on(method: string, path: string, handler: () => void, store: unknown): void; find(method: string, path: string): unknown };
    available.push({
      name: 'find-my-way',
      package: 'find-my-way',
      build(routes) {
        const router = create({ maxParamLength: 1000 });
        for (const route of routes) router.on(route.method, route.path, () => {}, route);
        return (method, path) => router.find(method, path);
      },
    });
  } else skipped.push('find-my-way');
  const rou3 = await load('rou3');
  if (rou3) {
    const { createRouter, addRoute, findRoute } = rou3 as {
      createRouter(): unknown;
      addRoute(router: unknown, method: string, path: string, data: unknown): void;
      findRoute(router: unknown, method: string, path: string): unknown;
    };
    available.push({
      name: 'rou3',
      package: 'rou3',
      build(routes) {
        const router = createRouter();
        for (const route of routes) addRoute(router, route.method, route.path.replace(`/${WILDCARD}`, '/**'), route);
        return (method, path) => findRoute(router, method, path);
      },
    });
  } else skipped.push('rou3');
  for (const [name, specifier, exported] of [
    ['hono RegExpRouter', 'hono/router/reg-exp-router', 'RegExpRouter'],
    ['hono TrieRouter', 'hono/router/trie-router', 'TrieRouter'],
  ] as const) {
    const hono = await load(specifier);
    if (!hono) {
      skipped.push(name);
      continue;
    }
    const Router = hono[exported] as new () => { add(method: string, path: string, handler: unknown): void; match(method: string, path: string): [unknown[]] };
    available.push({
      name,
      package: 'hono',
      build(routes) {
        const router = new Router();
        for (const route of literalFirst(routes)) router.add(route.method, route.path, route);
        return (method, path) => router.match(method, path)[0][0];
      },
    });
  }
  return { available, skipped };
}

/** fw before the route table: an if-chain for its own routes, then a scan and sort of the endpoints. */
function ifChainAndScan(routes: BenchRoute[]): (method: string, path: string) => unknown {
  const endpoints = routes.filter((r) => r.path.startsWith('/api/') || r.path.startsWith('/hooks/')).map((r) => ({ ...r, segments: r.path.slice(1).split('/') }));
  const score = (segments: string[]) => segments.reduce((sum, s, i) => sum + (s.startsWith(':') ? 0 : 2 ** (segments.length - i)), 0);
  return (method, path) => {
    if (path === '/health' || path === '/entries' || path === '/live' || path === '/ai/agents/run' || path === '/ai/agents/chat') return path;
    if (path.startsWith('/live/')) return path;
    const external = /^\/external\/([^/]+)\/(commands|queries)\/([^/]+)$/.exec(path);
    if (external) return external;
    if (path.startsWith('/_fw/') || path.startsWith('/commands/') || path.startsWith('/queries/')) return path;
    const parts = path.slice(1).split('/');
    const matching = endpoints.filter((e) => e.segments.length === parts.length && e.segments.every((s, i) => s.startsWith(':') || s === parts[i]));
    if (matching.length === 0) return null;
    return matching.filter((e) => e.method === method).sort((a, b) => score(b.segments) - score(a.segments))[0] ?? matching;
  };
}

/** Lookups per second: the whole request mix repeated for about `seconds`, best of `runs`. */
function opsPerSecond(lookup: (method: string, path: string) => unknown, seconds: number, runs: number): number {
  let best = 0;
  let sink = 0;
  for (let run = 0; run < runs; run++) {
    let lookups = 0;
    const started = performance.now();
    let elapsed = 0;
    while (elapsed < seconds * 1000) {
      for (let i = 0; i < 1000; i++) {
        for (const request of requests) if (lookup(request.method, request.path)) sink++;
      }
      lookups += 1000 * requests.length;
      elapsed = performance.now() - started;
    }
    best = Math.max(best, lookups / (elapsed / 1000));
  }
  if (sink < 0) console.error(sink); // keeps the lookups from being optimised away
  return best;
}

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_ROUTER_SECONDS ?? 1);
  const runs = Number(process.env.BENCH_ROUTER_RUNS ?? 5);
  const routes = [...fwRoutes, ...endpointRoutes];
  const { available, skipped } = await candidates();
  const results: Record<string, { package?: string; opsPerSecond: number }> = {};
  // Interleaved warm-up: every candidate's lookup reaches the JIT's top tier before any is measured.
  const lookups: { name: string; package?: string; lookup: (method: string, path: string) => unknown }[] = [{ name: 'if-chain + scan (before)', lookup: ifChainAndScan(routes) }];
  const unsupported: Record<string, string> = {};
  for (const candidate of available) {
    try {
      lookups.push({ name: candidate.name, package: candidate.package, lookup: candidate.build(routes) });
    } catch (error) {
      // Hono's RegExpRouter refuses some static-beside-param sets (Hono falls back to its TrieRouter then).
      unsupported[candidate.name] = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
  }
  for (const { lookup } of lookups) opsPerSecond(lookup, 0.3, 1);
  for (const entry of lookups) {
    results[entry.name] = { ...(entry.package ? { package: entry.package } : {}), opsPerSecond: Math.round(opsPerSecond(entry.lookup, seconds, runs)) };
  }
  console.log(JSON.stringify({ node: process.version, routes: routes.length, requestMix: requests.length, seconds, runs, results, unsupported, skipped }, null, 2));
}

await main();
