import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toFwError } from './errors.ts';
import { publicError } from './public-error.ts';

// Real errors from a real PostgreSQL (PGlite): their SQLSTATE, message and column as the drivers give them.
describe('PostgreSQL errors as fw errors', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = new PGlite();
    await db.exec(`create table tickets (id int primary key, title text not null, priority int check (priority between 1 and 5), code varchar(3))`);
  });
  afterAll(() => db?.close());

  const failure = (text: string, params: unknown[] = []) =>
    db.query(text, params).then(
      () => {
        throw new Error(`expected ${text} to fail`);
      },
      (error: unknown) => error,
    );

  it('maps data errors (class 22) to 400 validation_failed, pointing at the argument that holds the quoted value', async () => {
    const args = { filter: { id: 'not-a-uuid' }, other: 'x' };
    const error = toFwError(await failure('select $1::uuid', ['not-a-uuid']), args);
    expect([error.code, error.status, error.diagnostics]).toEqual(['validation_failed', 400, [expect.objectContaining({ path: 'args.filter.id', code: 'sqlstate_22P02' })]]);
    expect(error.message).toContain('invalid input syntax for type uuid: "not-a-uuid"');

    const outOfRange = toFwError(await failure('select $1::int', ['99999999999']), { n: 99_999_999_999 });
    expect(outOfRange.diagnostics[0]).toMatchObject({ path: 'args.n', code: 'sqlstate_22003' });
    const badDate = toFwError(await failure('select $1::date', ['2024-13-45']), { day: '2024-13-45' });
    expect(badDate.diagnostics[0]).toMatchObject({ path: 'args.day', code: 'sqlstate_22008' });
    const tooLong = toFwError(await failure('insert into tickets (id, title, code) values (1, $1, $2)', ['t', 'ABCD']), { code: 'ABCD' });
    expect([tooLong.status, tooLong.diagnostics[0]]).toEqual([400, expect.objectContaining({ path: 'args', code: 'sqlstate_22001' })]);
  });

  it('answers a data error outside dev mode with its path and SQLSTATE, never the value the server quotes', async () => {
    // What SQL injected into a handler can read, cast to a number, comes back quoted in the message.
    const error = toFwError(await failure("select (select 'secret from another session')::int"), { q: 'x' });
    expect(publicError(error, 'trace-1', false)).toEqual({
      code: 'validation_failed',
      message: 'A value does not fit the database.',
      diagnostics: [{ path: 'args', code: 'sqlstate_22P02', message: 'A value does not fit its type or size.', hint: expect.any(String) }],
    });
    expect(JSON.stringify(publicError(error, 'trace-1', true))).toContain('secret from another session');
  });

  it('keeps the path at args when the value is not one argument’s (two hold it, or none)', async () => {
    const error = await failure('select $1::uuid', ['dup']);
    expect(toFwError(error, { a: 'dup', b: 'dup' }).diagnostics[0]!.path).toBe('args');
    expect(toFwError(error, { a: 'other' }).diagnostics[0]!.path).toBe('args');
    expect(toFwError(error).diagnostics[0]!.path).toBe('args');
  });

  it('maps a null in a not-null column (23502) and a failed check (23514) to 400, naming the column or constraint', async () => {
    const missing = toFwError(await failure('insert into tickets (id, title) values (2, $1)', [null]), { title: null });
    expect([missing.code, missing.diagnostics[0]]).toEqual(['validation_failed', expect.objectContaining({ path: 'args.title', code: 'sqlstate_23502' })]);
    expect(missing.message).toContain('(column "title")');
    const unchecked = toFwError(await failure('insert into tickets (id, title, priority) values (3, $1, $2)', ['t', 9]), { priority: 9 });
    expect([unchecked.code, unchecked.diagnostics[0]?.code]).toEqual(['validation_failed', 'sqlstate_23514']);
    expect(unchecked.message).toContain('(constraint "tickets_priority_check")');
  });

  it('leaves other database errors alone: unique is a conflict, an unknown table is internal', async () => {
    await db.query(`insert into tickets (id, title) values (10, 't')`);
    expect(toFwError(await failure(`insert into tickets (id, title) values (10, 't')`)).code).toBe('conflict');
    expect(toFwError(await failure('select * from no_such_table')).code).toBe('internal');
  });
});
