/**
 * `fw make ui`: scaffolds `web/` for an app that has none — a React + Vite app (as the minimal-web
 * template) or a Nuxt app (as nuxt-web) — wired to the app's entries as api.json lists them: the bridge
 * file, the provider or plugins, a form per command and a list per query and liveQuery.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FwFailure } from '../../runtime/core/failure.ts';
import { fwPackageRoot } from '../../plugin/package-root.ts';

export const uiFrameworks = ['vite', 'nuxt'] as const;
export type UiFramework = (typeof uiFrameworks)[number];

export interface MakeUiOptions {
  root: string;
  framework: string;
  /** List what would be written; write nothing. */
  dryRun?: boolean;
  /** Replace an existing web/ (it is removed first). */
  yes?: boolean;
}

export interface MadeUi {
  framework: UiFramework;
  /** Paths relative to the app root: the files under web/, and package.json (dependencies and scripts). */
  files: string[];
  dryRun: boolean;
}

/** One arg of an entry, as far as a generated form can edit it. */
interface Field {
  name: string;
  label: string;
  kind: 'string' | 'number' | 'boolean' | 'enum' | 'json';
  required: boolean;
  values: string[];
  /** The initial text of a required JSON field: `[]` for arrays, `{}` for objects. */
  initialJson: string;
}

interface UiEntry {
  name: string;
  kind: 'command' | 'query' | 'liveQuery';
  title: string;
  component: string;
  fields: Field[];
}

/** The web files and package.json changes for `framework`, computed from the app's api.json. */
export async function makeUi(options: MakeUiOptions): Promise<MadeUi> {
  const root = path.resolve(options.root);
  if (!(uiFrameworks as readonly string[]).includes(options.framework)) {
    throw new FwFailure('bad_flags', `Unknown UI framework "${options.framework}"; fw makes vite (React) or nuxt (Vue) UIs.`, {
      suggestions: uiFrameworks.map((f) => `fw make ui --framework ${f}`),
    });
  }
  const framework = options.framework as UiFramework;
  const pkgFile = path.join(root, 'package.json');
  if (!existsSync(pkgFile)) {
    throw new FwFailure('not_an_app', `${root} has no package.json: run fw make ui in an fw app.`, { suggestions: ['fw create my-app', 'fw make ui --root <app>'] });
  }
  if (existsSync(path.join(root, 'web')) && !options.yes) {
    throw new FwFailure('web_exists', `${root} already has web/; fw make ui never overwrites it without --yes.`, {
      suggestions: [`fw make ui --framework ${framework} --dry-run  (see the files it writes)`, `fw make ui --framework ${framework} --yes  (replace web/)`],
    });
  }
  const entries = await readEntries(root);
  const files = framework === 'vite' ? await viteFiles(entries) : await nuxtFiles(entries);
  const pkg = JSON.parse(await readFile(pkgFile, 'utf8')) as Record<string, any>;
  const template = JSON.parse(await readFile(path.join(fwPackageRoot(), 'templates', framework === 'vite' ? 'minimal-web' : 'nuxt-web', 'package.json'), 'utf8'));
  const merged = mergePackage(pkg, template, framework);
  const list = [...Object.keys(files).sort(), 'package.json'];
  if (options.dryRun) return { framework, files: list, dryRun: true };

  await rm(path.join(root, 'web'), { recursive: true, force: true });
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), content);
  }
  await writeFile(pkgFile, `${JSON.stringify(merged, null, 2)}\n`);
  return { framework, files: list, dryRun: false };
}

/** The app's entries from `src/fw/_generated/api.json` (written by `fw generate` and `fw dev`). */
async function readEntries(root: string): Promise<UiEntry[]> {
  const file = path.join(root, 'src/fw/_generated/api.json');
  if (!existsSync(file)) {
    throw new FwFailure('no_api_json', `${path.relative(root, file)} is missing: fw make ui reads the app's entries from it.`, {
      suggestions: ['fw generate', 'fw make ui --framework vite'],
    });
  }
  const api = JSON.parse(await readFile(file, 'utf8')) as { entries: { name: string; kind: UiEntry['kind']; args: Record<string, any> | null }[] };
  const used = new Set<string>();
  return api.entries.map((entry) => {
    let component = `${pascal(entry.name)}${entry.kind === 'command' ? 'Form' : 'View'}`;
    while (used.has(component)) component += '_';
    used.add(component);
    return { name: entry.name, kind: entry.kind, title: humanize(entry.name), component, fields: fieldsOf(entry.args) };
  });
}

