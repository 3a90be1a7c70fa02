/**
 * (c) The floor: `node:http`, JSON.parse, one parameterised statement straight on the driver
 * (`pool.query` / `pglite.query`). No transaction, no role switch (the owner bypasses row-level
 * security, so the tenant from the header is an explicit `where`), no validation. Not something to ship: it is here to
 * show what the database and HTTP alone cost.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createDatabase } from '../../../runtime/db/database.ts';
import { LIST_LIMIT, prepareBenchDatabase } from '../app.ts';
import type { CreateVariant } from './types.ts';

const listSql = `select * from notes where tenant_id = $1 order by created_at desc, id desc limit ${LIST_LIMIT}`;
const insertSql = 'insert into notes (title, body, author_id, tenant_id) values ($1, $2, $3, $4) returning *';

type Run = (sql: string, params: unknown[]) => Promise<{ rows: unknown[] }>;

export const createBareVariant: CreateVariant = async (spec, counter) => {
  let run: Run;
  let close: () => Promise<void>;
  if (spec.database === 'postgres') {
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: spec.url!, max: spec.poolSize });
    pool.on('error', (error) => console.error(`idle connection error: ${error.message}`));
    run = (sql, params) => pool.query(sql, params);
    close = () => pool.end();
  } else {
    // createDatabase prepares the in-memory database like the other variants'; the statements then go
    // to the PGlite instance directly, which the call counter captured.
    const fwDb = await createDatabase({ dataDir: 'memory://' });
    await prepareBenchDatabase(fwDb);
    const pglite = counter.pglite;
    if (!pglite) throw new Error('bench/http: the PGlite instance was not captured.');
    run = (sql, params) => pglite.query(sql, params);
    close = () => fwDb.close();
  }

  return {
    listener(req, res) {
      handle(req, run).then(
        (result) => reply(res, 200, { ok: true, result }),
        (error: unknown) => reply(res, 500, { ok: false, error: { code: 'internal', message: (error as Error).message } }),
      );
    },
    close,
  };
};

async function handle(req: IncomingMessage, run: Run): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  const tenantId = req.headers['x-fw-tenant-id'];
  if (req.url === '/queries/listNotes') return (await run(listSql, [tenantId])).rows;
  if (req.url === '/commands/createNote') {
    const { args } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { args: { title: string; body?: string } };
    return (await run(insertSql, [args.title, args.body ?? null, req.headers['x-fw-user-id'], tenantId])).rows[0];
  }
  throw new Error(`Nothing at ${req.url}`);
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(payload)) });
  res.end(payload);
}
