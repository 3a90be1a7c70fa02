import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, runFw, type RunningFw, startFw } from './support/app.ts';
import { until } from './support/until.ts';

const TENANT = '00000000-0000-4000-8000-000000000001';
const devAuth = { 'x-fw-user-id': 'user-1', 'x-fw-tenant-id': TENANT, 'x-fw-role': 'member' };

/** Diagnostics as `path @ file:line:column code`, sorted: what every surface must show for the same change. */
const placed = (diagnostics: Array<{ path: string; file?: string; line?: number; column?: number; code: string; hint?: string }>) =>
  diagnostics.map((d) => `${d.path} @ ${d.file}:${d.line}:${d.column} ${d.code}${d.hint ? ' +fix' : ''}`).sort();

// A destructive schema edit under a running `fw dev` (#30.1): every surface names each change, its
// place in the schema file and its fix; the app is held rather than served against a database that
// disagrees; and `fw db` works beside fw dev, through it (docs/migrations.md's four commands, each with
// --json: status, migrate --dry-run, a plain migrate that refuses, migrate --accept-data-loss).
describe('schema changes fw will not apply, while fw dev runs', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw;
  let url: string;
  let original: string;
  const schemaFile = () => path.join(app.dir, 'src/fw/schema.ts');
  const fw = async (args: string[]) => {
    const r = await runFw(args, { cwd: app.dir });
    return { code: r.code, body: JSON.parse(r.stdout), stderr: r.stderr };
  };

  beforeAll(async () => {
    app = await createTestApp();
    dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir });
    url = dev.ready.serverUrl as string;
    original = await readFile(schemaFile(), 'utf8');
  }, 120_000);
  afterAll(async () => {
    await dev?.stop();
    await app?.remove();
  });

  it('holds the app with schema_blocked, shows every change with its line and fix, and migrates through fw dev', async () => {
    expect((await post(url, '/commands/createNote', { title: 'kept', body: 'to be dropped' }, devAuth)).status).toBe(200);

    // Drop a column and change another's type (text → integer).
    const edited = original.replace('      body: t.text().nullable(),\n', '').replace('author_id: t.text(),', 'author_id: t.integer(),');
    expect(edited).not.toBe(original);
    await writeFile(schemaFile(), edited);
    const expected = ['schema.notes.author_id @ src/fw/schema.ts:9:7 column_type_change +fix', 'schema.notes.body @ src/fw/schema.ts:5:3 drop_column +fix'];

    // Requests: a clear refusal with both changes, not the old app writing the "dropped" column.
    // Polled with a read: a write before the reload lands would still (rightly) succeed.
    await until(async () => (await post(url, '/queries/listNotes', {}, devAuth)).status === 503, 'fw dev to hold the app');
    const held = await post(url, '/commands/createNote', { title: 'while held', body: 'x' }, devAuth);
    expect(held.status).toBe(503);
    expect(held.body.error.code).toBe('schema_blocked');
    expect(held.body.error.message).toContain('fw db migrate --accept-data-loss');
    expect(placed(held.body.error.diagnostics)).toEqual(expected);
    expect((await post(url, '/queries/listNotes', {}, devAuth)).body.error.code).toBe('schema_blocked');
    expect((await fetch(new URL('/health', url))).status).toBe(200);

    // The terminal: both changes, at the schema file's lines, with their fixes.
    await until(async () => dev.stderr().includes('schema.notes.author_id'), 'the terminal report');
    expect(dev.stderr()).toContain('schema.notes.body (src/fw/schema.ts:5:3): Column notes.body exists in the database but is no longer declared');
    expect(dev.stderr()).toContain('schema.notes.author_id (src/fw/schema.ts:9:7): Column notes.author_id is text in the database but declared as integer');
    expect(dev.stderr()).toMatch(/hint: Keep notes\.author_id as text/);

    // fw db status, answered by fw dev against the schema on disk.
    const status = await fw(['db', 'status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.body).toMatchObject({ ok: true, via: url, held: true, pending: [] });
    expect(placed(status.body.blocked)).toEqual(expected);

    // --dry-run prints the plan; a plain migrate refuses with the changes (not database_locked).
    const plan = await fw(['db', 'migrate', '--dry-run', '--json']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.body).toMatchObject({ ok: true, dryRun: true, changes: [], via: url });
    expect(placed(plan.body.blocked)).toEqual(expected);
    const refused = await fw(['db', 'migrate', '--json']);
    expect(refused.code).not.toBe(0);
    expect(refused.body.kind).toBe('migration_blocked');
    expect(placed(refused.body.diagnostics)).toEqual(expected);

    // Undo the type change, accept the drop: applied by fw dev, which then serves the new schema.
    await writeFile(schemaFile(), original.replace('      body: t.text().nullable(),\n', ''));
    await until(async () => (await fw(['db', 'status', '--json'])).body.blocked.length === 1, 'the reload of the undone type change');
    const dryDrop = await fw(['db', 'migrate', '--dry-run', '--accept-data-loss', '--json']);
    expect(dryDrop.body).toMatchObject({ ok: true, dryRun: true, blocked: [], changes: [{ kind: 'drop_column', table: 'notes', column: 'body', destructive: true }] });
    const applied = await fw(['db', 'migrate', '--accept-data-loss', '--json']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.body).toMatchObject({ ok: true, via: url, applied: [{ kind: 'drop_column', column: 'body' }], migrationId: expect.any(Number) });

    const listed = await post(url, '/queries/listNotes', {}, devAuth);
    expect(listed.status).toBe(200);
    expect(listed.body.result.map((n: Record<string, unknown>) => [n.title, 'body' in n])).toEqual([['kept', false]]);
    const after = await fw(['db', 'status', '--json']);
    expect(after.body).toMatchObject({ ok: true, via: url, pending: [], blocked: [] });
    expect(after.body.held).toBeUndefined();
  }, 180_000);
});
