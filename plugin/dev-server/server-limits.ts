/**
 * Limits on fw's own HTTP servers (`fw start`, the `fw dev` API port), so that a client sending its
 * headers or body a byte at a time (slow loris) cannot hold connections for Node's default five
 * minutes, and a flood of sockets cannot exhaust the process. Live streams are unaffected: the request
 * timeout bounds *receiving* a request, not how long its response may stream.
 *
 * | variable | default | |
 * |---|---|---|
 * | `FW_HEADERS_TIMEOUT_MS` | 15 000 | the request line and headers must arrive within this |
 * | `FW_REQUEST_TIMEOUT_MS` | 30 000 | the whole request (headers and body) must arrive within this |
 * | `FW_KEEP_ALIVE_TIMEOUT_MS` | 5 000 | an idle keep-alive connection is closed after this |
 * | `FW_MAX_CONNECTIONS` | 1 024 | open connections; further ones are refused |
 */
import type { Server, ServerOptions } from 'node:http';
import { FwFailure } from '../../runtime/core/failure.ts';

export interface ServerLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
}

export function serverLimits(env: NodeJS.ProcessEnv = process.env): ServerLimits {
  const requestTimeoutMs = whole(env, 'FW_REQUEST_TIMEOUT_MS', 30_000);
  return {
    // Node requires headersTimeout ≤ requestTimeout.
    headersTimeoutMs: Math.min(whole(env, 'FW_HEADERS_TIMEOUT_MS', 15_000), requestTimeoutMs),
    requestTimeoutMs,
    keepAliveTimeoutMs: whole(env, 'FW_KEEP_ALIVE_TIMEOUT_MS', 5_000),
    maxConnections: whole(env, 'FW_MAX_CONNECTIONS', 1_024),
  };
}

/** `createServer` options for `limits`; Node checks the timeouts every `connectionsCheckingInterval`. */
export function serverOptions(limits: ServerLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Check often enough that a timeout is enforced close to its value (Node's default is 30 s).
    connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 2))),
  };
}

/** Applies what cannot be passed to `createServer`. */
export function applyServerLimits(server: Server, limits: ServerLimits): Server {
  server.maxConnections = limits.maxConnections;
  return server;
}

function whole(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new FwFailure('bad_config', `${name} must be a whole number ≥ 1, got "${raw}".`, { suggestions: [`unset ${name} for the default (${fallback})`] });
  return value;
}
