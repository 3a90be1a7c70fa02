import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Clock } from '../core/clock.ts';
import type { Auth } from '../core/entry-types.ts';
import { type Diagnostic, FwError } from '../core/errors.ts';
import type { LiveHub } from '../live/hub.ts';
import { keptText, SseConnection } from '../live/sse-connection.ts';
import { parseJsonBody, parseJsonText, readBody } from './body.ts';
import { endStreamAtExpiry, type StreamSubscription } from './live-expiry.ts';

export interface LiveRouteContext {
  hub: LiveHub;
  auth: Auth;
  /** When the caller's token stops being accepted (epoch ms): the stream ends then, see live-expiry.ts. */
  expiresAt?: number;
  /** The clock `expiresAt` is on (the authenticator's). */
  clock?: Clock;
  traceId: string;
  bodyLimit: number;
  /** Headers every response carries (CORS, trace id). */
  headers: Record<string, string>;
  /** The client's address (client-address.ts), asked for an anonymous caller only. */
  clientAddress(): string;
}

/**
 * `GET /live/:name?args=<json>`: one subscription per stream. Everything that can fail before the
 * first event (args, policy, limits, the first run) answers as a JSON error instead of a stream.
 */
export async function servePerNameStream(req: IncomingMessage, res: ServerResponse, name: string, context: LiveRouteContext): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const args = parseArgsParameter(url.searchParams.get('args'));
  const lastRevision = parseRevision(req.headers['last-event-id'] ?? url.searchParams.get('lastRevision'), req.headers['last-event-id'] ? 'headers.last-event-id' : 'query.lastRevision');
  const connection = new SseConnection(connectionId(), req, res);
  const outcome = await context.hub.subscribe({
    connection,
    name,
    args,
    auth: context.auth,
    traceId: context.traceId,
    exclusive: true,
    clientAddress: anonymousAddress(context),
    ...(lastRevision === undefined ? {} : { lastRevision }),
  });
  if (!outcome.ok) {
    connection.end();
    throw outcome.error;
  }
  connection.open(context.headers);
  if (context.expiresAt !== undefined) endStreamAtExpiry(connection, context.expiresAt, context.traceId, [{ id: outcome.subscriptionId }], context.clock);
}

const subscriptionsBody = z
  .object({
    subscriptions: z
      .array(
        z
          .object({
            key: z.string().min(1).max(64),
            name: z.string().min(1).max(200),
            args: z.unknown().optional(),
            lastRevision: z.number().int().nonnegative().optional(),
          })
          .strict(),
      )
      .min(1),
  })
  .strict();

/**
 * `POST /live`: many subscriptions on one stream. The body is checked as a whole first; after the
 * stream opens, a subscription that cannot start gets a fatal `error` event and the others go on.
 */
export async function serveMultiplexedStream(req: IncomingMessage, res: ServerResponse, context: LiveRouteContext): Promise<void> {
  const parsed = parseJsonBody(await readBody(req, context.bodyLimit), req.headers['content-type']);
  const result = subscriptionsBody.safeParse(parsed);
  if (!result.success) {
    const diagnostics: Diagnostic[] = result.error.issues.map((issue) => ({
      path: issue.path.map(String).join('.') || 'body',
      message: issue.message,
      code: issue.code,
    }));
    throw new FwError('validation_failed', `Invalid live subscriptions: ${diagnostics.map((d) => `${d.path}: ${d.message}`).join('; ')}`, {
      diagnostics: [...diagnostics, { path: 'body', code: 'expected_shape', message: '{"subscriptions": [{"key", "name", "args"?, "lastRevision"?}]}' }],
    });
  }
  const { subscriptions } = result.data;
  const seen = new Set<string>();
  subscriptions.forEach(({ key }, index) => {
    if (seen.has(key)) {
      throw new FwError('validation_failed', `Subscription key "${key}" appears twice.`, {
        diagnostics: [{ path: `subscriptions.${index}.key`, code: 'duplicate_key', message: 'Keys must be unique in one request.' }],
      });
    }
    seen.add(key);
  });
  const { maxSubscriptionsPerConnection } = context.hub.limits;
  if (subscriptions.length > maxSubscriptionsPerConnection) {
    throw new FwError(
      'too_many_subscriptions',
      `${subscriptions.length} subscriptions on one connection; the limit is ${maxSubscriptionsPerConnection}.`,
      { diagnostics: [{ path: 'subscriptions', code: 'too_many', message: `At most ${maxSubscriptionsPerConnection}.` }] },
    );
  }
  context.hub.checkCapacity(context.auth, subscriptions.length, anonymousAddress(context));

  const connection = new SseConnection(connectionId(), req, res);
  connection.open(context.headers);
  context.hub.attach(connection);
  const started: StreamSubscription[] = [];
  if (context.expiresAt !== undefined) endStreamAtExpiry(connection, context.expiresAt, context.traceId, started, context.clock);
  await Promise.all(
    subscriptions.map(async (subscription) => {
      const outcome = await context.hub.subscribe({
        connection,
        key: subscription.key,
        name: subscription.name,
        args: subscription.args ?? {},
        auth: context.auth,
        traceId: context.traceId,
        clientAddress: anonymousAddress(context),
        ...(subscription.lastRevision === undefined ? {} : { lastRevision: subscription.lastRevision }),
      });
      if (outcome.ok) {
        started.push({ id: outcome.subscriptionId, key: subscription.key });
      } else {
        context.hub.refuse(connection, subscription.key, outcome.error, context.traceId);
      }
    }),
  );
}

/**
 * The address by which an anonymous caller is counted against the live limits: the socket's peer, or
 * behind FW_TRUST_PROXY's proxies the client they saw (docs/live.md). A signed-in caller is counted as
 * its user, so its address is not asked for (node keeps a looked-up peer on the socket for the
 * stream's life).
 */
function anonymousAddress(context: LiveRouteContext): string | undefined {
  return context.auth.userId ? undefined : context.clientAddress();
}

function parseArgsParameter(raw: string | null): unknown {
  if (raw === null || raw === '') return {};
  return parseJsonText(raw, 'query.args');
}

function parseRevision(raw: string | string[] | null | undefined, path: string): number | undefined {
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || value === null || value === '') return undefined;
  if (!/^\d{1,16}$/.test(value) || Number(value) > Number.MAX_SAFE_INTEGER) {
    throw new FwError('validation_failed', `${path} must be a revision (a whole number ≥ 0), got "${value.slice(0, 40)}".`, {
      diagnostics: [{ path, code: 'invalid_revision', message: 'Send the revision of the last snapshot you received.' }],
    });
  }
  return Number(value);
}

function connectionId(): string {
  return keptText(`conn_${randomBytes(6).toString('base64url')}`);
}
