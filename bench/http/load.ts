/** The load generator: autocannon, typed for the few options and result fields used here. */
import { createRequire } from 'node:module';

interface AutocannonOptions {
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
  connections: number;
  duration: number;
  pipelining: 1;
  timeout: number;
}

interface Histogram {
  average: number;
  p50: number;
  p99: number;
  max: number;
}

interface AutocannonResult {
  requests: Histogram & { total: number };
  latency: Histogram;
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
}

type Autocannon = (options: AutocannonOptions) => Promise<AutocannonResult>;

// autocannon is CommonJS without bundled types.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export interface LoadRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface LoadResult {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

/** Closed-loop load: `connections` clients each send the next request as soon as the last one answered. */
export async function runLoad(request: LoadRequest, options: { connections: number; durationSec: number }): Promise<LoadResult> {
  const result = await autocannon({
    url: request.url,
    method: 'POST',
    headers: request.headers,
    body: request.body,
    connections: options.connections,
    duration: options.durationSec,
    pipelining: 1,
    timeout: 10,
  });
  return {
    reqPerSec: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}
