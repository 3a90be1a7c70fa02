import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FwError } from '../runtime/core/errors.ts';
import { schemaBlockedFailure } from './dev-server/schema-hold.ts';
import { overlayError } from './overlay-error.ts';

const schema = `import { defineSchema, t, table } from 'fwjs';

export default defineSchema({
  tickets: table({
    id: t.uuid().primaryKey().defaultRandom(),
    requester: t.text(),
  }),
});
`;

describe('overlayError', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'fw-overlay-'));
    await mkdir(path.join(root, 'src/fw'), { recursive: true });
    await writeFile(path.join(root, 'src/fw/schema.ts'), schema);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('shows every blocked change with its place and fix, and links the schema file at the first one', () => {
    const failure = schemaBlockedFailure(
      root,
      [
        { path: 'schema.tickets.requester', code: 'column_type_change', message: 'Column tickets.requester is integer in the database but declared as text.', hint: 'Keep it integer.' },
        { path: 'schema.tickets.priority', code: 'drop_column', message: 'Column tickets.priority exists in the database but is no longer declared.', hint: 'Declare it again.' },
      ],
      true,
    );
    const err = overlayError(root, failure);
    const file = path.join(root, 'src/fw/schema.ts');
    expect(err).toMatchObject({ plugin: 'fw', id: file, loc: { file, line: 6, column: 5 } });
    expect(err.message.split('\n').slice(0, 5)).toEqual([
      'The schema has 2 changes fw will not apply automatically; nothing was applied. Until they are resolved, fw dev answers every entry with schema_blocked instead of running code against a database that disagrees with it.',
      '  • schema.tickets.requester (src/fw/schema.ts:6:5): Column tickets.requester is integer in the database but declared as text.',
      '    fix: Keep it integer.',
      '  • schema.tickets.priority (src/fw/schema.ts:4:3): Column tickets.priority exists in the database but is no longer declared.',
      '    fix: Declare it again.',
    ]);
    expect(err.message).toContain('fw db migrate --accept-data-loss');
  });

  it('shows a request failure with its entry and trace id, linked at the source line it names', () => {
    const error = new FwError('internal', 'command createNote: column "stauts" does not exist', {
      diagnostics: [{ path: 'src/commands/createNote.ts:12:7', code: 'entry_failed', message: 'command createNote failed: column "stauts" does not exist' }],
    });
    const file = path.join(root, 'src/commands/createNote.ts');
    expect(overlayError(root, error, 'abc123')).toEqual({
      plugin: 'fw',
      stack: '',
      message: 'internal [trace abc123]: command createNote: column "stauts" does not exist\n  • src/commands/createNote.ts:12:7: command createNote failed: column "stauts" does not exist',
      id: file,
      loc: { file, line: 12, column: 7 },
    });
  });
});