function fieldsOf(schema: Record<string, any> | null): Field[] {
  const properties = (schema?.properties ?? {}) as Record<string, Record<string, any>>;
  const required = new Set<string>(Array.isArray(schema?.required) ? schema.required : []);
  return Object.entries(properties).map(([name, prop]) => {
    const values = Array.isArray(prop.enum) && prop.enum.every((v: unknown) => typeof v === 'string') ? (prop.enum as string[]) : [];
    const kind: Field['kind'] =
      values.length > 0 ? 'enum' : prop.type === 'string' ? 'string' : prop.type === 'number' || prop.type === 'integer' ? 'number' : prop.type === 'boolean' ? 'boolean' : 'json';
    const initialJson = prop.type === 'array' ? '[]' : prop.type === 'object' ? '{}' : 'null';
    return { name, label: humanize(name) + (kind === 'json' ? ' (JSON)' : ''), kind, required: required.has(name), values, initialJson };
  });
}

function humanize(name: string): string {
  const words = name.replace(/[_-]+/g, ' ').replace(/([a-z0-9])([A-Z])/g, '$1 $2').trim().toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function pascal(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''));
  const head = cleaned.charAt(0).toUpperCase() + cleaned.slice(1);
  return /^[A-Za-z]/.test(head) ? head : `E${head}`;
}

const q = (value: string) => JSON.stringify(value);
const html = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The args object literal a form sends: `v0`… hold the field values (strings, or booleans for checkboxes). */
function argsLiteral(fields: Field[], value: (index: number) => string): string {
  const parts = fields.map((field, index) => {
    const v = value(index);
    const converted =
      field.kind === 'number' ? `Number(${v})` : field.kind === 'json' ? `parseJson(${v})` : field.kind === 'enum' ? `(${v} as never)` : v;
    if (field.required || field.kind === 'boolean') return `${q(field.name)}: ${converted}`;
    return `...(${v} !== '' ? { ${q(field.name)}: ${converted} } : {})`;
  });
  return `{ ${parts.join(', ')} }`;
}

const parseJsonSource = `/** A JSON field's value; undefined while it does not parse (the runtime then names the arg). */
function parseJson(text: unknown): any {
  try {
    return JSON.parse(String(text));
  } catch {
    return undefined;
  }
}`;

const describeSource = `/** One line for a result item: its title, name, label or text, else its JSON. */
function describeItem(item: unknown): string {
  if (item && typeof item === 'object') {
    for (const key of ['title', 'name', 'label', 'text']) {
      const value = (item as Record<string, unknown>)[key];
      if (typeof value === 'string') return value;
    }
  }
  return typeof item === 'string' ? item : JSON.stringify(item);
}`;

/** A file of one of fw's app templates, as shipped. */
export async function templateFile(template: string, file: string): Promise<string> {
  return readFile(path.join(fwPackageRoot(), 'templates', template, file), 'utf8');
}

// ---------------------------------------------------------------- React + Vite

async function viteFiles(entries: UiEntry[]): Promise<Record<string, string>> {
  const copied = ['web/index.html', 'web/vite.config.ts', 'web/tsconfig.json', 'web/public/favicon.svg', 'web/src/vite-env.d.ts', 'web/src/main.tsx', 'web/src/lib/fw.ts', 'web/src/lib/token.ts', 'web/src/components/ErrorBoundary.tsx'];
  const files: Record<string, string> = {};
  for (const file of copied) files[file] = await templateFile('minimal-web', file);
  files['web/src/App.tsx'] = reactApp(entries);
  return files;
}

function reactInputs(fields: Field[], indent: string): string {
  return fields
    .map((field, index) => {
      const v = `v${index}`;
      const set = `setV${index}`;
      const required = field.required ? ' required' : '';
      if (field.kind === 'boolean') {
        return `${indent}<label>\n${indent}  <input type="checkbox" checked={${v}} onChange={(e) => ${set}(e.target.checked)} /> ${field.label}\n${indent}</label>`;
      }
      if (field.kind === 'enum') {
        const options = [...(field.required ? [] : ['']), ...field.values].map((value) => `<option value=${q(value)}>${value === '' ? '—' : html(value)}</option>`).join('');
        return `${indent}<label>\n${indent}  ${field.label}\n${indent}  <select value={${v}} onChange={(e) => ${set}(e.target.value)}${required}>${options}</select>\n${indent}</label>`;
      }
      const control =
        field.kind === 'json'
          ? `<textarea value={${v}} onChange={(e) => ${set}(e.target.value)}${required} />`
          : `<input${field.kind === 'number' ? ' type="number" step="any"' : ''} value={${v}} onChange={(e) => ${set}(e.target.value)}${required} />`;
      return `${indent}<label>\n${indent}  ${field.label}\n${indent}  ${control}\n${indent}</label>`;
    })
    .join('\n');
}

