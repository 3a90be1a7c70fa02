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
import type { Environment } from '../../runtime/config/environment.ts';
import { configOf, type FwConfig } from '../../runtime/config/resolve-config.ts';

export interface ServerLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
}

export function serverLimits(source?: FwConfig | Environment): ServerLimits {
  const config = configOf(source);
  const requestTimeoutMs = config.get('FW_REQUEST_TIMEOUT_MS');
  return {
    // Node requires headersTimeout ≤ requestTimeout.
    headersTimeoutMs: Math.min(config.get('FW_HEADERS_TIMEOUT_MS'), requestTimeoutMs),
    requestTimeoutMs,
    keepAliveTimeoutMs: config.get('FW_KEEP_ALIVE_TIMEOUT_MS'),
    maxConnections: config.get('FW_MAX_CONNECTIONS'),
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
