import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locateSchemaDiagnostics } from './schema-locations.ts';

const source = `import { defineSchema, t, table } from 'fwjs';

export default defineSchema({
  tickets: table(
    {
      id: t.uuid().primaryKey().defaultRandom(),
      requester: t.text(),
      'due date': t.timestamptz().nullable(),
    },
    { indexes: [{ columns: ['requester'] }] },
  ),
});
`;

describe('locateSchemaDiagnostics', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'fw-schema-loc-'));
    await mkdir(path.join(root, 'src/fw'), { recursive: true });
    await writeFile(path.join(root, 'src/fw/schema.ts'), source);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('points a column at its line, a dropped column at its table, indexes at the option, a dropped table at defineSchema', () => {
    const d = (p: string) => ({ path: p, code: 'x', message: 'm' });
    const located = locateSchemaDiagnostics(root, [d('schema.tickets.requester'), d('schema.tickets.due date'), d('schema.tickets.gone'), d('schema.tickets.indexes'), d('schema.archived'), d('args.x')]);
    expect(located.map((l) => ('line' in l ? `${l.file}:${l.line}:${l.column}` : null))).toEqual([
      'src/fw/schema.ts:7:7',
      'src/fw/schema.ts:8:7',
      'src/fw/schema.ts:4:3',
      'src/fw/schema.ts:10:7',
      'src/fw/schema.ts:3:16',
      null,
    ]);
  });
});