function reactState(fields: Field[]): string {
  return fields
    .map((field, index) => {
      const initial = field.kind === 'boolean' ? 'false' : field.kind === 'enum' && field.required ? q(field.values[0]!) : field.kind === 'json' && field.required ? q(field.initialJson) : "''";
      return `  const [v${index}, setV${index}] = useState(${initial});`;
    })
    .join('\n');
}

function reactApp(entries: UiEntry[]): string {
  const commands = entries.filter((e) => e.kind === 'command');
  const reads = entries.filter((e) => e.kind !== 'command');
  const hooks = [...(commands.length ? ['useCommand'] : []), ...(reads.some((e) => e.kind === 'query') ? ['useQuery'] : []), ...(reads.some((e) => e.kind === 'liveQuery') ? ['useLiveQuery'] : [])];
  const needsState = entries.some((e) => e.fields.length > 0);
  const needsJson = entries.some((e) => e.fields.some((f) => f.kind === 'json'));
  const out: string[] = [];
  out.push(`// Made by \`fw make ui --framework vite\` from src/fw/_generated/api.json: a form per command, a list per`);
  out.push(`// query and liveQuery. It is yours now: edit freely (fw never rewrites it).`);
  out.push(`import { type FormEvent${needsState ? ', useState' : ''} } from 'react';`);
  if (hooks.length) out.push(`import { ${hooks.join(', ')} } from './lib/fw.ts';`);
  out.push('');
  for (const entry of commands) {
    const reset = entry.fields.map((f, i) => (f.kind === 'boolean' ? `setV${i}(false)` : f.kind === 'string' || f.kind === 'number' ? `setV${i}('')` : '')).filter(Boolean);
    out.push(`function ${entry.component}() {`);
    out.push(`  const command = useCommand(${q(entry.name)});`);
    if (entry.fields.length) out.push(reactState(entry.fields));
    out.push('');
    out.push('  async function submit(event: FormEvent) {');
    out.push('    event.preventDefault();');
    out.push(`    await command.mutateAsync(${argsLiteral(entry.fields, (i) => `v${i}`)}).then(() => { ${reset.join('; ')} }, () => undefined);`);
    out.push('  }');
    out.push('');
    out.push('  return (');
    out.push(`    <form aria-label=${q(entry.title)} onSubmit={submit} style={{ display: 'grid', gap: 8, marginBottom: 24 }}>`);
    out.push(`      <h2>${html(entry.title)}</h2>`);
    if (entry.fields.length) out.push(reactInputs(entry.fields, '      '));
    out.push(`      <button type="submit" disabled={command.isPending}>`);
    out.push(`        ${html(entry.title)}`);
    out.push('      </button>');
    out.push('      {command.error && <p role="alert">{command.error.message}</p>}');
    out.push('    </form>');
    out.push('  );');
    out.push('}');
    out.push('');
  }
  for (const entry of reads) {
    const hook = entry.kind === 'liveQuery' ? 'useLiveQuery' : 'useQuery';
    out.push(`function ${entry.component}() {`);
    if (entry.fields.length) out.push(reactState(entry.fields));
    out.push(`  const result = ${hook}(${q(entry.name)}, ${argsLiteral(entry.fields, (i) => `v${i}`)});`);
    out.push('  return (');
    out.push(`    <section style={{ marginBottom: 24 }}>`);
    out.push(`      <h2>${html(entry.title)}</h2>`);
    if (entry.fields.length) out.push(reactInputs(entry.fields, '      '));
    out.push(`      <Result label=${q(entry.title)} data={result.data} error={result.error} />`);
    out.push('    </section>');
    out.push('  );');
    out.push('}');
    out.push('');
  }
  out.push('function Result({ label, data, error }: { label: string; data: unknown; error: { message: string } | undefined }) {');
  out.push('  if (error) return <p role="alert">{error.message}</p>;');
  out.push('  if (data === undefined) return <p>Loading…</p>;');
  out.push('  if (!Array.isArray(data)) return <pre aria-label={label}>{JSON.stringify(data, null, 2)}</pre>;');
  out.push('  return (');
  out.push('    <ul aria-label={label}>');
  out.push('      {data.map((item, index) => (');
  out.push('        <li key={index}>{describeItem(item)}</li>');
  out.push('      ))}');
  out.push('    </ul>');
  out.push('  );');
  out.push('}');
  out.push('');
  out.push(describeSource);
  out.push('');
  if (needsJson) {
    out.push(parseJsonSource);
    out.push('');
  }
  out.push('export function App() {');
  out.push('  return (');
  out.push(`    <main style={{ fontFamily: 'system-ui, sans-serif', maxWidth: 640, margin: '3rem auto', padding: '0 1rem' }}>`);
  for (const entry of [...commands, ...reads]) out.push(`      <${entry.component} />`);
  if (entries.length === 0) out.push('      <p>This app has no entries yet: add one under src/commands or src/queries.</p>');
  out.push('    </main>');
  out.push('  );');
  out.push('}');
  return `${out.join('\n')}\n`;
}

