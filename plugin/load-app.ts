import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { type AgentDefinition, type AiToolDefinition, externalToolName, isAgent, isAiTool, isExternalTool } from '../runtime/core/ai-definitions.ts';
import type { ExternalService } from '../runtime/core/app-definition.ts';
import { type EntryDefinition, type EntryKind, isEntry, type PolicyCheck } from '../runtime/core/entries.ts';
import { type AppDefinition } from '../runtime/core/app-definition.ts';
import { checkApp, entryNameFromFile } from '../runtime/app/check-app.ts';
import { readExternalServices } from './external-manifests.ts';
import type { Schema } from '../runtime/core/schema.ts';
import type { CronDefinition } from '../runtime/core/crons.ts';
import { validateArgs } from '../runtime/core/validate-args.ts';
import { AppLoadError, type AppLoadProblem } from './app-load-error.ts';

/** Where each kind of entry lives in an app, and which kinds each folder may hold. */
const entryFolders: ReadonlyArray<{ folder: string; kinds: readonly EntryKind[] }> = [
  { folder: 'src/commands', kinds: ['command'] },
  { folder: 'src/queries', kinds: ['query', 'liveQuery'] },
  { folder: 'src/actions', kinds: ['action'] },
  { folder: 'src/workflows', kinds: ['workflow'] },
  { folder: 'src/endpoints', kinds: ['endpoint'] },
];

/** Where an app's AI definitions live: one agent or aiTool per file, named after the file. */
const aiFolders = { agent: 'src/ai/agents', aiTool: 'src/ai/tools' } as const;

const sourceFile = /^[^.].*\.(?:ts|mts|js|mjs)$/;
const testFile = /\.(?:test|spec)\.[cm]?[jt]s$/;

export interface AppLoader {
  /** Imports the app's backend files (cached; see `invalidate`). */
  load(): Promise<AppDefinition>;
  /** Forgets changed or removed files so the next `load()` reads them (and what imports them) again. */
  invalidate(files: readonly string[]): void;
  close(): Promise<void>;
}

/**
 * Loads an app's backend (schema, policies, entries) through Vite's module runner, so TypeScript
 * runs as written and, later, edits reload without a restart.
 */
export async function createAppLoader(root: string): Promise<AppLoader> {
  const { createServer, createServerModuleRunner } = await import('vite');
  const server = await createServer({
    root,
    configFile: false,
    logLevel: 'silent',
    appType: 'custom',
    server: { middlewareMode: true, hmr: false, ws: false, watch: null },
    // fw itself must be the same module instance the runtime uses, never a transformed copy.
    ssr: { external: ['fwjs'] },
    optimizeDeps: { noDiscovery: true, include: [] },
  });
  const runner = createServerModuleRunner(server.environments.ssr, { hmr: false });

  const importFile = async (file: string): Promise<Record<string, unknown>> => {
    try {
      return (await runner.import(file)) as Record<string, unknown>;
    } catch (error) {
      throw new AppLoadError([{ file: path.relative(root, file), message: describeImportError(error) }]);
    }
  };

  return {
    load: () => assembleApp(root, importFile),
    invalidate(files) {
      const graph = server.environments.ssr.moduleGraph;
      for (const file of files) {
        for (const mod of graph.getModulesByFile(path.resolve(file)) ?? []) graph.invalidateModule(mod);
      }
      // Importers of a changed module must re-evaluate too; app modules are few, so start afresh.
      runner.clearCache();
    },
    async close() {
      await runner.close();
      await server.close();
    },
  };
}

/** A module namespace by absolute file path; throws an `AppLoadError` naming the file when it cannot load. */
export type ImportAppFile = (file: string) => Promise<Record<string, unknown>>;

/**
 * Builds the app from its modules, however they are loaded (the dev module runner, or the one-shot
 * bundle of load-app-once.ts): the schema, the policies and the entries folder by folder, each checked
 * for its kind and a unique name, then the whole app (policies defined). Entry modules are imported
 * concurrently and handled in file order.
 */
