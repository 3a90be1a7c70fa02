import { describe, expect, it } from 'vitest';
import { type AppFacts, causesOf } from './repair-causes.ts';
import type { TestFailureRecord } from '../test/test-reporter.ts';

// The rules e2e/repair.test.ts does not reach through a real run (it covers args, policy, missing
// table and FwProvider end to end).
const facts: AppFacts = {
  entries: [
    { name: 'createNote', kind: 'command', file: 'src/commands/createNote.ts', policy: 'user' },
    { name: 'listNotes', kind: 'query', file: 'src/queries/listNotes.ts', policy: 'user' },
    { name: 'liveNotes', kind: 'liveQuery', file: 'src/queries/liveNotes.ts', policy: 'user' },
  ],
  tables: ['notes'],
  staleEntries: [],
};

const failure = (f: Partial<TestFailureRecord>): TestFailureRecord => ({ file: 'tests/a.test.ts', test: 'a test', message: '', stack: '', ...f });
const kinds = (f: Partial<TestFailureRecord>, app: AppFacts = facts) => causesOf(failure(f), app).map((c) => [c.kind, c.entry]);

describe('causesOf', () => {
  it('reads row-level security behind forbidden as a database cause, not a policy', () => {
    const causes = causesOf(failure({ code: 'forbidden', message: 'The database refused the operation for this caller (row-level security or privileges).' }), facts);
    expect(causes).toEqual([expect.objectContaining({ kind: 'database', hint: expect.stringContaining('tenant') })]);
  });

  it('names the entry from the test name for unauthenticated calls', () => {
    const [cause] = causesOf(failure({ test: 'notes > listNotes needs a user', code: 'unauthenticated', message: 'Sign in to call query "listNotes".' }), facts);
    expect(cause).toMatchObject({ kind: 'policy', entry: 'listNotes', detail: expect.stringContaining('policy "user"') });
  });

  it('maps a missing entry to its file and the nearest name', () => {
    const [cause] = causesOf(failure({ code: 'not_found', message: 'No command named "createNotes".' }), facts);
    expect(cause).toMatchObject({ kind: 'entry', entry: 'createNotes', detail: expect.stringContaining('did you mean "createNote"') });
    expect(cause!.detail).toContain('src/commands/createNotes.ts');
  });

  it('adds generated drift when the entry’s generated description is stale', () => {
    expect(kinds({ test: 'createNote works', code: 'validation_failed', message: 'Invalid args' }, { ...facts, staleEntries: ['createNote'] })).toEqual([
      ['schema', 'createNote'],
      ['generated_drift', 'createNote'],
    ]);
  });

  it('reads fw codes from an assertion diff', () => {
    expect(kinds({ name: 'AssertionError', code: 'ERR_ASSERTION', message: 'expected false to be true', diff: '- "ok": true\n+ "code": "validation_failed"' })).toEqual([['schema', undefined]]);
  });

  it('puts AI approval failures before policy and schema', () => {
    expect(kinds({ code: 'forbidden', message: 'An approval in the history was not issued by this server.', diagnostics: [{ path: 'body.messages', code: 'forged_approval', message: '' }] })).toEqual([['ai', undefined]]);
    expect(kinds({ code: 'validation_failed', message: 'An approval answers no pending approval request of the messages.' })).toEqual([['ai', undefined]]);
  });

  it('tells a declared table the database lacks (migrate) from an undeclared one (declare it)', () => {
    const [declared] = causesOf(failure({ code: '42P01', message: 'relation "notes" does not exist' }), facts);
    expect(declared).toMatchObject({ kind: 'database', detail: expect.stringContaining('behind the schema'), suggestedCommand: 'fw db migrate' });
  });

  it("maps the app's own 429 (tooManyRequests) to the entry that refused, with the test clock as the way out", () => {
    const [cause] = causesOf(failure({ test: 'signIn locks out', code: 'too_many_requests', message: 'Too many wrong passwords for this email.' }), facts);
    expect(cause).toMatchObject({ kind: 'entry', hint: expect.stringContaining('fw.advanceTime()'), suggestedCommand: 'fw test' });
  });

  it('maps live-query limits and streams', () => {
    expect(kinds({ code: 'too_many_subscriptions', message: 'Too many live subscriptions.' })).toEqual([['live', undefined]]);
    expect(kinds({ test: 'liveNotes streams', message: 'GET /live/liveNotes ended' })).toEqual([['live', 'liveNotes']]);
  });

  it('flags frontend wiring around the bridge', () => {
    expect(kinds({ file: 'web/src/App.test.tsx', message: 'Failed to resolve import', stack: 'at web/src/App.tsx → ../../src/fw/_generated/api.ts' })).toEqual([['frontend_wiring', undefined]]);
  });

  it('falls back to unknown with the command that reruns the one test', () => {
    const [cause] = causesOf(failure({ test: 'suite > adds', message: 'expected 2 to be 3', stack: '    at tests/a.test.ts:3:5' }), facts);
    expect(cause).toMatchObject({ kind: 'unknown', suggestedCommand: 'fw test -- tests/a.test.ts -t "adds"', hint: expect.stringContaining('tests/a.test.ts:3:5') });
  });
});