// ---------------------------------------------------------------- Vue + Nuxt

async function nuxtFiles(entries: UiEntry[]): Promise<Record<string, string>> {
  const copied = [
    'web/nuxt.config.ts',
    'web/tsconfig.json',
    'web/app.vue',
    'web/public/favicon.svg',
    'web/composables/fw.ts',
    'web/composables/token.ts',
    // The error page, and the stylesheet it shares with the template's page.
    'web/error.vue',
    'web/assets/main.css',
    'web/plugins/fw.client.ts',
    'web/plugins/fw.server.ts',
    'web/plugins/fw-errors.server.ts',
    'web/server/api/fw-health.get.ts',
  ];
  const files: Record<string, string> = {};
  for (const file of copied) files[file] = await templateFile('nuxt-web', file);
  files['web/components/FwResult.vue'] = vueResult();
  for (const entry of entries) files[`web/components/fw/${entry.component}.vue`] = vueEntry(entry);
  files['web/pages/index.vue'] = vuePage(entries);
  return files;
}

function vueState(fields: Field[]): string {
  return fields
    .map((field, index) => {
      const initial = field.kind === 'boolean' ? 'false' : field.kind === 'enum' && field.required ? q(field.values[0]!) : field.kind === 'json' && field.required ? q(field.initialJson) : "''";
      // Inputs of type number give numbers through v-model.
      const type = field.kind === 'boolean' ? 'boolean' : field.kind === 'number' ? 'string | number' : 'string';
      return `const v${index} = ref<${type}>(${initial});`;
    })
    .join('\n');
}

function vueInputs(fields: Field[], indent: string): string {
  return fields
    .map((field, index) => {
      const v = `v${index}`;
      const required = field.required ? ' required' : '';
      if (field.kind === 'boolean') return `${indent}<label><input v-model="${v}" type="checkbox" /> ${html(field.label)}</label>`;
      if (field.kind === 'enum') {
        const options = [...(field.required ? [] : ['']), ...field.values].map((value) => `<option value="${html(value)}">${value === '' ? '—' : html(value)}</option>`).join('');
        return `${indent}<label>\n${indent}  ${html(field.label)}\n${indent}  <select v-model="${v}"${required}>${options}</select>\n${indent}</label>`;
      }
      const control = field.kind === 'json' ? `<textarea v-model="${v}"${required} />` : `<input v-model="${v}"${field.kind === 'number' ? ' type="number" step="any"' : ''}${required} />`;
      return `${indent}<label>\n${indent}  ${html(field.label)}\n${indent}  ${control}\n${indent}</label>`;
    })
    .join('\n');
}