export async function assembleApp(root: string, importFile: ImportAppFile): Promise<AppDefinition> {
  const problems: AppLoadProblem[] = [];
  const schemaFile = firstExisting(root, ['src/fw/schema.ts', 'src/fw/schema.js']);
  let schema: Schema = { tables: {} };
  if (schemaFile) {
    const mod = await importFile(schemaFile);
    const candidate = (mod.default ?? mod.schema) as Schema | undefined;
    if (!candidate || typeof candidate !== 'object' || !('tables' in candidate)) {
      problems.push({ file: rel(root, schemaFile), message: 'must `export default defineSchema({ … })`.' });
    } else schema = candidate;
  }

  let policies: Record<string, PolicyCheck> = {};
  const policiesFile = firstExisting(root, ['src/policies.ts', 'src/policies.js']);
  if (policiesFile) {
    const mod = await importFile(policiesFile);
    policies = (mod.default ?? {}) as Record<string, PolicyCheck>;
  }

  let crons: Map<string, CronDefinition> | undefined;
  const cronsFile = firstExisting(root, ['src/crons.ts', 'src/crons.js']);
  if (cronsFile) {
    const declared = (await importFile(cronsFile)).default;
    if (!declared || typeof declared !== 'object' || Array.isArray(declared)) {
      problems.push({ file: rel(root, cronsFile), code: 'invalid_cron', message: 'must `export default crons({ name: { cron | every, call, args?, tenant? } })`.', hint: "import { crons } from 'fwjs';" });
    } else crons = new Map(Object.entries(declared as Record<string, CronDefinition>));
  }

  const entries = new Map<string, EntryDefinition>();
  const origin = new Map<string, string>();
  const files = await listEntryFiles(root);
  // Imported concurrently (the module runner waits on I/O between transforms), handled in file order.
  const imports = await Promise.allSettled(files.map(({ file }) => importFile(path.join(root, file))));
  for (const [i, { name, file, folder, kinds }] of files.entries()) {
    const imported = imports[i]!;
    if (imported.status === 'rejected') throw imported.reason;
    const entry = imported.value.default;
    if (!isEntry(entry)) {
      problems.push({ file, message: `must \`export default\` a ${kinds.join(' or ')}(…) definition.` });
      continue;
    }
    if (!kinds.includes(entry.kind)) {
      problems.push({ file, message: `defines a ${entry.kind}, but ${folder}/ holds ${kinds.join(' or ')} entries. Move the file.` });
      continue;
    }
    const previous = origin.get(name);
    if (previous) {
      problems.push({ file, message: `entry name "${name}" is already taken by ${previous}. Entry names are unique across kinds.` });
      continue;
    }
    entries.set(name, entry);
    origin.set(name, file);
  }
  const { agents, tools, agentFiles } = await assembleAi(root, importFile, origin, problems);
  const external = await readExternalServices(root);
  problems.push(...external.problems);
  problems.push(...agentToolProblems(agents, agentFiles, entries, tools, external.services));
  const app: AppDefinition = { entries, policies, schema, agents, tools, external: external.services, sources: { root, files: origin }, ...(crons ? { crons } : {}) };
  for (const { entry, policy, cron, ...problem } of checkApp(app)) {
    const file = cron !== undefined && cronsFile ? rel(root, cronsFile) : (problem.file ?? (entry === undefined ? undefined : origin.get(entry)));
    const place = file && policy ? await placeOf(root, file, policy) : file && cron !== undefined ? await keyPlace(root, file, cron) : {};
    problems.push({ ...problem, ...(file === undefined ? {} : { file }), ...place });
  }
  // A cron's args against its target's schema (async, so here rather than in checkApp).
  for (const [name, definition] of crons ?? []) {
    const target = definition && typeof definition === 'object' ? entries.get(definition.call) : undefined;
    if (!target || (target.kind !== 'command' && target.kind !== 'action') || !cronsFile) continue;
    try {
      await validateArgs(target.args, definition.args ?? {});
    } catch (error) {
      problems.push({
        file: rel(root, cronsFile),
        ...(await keyPlace(root, rel(root, cronsFile), name)),
        code: 'invalid_cron',
        message: `cron "${name}": its args do not pass ${target.kind} ${definition.call}'s args schema: ${error instanceof Error ? error.message : String(error)}`,
        hint: `Give args that ${definition.call} accepts (fw inspect --json shows its args).`,
      });
    }
  }
  if (problems.length > 0) throw new AppLoadError(problems);
  return app;
}

