import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, repoRoot } from '../../e2e/support/app.ts';
import { generateArtifacts } from './generate.ts';

const apiModule = 'src/fw/_generated/api.ts';

const manifest = {
  fwProtocol: '1.0',
  language: 'java',
  service: { name: 'tickets', transport: 'http', baseUrl: 'http://127.0.0.1:8787' },
  entries: [
    {
      name: 'createTicket',
      kind: 'command',
      argsSchema: {
        type: 'object',
        properties: { subject: { type: 'string', minLength: 1 }, priority: { enum: ['low', 'normal', 'high'] } },
        required: ['subject'],
      },
      resultSchema: {
        type: 'object',
        properties: { id: { type: 'string' }, status: { enum: ['open', 'closed'] } },
        required: ['id', 'status'],
      },
    },
    { name: 'listTickets', kind: 'query' },
  ],
};

const apps: Array<{ remove(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.remove()));
});

async function app(files: Record<string, string>): Promise<string> {
  // Inside the repo: the template's own tests import vitest, which resolves from this checkout.
  const created = await createTestApp('minimal-web', files, { insideRepo: true });
  apps.push(created);
  return created.dir;
}

function tsc(dir: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', path.join(dir, 'tsconfig.json')], { cwd: dir });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describe('the external section of the generated api.ts', () => {
  it('is one empty line without external services', async () => {
    const dir = await app({});
    await generateArtifacts({ root: dir });
    const module = await readFile(path.join(dir, apiModule), 'utf8');
    expect(module).toContain("import type { EntryRef } from 'fwjs/client';\n");
    expect(module).toContain("  liveQueries: {\n    findNotes: { kind: 'liveQuery', name: 'findNotes', reads: ['notes'], writes: [] } as EntryRef<'liveQuery', typeof findNotes>,\n    liveNotes: { kind: 'liveQuery', name: 'liveNotes', reads: ['notes'], writes: [] } as EntryRef<'liveQuery', typeof liveNotes>,\n  },\n  external: {},\n} as const;\n");
  });

  it('types the entries of fw.manifest.json by their argsSchema and resultSchema, and typechecks in the template app', async () => {
    const dir = await app({
      'fw.manifest.json': JSON.stringify(manifest, null, 2),
      'src/usage.ts': [
        "import { createClient } from 'fwjs/client';",
        "import { api } from './fw/_generated/api.ts';",
        "const client = createClient({ apiUrl: 'http://127.0.0.1:3100', api });",
        "export const created = client.externalCommand('tickets.createTicket', { subject: 'x' });",
        "export const urgent = client.externalCommand('tickets.createTicket', { subject: 'x', priority: 'high' });",
        'export const listed = client.externalQuery(api.external.tickets.queries.listTickets, {});',
        '// @ts-expect-error subject is required',
        "export const missing = client.externalCommand('tickets.createTicket', {});",
        '// @ts-expect-error priority is low, normal or high',
        "export const badPriority = client.externalCommand('tickets.createTicket', { subject: 'x', priority: 'urgent' });",
        '// @ts-expect-error no such external command',
        "export const unknown = client.externalCommand('tickets.closeTicket', {});",
        "export const note = client.command('createNote', { title: 'hello' });",
        '// The resultSchema types the answer.',
        "export const id: Promise<string> = created.then((ticket) => ticket.id);",
        "export const open: Promise<boolean> = created.then((ticket) => ticket.status === 'open');",
        '// @ts-expect-error the result has no such field',
        'export const nope = created.then((ticket) => ticket.owner);',
        '// No resultSchema: unknown, narrowed by the caller.',
        '// @ts-expect-error unknown has no fields',
        'export const untyped = listed.then((tickets) => tickets.length);',
      ].join('\n'),
    });
    const { diagnostics } = await generateArtifacts({ root: dir });
    expect(diagnostics).toEqual([]);
    const module = await readFile(path.join(dir, apiModule), 'utf8');
    expect(module).toContain("import type { EntryRef, ExternalRef } from 'fwjs/client';\n");
    expect(module).toContain(
      [
        '  external: {',
        '    tickets: {',
        '      commands: {',
        "        createTicket: { kind: 'command', service: 'tickets', name: 'createTicket', qualifiedName: 'tickets.createTicket' } as ExternalRef<'command', { subject: string; priority?: 'low' | 'normal' | 'high' }, { id: string; status: 'open' | 'closed' }>,",
        '      },',
        '      queries: {',
        "        listTickets: { kind: 'query', service: 'tickets', name: 'listTickets', qualifiedName: 'tickets.listTickets' } as ExternalRef<'query', Record<string, unknown>, unknown>,",
        '      },',
        '    },',
        '  },',
        '} as const;',
      ].join('\n'),
    );

    const checked = await tsc(dir);
    expect(checked.out).toBe('');
    expect(checked.code).toBe(0);
  });
});