function vueEntry(entry: UiEntry): string {
  const needsJson = entry.fields.some((f) => f.kind === 'json');
  const script: string[] = ['<script setup lang="ts">'];
  if (entry.fields.length) script.push("import { ref } from 'vue';");
  if (entry.kind === 'command') {
    script.push("import { useFwCommand } from '../../composables/fw';");
    script.push('');
    script.push(`const { mutateAsync, isPending, error } = useFwCommand(${q(entry.name)});`);
    if (entry.fields.length) script.push(vueState(entry.fields));
    const reset = entry.fields.map((f, i) => (f.kind === 'boolean' ? `v${i}.value = false;` : f.kind === 'string' || f.kind === 'number' ? `v${i}.value = '';` : '')).filter(Boolean);
    script.push('');
    script.push('async function submit() {');
    script.push(`  await mutateAsync(${argsLiteral(entry.fields, (i) => `v${i}.value`)}).then(`);
    script.push(`    () => {${reset.length ? ` ${reset.join(' ')} ` : ''}},`);
    script.push('    () => undefined,');
    script.push('  );');
    script.push('}');
  } else {
    const composable = entry.kind === 'liveQuery' ? 'useFwLiveQuery' : 'useFwQuery';
    script.push(`import { ${composable} } from '../../composables/fw';`);
    script.push("import FwResult from '../FwResult.vue';");
    script.push('');
    if (entry.fields.length) script.push(vueState(entry.fields));
    // A getter: the query follows the inputs.
    script.push(`const { data, error } = ${composable}(${q(entry.name)}, () => (${argsLiteral(entry.fields, (i) => `v${i}.value`)}));`);
  }
  if (needsJson) script.push('', parseJsonSource);
  script.push('</script>');
  const template: string[] = ['<template>'];
  if (entry.kind === 'command') {
    template.push(`  <form aria-label="${html(entry.title)}" style="display: grid; gap: 8px; margin-bottom: 24px" @submit.prevent="submit">`);
    template.push(`    <h2>${html(entry.title)}</h2>`);
    if (entry.fields.length) template.push(vueInputs(entry.fields, '    '));
    template.push(`    <button type="submit" :disabled="isPending">${html(entry.title)}</button>`);
    template.push('    <p v-if="error" role="alert">{{ error.message }}</p>');
    template.push('  </form>');
  } else {
    template.push('  <section style="margin-bottom: 24px">');
    template.push(`    <h2>${html(entry.title)}</h2>`);
    if (entry.fields.length) template.push(vueInputs(entry.fields, '    '));
    template.push(`    <FwResult label="${html(entry.title)}" :data="data" :error="error" />`);
    template.push('  </section>');
  }
  template.push('</template>');
  return `<!-- Made by \`fw make ui --framework nuxt\` for ${entry.kind} ${entry.name}; yours to edit. -->\n${script.join('\n')}\n\n${template.join('\n')}\n`;
}

function vueResult(): string {
  return `<!-- A query result: a list for arrays (items by their title, name, label or text), else its JSON. -->
<script setup lang="ts">
defineProps<{ label: string; data: unknown; error: { message: string } | undefined }>();

${describeSource}
</script>

<template>
  <p v-if="error" role="alert">{{ error.message }}</p>
  <p v-else-if="data === undefined">Loading…</p>
  <ul v-else-if="Array.isArray(data)" :aria-label="label">
    <li v-for="(item, index) in data" :key="index">{{ describeItem(item) }}</li>
  </ul>
  <pre v-else :aria-label="label">{{ JSON.stringify(data, null, 2) }}</pre>
</template>
`;
}

function vuePage(entries: UiEntry[]): string {
  const ordered = [...entries.filter((e) => e.kind === 'command'), ...entries.filter((e) => e.kind !== 'command')];
  const imports = ordered.map((e) => `import ${e.component} from '../components/fw/${e.component}.vue';`);
  return `<!-- Made by \`fw make ui --framework nuxt\` from src/fw/_generated/api.json: a form per command, a list per
     query and liveQuery. It is yours now: edit freely (fw never rewrites it). -->
<script setup lang="ts">
${imports.join('\n')}
</script>

<template>
  <main style="font-family: system-ui, sans-serif; max-width: 640px; margin: 3rem auto; padding: 0 1rem">
${ordered.map((e) => `    <${e.component} />`).join('\n') || '    <p>This app has no entries yet: add one under src/commands or src/queries.</p>'}
  </main>
</template>
`;
}

// ---------------------------------------------------------------- package.json

/** The app's package.json with the web dependencies and scripts of the framework's template added. */
function mergePackage(pkg: Record<string, any>, template: Record<string, any>, framework: UiFramework): Record<string, any> {
  const merged = { ...pkg };
  for (const group of ['dependencies', 'devDependencies'] as const) {
    const add = { ...(template[group] as Record<string, string>) };
    delete add.fw;
    const existing = { ...(pkg[group] as Record<string, string> | undefined) };
    for (const [name, version] of Object.entries(add)) existing[name] ??= version;
    merged[group] = Object.fromEntries(Object.entries(existing).sort(([a], [b]) => a.localeCompare(b)));
  }
  const scripts = { ...(pkg.scripts as Record<string, string> | undefined) };
  const web = ['build', 'typecheck', ...(framework === 'nuxt' ? ['postinstall'] : [])];
  for (const name of web) scripts[name] = template.scripts[name];
  scripts.dev ??= 'fw dev';
  merged.scripts = scripts;
  // The template's reviewed install scripts (npm's allowScripts: esbuild's binary check under Nuxt); the app's own entries win.
  if (template.allowScripts) merged.allowScripts = { ...(template.allowScripts as Record<string, boolean>), ...(pkg.allowScripts as Record<string, boolean> | undefined) };
  return merged;
}