/** Where the key `name` (`name:` or `'name':`) is first written in `file` (1-based), or nothing. */
async function keyPlace(root: string, file: string, name: string): Promise<{ line?: number; column?: number }> {
  const text = await readFile(path.join(root, file), 'utf8').catch(() => '');
  const at = new RegExp(`(^|[\\s{,])(['"]?)${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\2\\s*:`, 'm').exec(text);
  if (!at) return {};
  const offset = at.index + at[1]!.length;
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

/** Where `policy: '<name>'` is written in an entry's file (1-based), or nothing when it is built some other way. */
async function placeOf(root: string, file: string, policy: string): Promise<{ line?: number; column?: number }> {
  const text = await readFile(path.join(root, file), 'utf8').catch(() => '');
  const at = new RegExp(`policy['"]?\\s*:\\s*(['"\`])${policy.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\1`).exec(text);
  if (!at) return {};
  const before = text.slice(0, at.index).split('\n');
  return { line: before.length, column: before.at(-1)!.length + 1 };
}


/**
 * The agents (`src/ai/agents/`) and aiTools (`src/ai/tools/`). A tool's name is shared with the
 * entries' auto-tools, so it must not repeat an entry's name.
 */
async function assembleAi(root: string, importFile: ImportAppFile, taken: Map<string, string>, problems: Array<{ file?: string; message: string }>) {
  const agents = new Map<string, AgentDefinition>();
  const agentFiles = new Map<string, string>();
  const tools = new Map<string, AiToolDefinition>();
  const files = await listAiFiles(root);
  const imports = await Promise.allSettled(files.map(({ file }) => importFile(path.join(root, file))));
  for (const [i, { name, file, kind }] of files.entries()) {
    const imported = imports[i]!;
    if (imported.status === 'rejected') throw imported.reason;
    const value = imported.value.default;
    if (kind === 'agent') {
      if (isAgent(value)) {
        agents.set(name, value);
        agentFiles.set(name, file);
      } else problems.push({ file, message: 'must `export default agent({ … })`.' });
      continue;
    }
    if (!isAiTool(value)) {
      problems.push({ file, message: 'must `export default aiTool({ … })`.' });
      continue;
    }
    const previous = taken.get(name);
    if (previous) {
      problems.push({ file, message: `tool name "${name}" is already the auto-tool of ${previous}. Rename the file.` });
      continue;
    }
    tools.set(name, value);
  }
  return { agents, tools, agentFiles };
}

/**
 * An agent's tools must be the app's own entries or aiTools, under the name they have in the app, so
 * that every tool an agent can call is listed (agentTools.json), checked and traced by that one name.
 */
function agentToolProblems(
  agents: Map<string, AgentDefinition>,
  files: Map<string, string>,
  entries: Map<string, EntryDefinition>,
  tools: Map<string, AiToolDefinition>,
  external: readonly ExternalService[],
) {
  const names = new Map<unknown, string>([...entries].map(([name, entry]) => [entry, name]));
  for (const [name, tool] of tools) names.set(tool, name);
  const qualifiedNames = new Set(external.flatMap((s) => s.manifest.entries.map((e) => `${s.manifest.service.name}.${e.name}`)));
  const problems: Array<{ file: string; message: string }> = [];
  for (const [agentName, definition] of agents) {
    for (const [key, tool] of Object.entries(definition.tools)) {
      if (isExternalTool(tool)) {
        const expected = externalToolName(tool.qualifiedName);
        if (!qualifiedNames.has(tool.qualifiedName)) {
          problems.push({ file: files.get(agentName)!, message: `tool "${key}" is externalTool('${tool.qualifiedName}'), which no imported manifest defines. fw manifest import <file> adds the service.` });
        } else if (key !== expected) {
          problems.push({ file: files.get(agentName)!, message: `tool "${key}" is ${tool.qualifiedName}; list it under its tool name: tools: { ${expected}: externalTool('${tool.qualifiedName}') }.` });
        }
        continue;
      }
      const known = names.get(tool);
      if (known === undefined) {
        problems.push({ file: files.get(agentName)!, message: `tool "${key}" is not one of the app's entries or src/ai/tools/ aiTools. Import it from its file.` });
      } else if (known !== key) {
        problems.push({ file: files.get(agentName)!, message: `tool "${key}" is ${known}; list it under its own name: tools: { ${known} }.` });
      }
    }
  }
  return problems;
}

/** The module files of one app folder (no tests, no declarations), sorted; none when it does not exist. */
async function sourceFilesIn(root: string, folder: string): Promise<string[]> {
  const dir = path.join(root, folder);
  if (!existsSync(dir)) return [];
  return (await readdir(dir)).filter((f) => sourceFile.test(f) && !testFile.test(f) && !f.endsWith('.d.ts')).sort();
}

/** The agent and aiTool source files, sorted by folder then file name. */
export async function listAiFiles(root: string): Promise<Array<{ name: string; file: string; kind: keyof typeof aiFolders }>> {
  const found: Array<{ name: string; file: string; kind: keyof typeof aiFolders }> = [];
  for (const kind of ['agent', 'aiTool'] as const) {
    const folder = aiFolders[kind];
    for (const fileName of await sourceFilesIn(root, folder)) found.push({ name: entryNameFromFile(fileName), file: `${folder}/${fileName}`, kind });
  }
  return found;
}

/** One backend entry source file: its entry name, its path relative to the app root, and its folder. */
export interface EntryFile {
  name: string;
  /** Relative to the app root, with `/` separators, e.g. `src/commands/createNote.ts`. */
  file: string;
  folder: string;
  /** The kinds of entry its folder may hold. */
  kinds: readonly EntryKind[];
}

/**
 * The entry source files of an app, folder by folder and sorted by file name — the files `load()`
 * imports, so tools that read sources (the analyser) see exactly the same set.
 *
 * @example
 *   await listEntryFiles(root) // [{ name: 'createNote', file: 'src/commands/createNote.ts', folder: 'src/commands', kinds: ['command'] }, …]
 */
export async function listEntryFiles(root: string): Promise<EntryFile[]> {
  const found: EntryFile[] = [];
  for (const { folder, kinds } of entryFolders) {
    for (const fileName of await sourceFilesIn(root, folder)) found.push({ name: entryNameFromFile(fileName), file: `${folder}/${fileName}`, folder, kinds });
  }
  return found;
}

/** Every module `load()` imports, absolute, in load order: the schema, the policies, the crons, then the entries. */
export async function appModuleFiles(root: string): Promise<string[]> {
  const schema = firstExisting(root, ['src/fw/schema.ts', 'src/fw/schema.js']);
  const policies = firstExisting(root, ['src/policies.ts', 'src/policies.js']);
  const crons = firstExisting(root, ['src/crons.ts', 'src/crons.js']);
  const entries = (await listEntryFiles(root)).map(({ file }) => path.join(root, file));
  const ai = (await listAiFiles(root)).map(({ file }) => path.join(root, file));
  return [...(schema ? [schema] : []), ...(policies ? [policies] : []), ...(crons ? [crons] : []), ...entries, ...ai];
}

function firstExisting(root: string, candidates: string[]): string | undefined {
  return candidates.map((c) => path.join(root, c)).find((f) => existsSync(f));
}

function rel(root: string, file: string): string {
  return path.relative(root, file).split(path.sep).join('/');
}

function describeImportError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // Vite 8 (rolldown) reports transform errors in `errors[]`, each with a `loc`; older paths use `loc`.
  const first = (error as { errors?: Array<{ message?: string; loc?: Location }> }).errors?.[0];
  const loc = first?.loc ?? (error as { loc?: Location }).loc;
  const message = stripVTControlCharacters(first?.message ?? error.message).split('\n')[0]!.trim();
  const where = loc?.line ? ` (line ${loc.line}${loc.column !== undefined ? `, column ${loc.column + 1}` : ''})` : '';
  return `${message}${where}`;
}

interface Location {
  line?: number;
  column?: number;
}
