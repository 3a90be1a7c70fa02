import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthResult } from '../auth/authenticator.ts';

/** An answer for the handler to send. */
export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/**
 * Whom a route needs to know before it runs, settled by the handler once, before dispatch:
 * - `none`: nobody (health; live routes when the runtime has no live hub, which answer 404).
 * - `caller`: the caller's identity (anonymous when none is sent; a bad credential is a 401 whatever the route).
 * - `admin`: the admin token (`x-fw-admin-token`), or dev mode.
 * - `admin-or-caller`: dev mode or the admin token, else the caller's identity.
 */
export type RouteAuth = 'none' | 'caller' | 'admin' | 'admin-or-caller';

/** One request on its way into a route, after its authentication. */
export interface RouteCall {
  req: IncomingMessage;
  res: ServerResponse;
  /** The path params, raw (percent escapes as sent): the route decodes them as it needs. */
  params: Record<string, string>;
  traceId: string;
  /** The caller, for `caller` routes and `admin-or-caller` ones reached without admin rights. */
  caller?: AuthResult;
  /** Whether an `admin` or `admin-or-caller` route was reached with admin rights (dev mode or the token). */
  admin: boolean;
  /** Who sent it: the socket's peer, or the client FW_TRUST_PROXY's proxies saw (client-address.ts). Asked for only where used. */
  clientAddress(): string;
}

/** A route of the table: what it needs and what it serves. */
export interface Route {
  auth: RouteAuth;
  /** The route as spans and metrics name it: known names as they are, anything a caller made up as a placeholder (bounded cardinality). */
  template(params: Record<string, string>): string;
  /** Headers a 401 of this route carries (MCP's `WWW-Authenticate`), a bad credential's included. */
  challenge?(req: IncomingMessage): Record<string, string>;
  /** Serves the call; `'streamed'` when the route wrote the response itself (live streams, agent chats). */
  serve(call: RouteCall): Promise<Reply | 'streamed'>;
}

/** The caller of a route that asked for one (`caller`, or `admin-or-caller` without admin rights). */
export function callerOf(call: RouteCall): AuthResult {
  if (!call.caller) throw new Error('fw: a route that needs the caller was reached without one.');
  return call.caller;
}
