import type { IncomingHttpHeaders } from 'node:http';
import type { Auth } from '../core/entry-types.ts';

// What authenticating one request gives: below authenticator.ts, which chooses among the ways
// (dev headers, JWT in jwt.ts), so each way can name it without importing the chooser.

/** Who a request speaks for, and until when (epoch ms) this runtime accepts its credential. */
export interface AuthResult {
  auth: Auth;
  /** Set for tokens: `exp` plus the clock tolerance. Live streams opened with the token end then. */
  expiresAt?: number;
}

/** Identifies the caller of one request from its headers; rejects with FwError `unauthenticated`. */
export type Authenticator = (headers: IncomingHttpHeaders) => Promise<AuthResult>;
