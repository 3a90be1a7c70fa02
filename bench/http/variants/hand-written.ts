/**
 * (b) What a careful engineer writes by hand with `node:http` and Kysely to give the guarantees fw
 * gives: trace id, dev-header identity checks, body limit, content type, JSON envelope, zod validation,
 * and one transaction per request through fw's database layer (`createDatabase().transaction`: the
 * request login role, the app role, the transaction-bound identity claim, a statement timeout,
 * read-only for the query, the pipelined prelude and end, the session reset after a write). Same pool
 * kind and size as fw. What differs from (a) is everything above the database: routing, the entry
 * pipeline, the runtime's envelope.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { createDatabase } from '../../../runtime/db/database.ts';
import type { Auth } from '../../../runtime/core/entries.ts';
import { type BenchDatabase, createNoteArgs, LIST_LIMIT, prepareBenchDatabase, STATEMENT_TIMEOUT_MS } from '../app.ts';
import type { CreateVariant } from './types.ts';

const BODY_LIMIT = 1024 * 1024;
const traceIdPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]{7,127}$/;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const identityPattern = /^[\x21-\x7e][\x20-\x7e]{0,199}$/;
const jsonType = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

interface Route<S extends z.ZodType> {
  readOnly: boolean;
  args: S;
  run(trx: Kysely<BenchDatabase>, args: z.output<S>, auth: Auth): Promise<unknown>;
}

const route = <S extends z.ZodType>(r: Route<S>): Route<z.ZodType> => r as unknown as Route<z.ZodType>;

const routes = new Map<string, Route<z.ZodType>>([
  [
    '/queries/listNotes',
    route({
      readOnly: true,
      args: z.object({}).strict(),
      run: (trx) => trx.selectFrom('notes').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(LIST_LIMIT).execute(),
    }),
  ],
  [
    '/commands/createNote',
    route({
      readOnly: false,
      args: z.object(createNoteArgs).strict(),
      run: (trx, args, auth) =>
        trx
          .insertInto('notes')
          .values({ title: args.title, body: args.body ?? null, author_id: auth.userId! })
          .returningAll()
          .executeTakeFirstOrThrow(),
    }),
  ],
]);

export const createHandWrittenVariant: CreateVariant = async (spec) => {
  const db =
    spec.database === 'postgres' ? await createDatabase({ url: spec.url!, poolSize: spec.poolSize, statementTimeoutMs: STATEMENT_TIMEOUT_MS })
      : await createDatabase({ dataDir: 'memory://', statementTimeoutMs: STATEMENT_TIMEOUT_MS });
  // PGlite: each server process has its own in-memory database (PostgreSQL's was prepared by the orchestrator).
  if (spec.database === 'pglite') await prepareBenchDatabase(db);
  const close = () => db.close();

  async function handle(req: IncomingMessage, traceId: string): Promise<unknown> {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const target = routes.get(path);
    if (!target) throw new HttpError(404, 'not_found', `Nothing at ${path}.`);
    if (req.method !== 'POST') throw new HttpError(405, 'method_not_allowed', 'Use POST.');
    const auth = authenticate(req);
    const raw = parseEnvelope(await readBody(req), req.headers['content-type']);
    const parsed = target.args.safeParse(raw);
    if (!parsed.success) throw new HttpError(400, 'validation_failed', parsed.error.message);
    return db.transaction({ readOnly: target.readOnly, auth }, (trx) => target.run(trx as Kysely<BenchDatabase>, parsed.data, auth));
  }

  return {
    listener(req, res) {
      const inbound = req.headers['x-fw-trace-id'];
      const traceId = typeof inbound === 'string' && traceIdPattern.test(inbound) ? inbound : randomBytes(16).toString('hex');
      handle(req, traceId).then(
        (result) => reply(res, traceId, 200, { ok: true, result: result ?? null, traceId }),
        (error: unknown) => {
          const known = error instanceof HttpError;
          if (!known) console.error(error);
          const status = known ? error.status : 500;
          const code = known ? error.code : 'internal';
          reply(res, traceId, status, { ok: false, error: { code, message: (error as Error).message, diagnostics: [] }, traceId });
        },
      );
    },
    close,
  };
};

function authenticate(req: IncomingMessage): Auth {
  const userId = req.headers['x-fw-user-id'];
  const tenantId = req.headers['x-fw-tenant-id'];
  const role = req.headers['x-fw-role'];
  if (typeof userId !== 'string' || !identityPattern.test(userId)) {
    throw new HttpError(401, 'unauthenticated', 'Send a valid x-fw-user-id.');
  }
  if (tenantId !== undefined && (typeof tenantId !== 'string' || !uuidPattern.test(tenantId))) {
    throw new HttpError(401, 'unauthenticated', 'x-fw-tenant-id must be a UUID.');
  }
  if (role !== undefined && (typeof role !== 'string' || !identityPattern.test(role))) {
    throw new HttpError(401, 'unauthenticated', 'x-fw-role must be printable ASCII.');
  }
  return { kind: 'user', userId, tenantId: tenantId?.toLowerCase() ?? null, role: role ?? null };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  if (Number(req.headers['content-length']) > BODY_LIMIT) throw new HttpError(413, 'payload_too_large', 'Body too large.');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) throw new HttpError(413, 'payload_too_large', 'Body too large.');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

function parseEnvelope(body: Buffer, contentType: string | undefined): unknown {
  if (body.length === 0) return {};
  if (contentType === undefined || !jsonType.test(contentType)) {
    throw new HttpError(415, 'unsupported_media_type', 'Send JSON.');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new HttpError(400, 'bad_json', 'The body is not valid JSON.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.keys(parsed).some((k) => k !== 'args')) {
    throw new HttpError(400, 'bad_request', 'The body is {"args": {…}}.');
  }
  return (parsed as { args?: unknown }).args ?? {};
}

function reply(res: ServerResponse, traceId: string, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'x-fw-trace-id': traceId,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(payload)),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.end(payload);
}
