/**
 * Before any load: every variant must answer both entries correctly and with the same data, and the
 * two that claim fw's guarantees must refuse what fw refuses. A benchmark of wrong answers is worthless.
 */
import { BENCH_TENANT, BENCH_USER, benchRequests, devHeaders, LIST_LIMIT, OTHER_TENANT } from './app.ts';
import type { ServerHandle } from './server-handle.ts';

interface Note {
  id: string;
  title: string;
  body: string | null;
  author_id: string;
  tenant_id: string;
  created_at: string;
}

export async function checkServers(servers: readonly ServerHandle[]): Promise<void> {
  // All lists first: the createNote checks below add rows.
  const lists = new Map<string, string>();
  for (const server of servers) {
    const notes = (await expectOk(server, benchRequests.listNotes)) as Note[];
    const who = label(server);
    if (!Array.isArray(notes) || notes.length !== LIST_LIMIT) throw new Error(`${who}: listNotes returned ${describe(notes)}, expected ${LIST_LIMIT} notes.`);
    if (notes.some((note) => note.tenant_id !== BENCH_TENANT)) throw new Error(`${who}: listNotes returned another tenant's notes.`);
    const times = notes.map((note) => Date.parse(note.created_at));
    if (times.some((time, i) => i > 0 && time > times[i - 1]!)) throw new Error(`${who}: listNotes is not newest first.`);
    lists.set(server.spec.variant, JSON.stringify(notes.map((note) => [Object.keys(note).sort(), note.title, note.created_at])));
  }
  if (new Set(lists.values()).size !== 1) throw new Error(`listNotes differs between variants: ${[...lists.keys()].join(', ')}.`);

  for (const server of servers) {
    const note = (await expectOk(server, benchRequests.createNote)) as Note;
    const expected = JSON.parse(benchRequests.createNote.body).args as { title: string; body: string };
    if (note?.title !== expected.title || note.body !== expected.body || note.author_id !== BENCH_USER || note.tenant_id !== BENCH_TENANT) {
      throw new Error(`${label(server)}: createNote returned ${describe(note)}.`);
    }
    if (server.spec.variant === 'bare') continue;
    await expectStatus(server, benchRequests.createNote.path, devHeaders, JSON.stringify({ args: { title: '' } }), 400);
    await expectStatus(server, benchRequests.createNote.path, devHeaders, JSON.stringify({ args: { title: 'x', extra: 1 } }), 400);
    await expectStatus(server, benchRequests.createNote.path, devHeaders, '{not json', 400);
    const { 'x-fw-user-id': _, ...anonymous } = devHeaders;
    await expectStatus(server, benchRequests.listNotes.path, { ...anonymous, 'x-fw-tenant-id': BENCH_TENANT }, '{}', 401);
    await expectStatus(server, benchRequests.listNotes.path, { ...devHeaders, 'x-fw-tenant-id': 'not-a-uuid' }, '{}', 401);
    // Row-level security, not a where clause, keeps the other tenant's notes apart.
    const others = (await expectOk(server, benchRequests.listNotes, { ...devHeaders, 'x-fw-tenant-id': OTHER_TENANT })) as Note[];
    if (others.some((n) => n.tenant_id !== OTHER_TENANT)) throw new Error(`${label(server)}: tenant isolation failed.`);
  }
}

async function expectOk(server: ServerHandle, request: { path: string; body: string }, headers: Record<string, string> = devHeaders): Promise<unknown> {
  const response = await fetch(server.url + request.path, { method: 'POST', headers, body: request.body });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${label(server)}: ${request.path} answered ${response.status}: ${text.slice(0, 500)}`);
  const envelope = JSON.parse(text) as { ok?: boolean; result?: unknown };
  if (envelope.ok !== true) throw new Error(`${label(server)}: ${request.path} answered ${text.slice(0, 500)}`);
  return envelope.result;
}

async function expectStatus(server: ServerHandle, path: string, headers: Record<string, string>, body: string, status: number) {
  const response = await fetch(server.url + path, { method: 'POST', headers, body });
  const text = await response.text();
  if (response.status !== status) {
    throw new Error(`${label(server)}: expected ${status} from ${path} with ${body}, got ${response.status}: ${text.slice(0, 300)}`);
  }
}

const label = (server: ServerHandle) => `${server.spec.variant} on ${server.spec.database}`;
const describe = (value: unknown) => JSON.stringify(value)?.slice(0, 300) ?? String(value);
