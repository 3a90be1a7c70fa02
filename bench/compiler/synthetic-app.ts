import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface SyntheticAppOptions {
  entries: number;
  components: number;
  /** Tables in the schema; entries spread over them. */
  tables: number;
  /** Routes of the React Router config; components spread over them. */
  routes: number;
}

export interface SyntheticApp {
  /** App-relative paths of every source file written (backend entries, schema, web/). */
  files: string[];
  /** One component file the incremental measurement edits. */
  editable: string;
}

const kinds = ['command', 'query', 'liveQuery'] as const;

/** Entry i: a command, a query or a liveQuery in turn, on table i mod tables. */
export function entryOf(i: number, tables: number): { name: string; kind: (typeof kinds)[number]; table: string } {
  const kind = kinds[i % 3]!;
  return { name: `${kind === 'command' ? 'create' : kind === 'query' ? 'list' : 'live'}Item${i}`, kind, table: `items_${i % tables}` };
}

/**
 * Writes an fw app of the given size into `dir` (which must be empty): a schema, entries that read and
 * write its tables through Kysely, and a React web/ whose components call those entries through the
 * bridge — each with a hook, most commands behind a form handler — and render each other, under
 * route objects. `node_modules/fwjs` links to this checkout. What it looks like is what an app of that
 * size would: the analysis does the same work per file as on the templates.
 */
export async function writeSyntheticApp(dir: string, repoRoot: string, options: SyntheticAppOptions): Promise<SyntheticApp> {
  const files: Record<string, string> = {};
  files['package.json'] = JSON.stringify({ name: 'synthetic', private: true, type: 'module', dependencies: { fw: '*' } }, null, 2);
  files['src/fw/schema.ts'] = schemaFile(options.tables);
  for (let i = 0; i < options.entries; i++) {
    const entry = entryOf(i, options.tables);
    files[`src/${entry.kind === 'command' ? 'commands' : 'queries'}/${entry.name}.ts`] = entryFile(entry);
  }
  files['web/src/lib/fw.ts'] = `import { createFwReact } from 'fwjs/react';
import { api } from '../../../src/fw/_generated/api.ts';

export { api };
export const { FwProvider, useCommand, useQuery, useLiveQuery } = createFwReact(api);
`;
  files['web/src/main.tsx'] = `import { createRoot } from 'react-dom/client';
import { RouterProvider, createBrowserRouter } from 'react-router';
import { routes } from './routes.tsx';
import { FwProvider } from './lib/fw.ts';

createRoot(document.getElementById('root')!).render(
  <FwProvider apiUrl="" devAuth={{ userId: 'u', tenantId: '00000000-0000-4000-8000-000000000001', role: 'member' }}>
    <RouterProvider router={createBrowserRouter(routes)} />
  </FwProvider>,
);
`;
  const perRoute = Math.ceil(options.components / options.routes);
  const routeLines: string[] = [];
  const imports: string[] = [];
  for (let r = 0; r < options.routes; r++) {
    const top = r * perRoute;
    if (top >= options.components) break;
    imports.push(`import { Component${top} } from './components/Component${top}.tsx';`);
    routeLines.push(`  { path: '/section-${r}', element: <Component${top} /> },`);
  }
  files['web/src/routes.tsx'] = `${imports.join('\n')}\n\nexport const routes = [\n${routeLines.join('\n')}\n];\n`;
  for (let c = 0; c < options.components; c++) {
    // Each component renders the next two of its route's block, so every component is reachable.
    const block = Math.floor(c / perRoute);
    const children = [2 * (c % perRoute) + 1, 2 * (c % perRoute) + 2].map((k) => block * perRoute + k).filter((k) => k < Math.min(options.components, (block + 1) * perRoute));
    files[`web/src/components/Component${c}.tsx`] = componentFile(c, children, entryOf(c % options.entries, options.tables));
  }

  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
  await mkdir(path.join(dir, 'node_modules'), { recursive: true });
  await symlink(repoRoot, path.join(dir, 'node_modules', 'fwjs'), 'dir');
  return { files: Object.keys(files).filter((f) => f.endsWith('.ts') || f.endsWith('.tsx')).sort(), editable: 'web/src/components/Component1.tsx' };
}

function schemaFile(tables: number): string {
  const lines = [];
  for (let t = 0; t < tables; t++) {
    lines.push(`  items_${t}: table({
    id: t.uuid().primaryKey().defaultRandom(),
    title: t.text(),
    body: t.text().nullable(),
    rank: t.integer().default(0),
    created_at: t.timestamptz().defaultNow(),
  }),`);
  }
  return `import { defineSchema, t, table } from 'fwjs';

const schema = defineSchema({
${lines.join('\n')}
});

export default schema;

declare module 'fwjs' {
  interface Register {
    schema: typeof schema;
  }
}
`;
}

function entryFile(entry: ReturnType<typeof entryOf>): string {
  if (entry.kind === 'command') {
    return `import { command, z } from 'fwjs';

export default command({
  description: 'Creates an item.',
  args: { title: z.string().min(1).max(200), body: z.string().optional() },
  handler: (ctx, args) =>
    ctx.db.insertInto('${entry.table}').values({ title: args.title, body: args.body ?? null }).returningAll().executeTakeFirstOrThrow(),
});
`;
  }
  return `import { ${entry.kind}, z } from 'fwjs';

export default ${entry.kind}({
  description: 'Lists items.',
  args: { limit: z.number().int().min(1).max(100).default(20) },
  handler: (ctx, args) => ctx.db.selectFrom('${entry.table}').selectAll().orderBy('created_at', 'desc').limit(args.limit).execute(),
});
`;
}

function componentFile(index: number, children: number[], entry: ReturnType<typeof entryOf>): string {
  const imports = children.map((k) => `import { Component${k} } from './Component${k}.tsx';`);
  const rendered = children.map((k) => `      <Component${k} />`).join('\n');
  if (entry.kind === 'command') {
    return `import { type FormEvent, useState } from 'react';
import { useCommand } from '../lib/fw.ts';
${imports.join('\n')}

export function Component${index}() {
  const ${entry.name} = useCommand('${entry.name}');
  const [title, setTitle] = useState('');

  async function submit(event: FormEvent) {
    event.preventDefault();
    await ${entry.name}.mutateAsync({ title });
    setTitle('');
  }

  return (
    <section>
      <form onSubmit={submit}>
        <input value={title} onChange={(e) => setTitle(e.target.value)} />
        <button type="submit" disabled={${entry.name}.isPending}>Save</button>
      </form>
${rendered}
    </section>
  );
}
`;
  }
  const hook = entry.kind === 'query' ? 'useQuery' : 'useLiveQuery';
  return `import { ${hook} } from '../lib/fw.ts';
${imports.join('\n')}

export function Component${index}() {
  const items = ${hook}('${entry.name}', { limit: 20 });
  return (
    <section>
      <ul>{items.data?.map((item) => <li key={item.id}>{item.title}</li>)}</ul>
${rendered}
    </section>
  );
}
`;
}
