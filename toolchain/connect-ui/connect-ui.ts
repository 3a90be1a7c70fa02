/**
 * `fw do connect-ui`: repairs broken UI wiring with edits planned on the syntax tree (nothing else in
 * a file changes): creates a missing bridge, mounts a missing provider or the Nuxt plugins, points
 * imports from `_generated/` at the bridge, and turns a raw command `fetch` whose response is unused
 * into the command hook. What is not mechanical is reported with the reason, never guessed at.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import type { EntryKind } from '../../runtime/core/entry-types.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import { analyseApp } from '../../plugin/analyse/app-model.ts';
import type { CheckDiagnostic } from '../../plugin/analyse/check-diagnostic.ts';
import { analyseFrontend } from '../../plugin/analyse/frontend/analyse.ts';
import { listWebFiles } from '../../plugin/analyse/frontend/files.ts';
import type { FrontendGraph } from '../../plugin/analyse/frontend/graph.ts';
import { loadSfcCompiler, readVueFile } from '../../plugin/analyse/frontend/vue-sfc.ts';
import { positionFinder } from '../../plugin/analyse/table-access.ts';
import { generateFromApp } from '../../plugin/generate/generate.ts';
import { loadAppOnce } from '../../plugin/load-app-once.ts';
import { templateFile } from '../make/make-ui.ts';
import { applyEdits } from './edits.ts';
import { type BridgeExport, type Finding, planScript, type ScriptContext, type ScriptUnit } from './script-plan.ts';
import { bridgeWithExports, exportedNames, planViteProvider } from './wiring.ts';

export interface ConnectUiOptions {
  root: string;
  /** Plan and diff; write nothing. */
  dryRun?: boolean;
}

type Located = { code: string; file: string; line: number; column: number };

export interface ConnectUiReport {
  /** True when no wiring error is left that connect-ui could not fix. */
  ok: boolean;
  dryRun: boolean;
  layout: 'vite' | 'nuxt';
  /** Each repaired problem, where it was, and what changed. */
  fixed: Array<Located & { fix: string }>;
  /** Wiring errors left as they are: the diagnostic, and why connect-ui did not change it. */
  unfixed: Array<Located & { message: string; hint: string; reason: string }>;
  files: Array<{ path: string; change: 'created' | 'modified' }>;
  /** A unified diff of every change (what `--dry-run` would write). */
  diff: string;
  /** After writing: the error diagnostics the checks still find (the generated artifacts are refreshed first). */
  remaining?: CheckDiagnostic[];
}

/** The diagnostics connect-ui acts on; the others are listed as unfixed with their own hints. */
const repairable = new Set(['missing_bridge', 'missing_provider', 'deep_generated_import', 'raw_runtime_fetch']);

/**
 * Plans (and unless `dryRun`, writes) the repairs of an app's UI wiring.
 *
 * @example
 *   const report = await connectUi({ root: '.', dryRun: true });
 *   console.log(report.diff); // nothing written
 */
export async function connectUi(options: ConnectUiOptions): Promise<ConnectUiReport> {
  const root = path.resolve(options.root);
  const app = await loadAppOnce(root);
  const model = await analyseApp(root, app);
  const graph = await analyseFrontend(root, model.entries);
  if (graph.layout === 'none') {
    throw new FwFailure('no_web', `${root} has no web/ to connect.`, { suggestions: ['fw make ui --framework vite', 'fw make ui --framework nuxt'] });
  }
  const work = await planRepairs(root, graph, new Map(model.entries.map((e) => [e.name, e.kind])));
  const report = work.report(Boolean(options.dryRun));
  if (options.dryRun) return report;
  if (report.files.length === 0) {
    report.remaining = graph.diagnostics.filter((d) => d.severity === 'error');
    return report;
  }
  await work.write();
  // The artifacts describe web/, which just changed; the checks of the new state are what is left.
  const generated = await generateFromApp(app, { root });
  report.remaining = generated.checks.filter((d) => d.severity === 'error');
  report.ok = report.unfixed.length === 0 && report.remaining.length === 0;
  return report;
}

async function planRepairs(root: string, graph: FrontendGraph, entries: ReadonlyMap<string, EntryKind>) {
  const layout = graph.layout as 'vite' | 'nuxt';
  const files = new WorkingFiles(root);
  const fixed: ConnectUiReport['fixed'] = [];
  const refusals = new Map<string, string>(); // `code file line column` → reason
  const key = (d: Located) => `${d.code} ${d.file} ${d.line} ${d.column}`;
  const diagnostics = graph.diagnostics.filter((d) => d.severity === 'error');
  const has = (code: string) => diagnostics.filter((d) => d.code === code);

  // 1. The bridge.
  const bridge = graph.bridge.file ?? graph.bridge.expected[0]!;
  for (const d of has('missing_bridge')) {
    await files.create(bridge, await templateFile(layout === 'vite' ? 'minimal-web' : 'nuxt-web', bridge));
    fixed.push({ ...located(d), fix: `created ${bridge} from the ${layout === 'vite' ? 'minimal-web' : 'nuxt-web'} template` });
  }

  // 2. Imports from _generated/ and raw command fetches, file by file.
  const webFiles = new Set(await listWebFiles(root));
  webFiles.add(bridge);
  const context: ScriptContext = { bridge, files: webFiles, entries, commandHook: layout === 'vite' ? 'useCommand' : 'useFwCommand', extensionByDefault: layout === 'vite' };
  const bridgeExports: BridgeExport[] = [];
  const touched = new Set([...has('deep_generated_import'), ...has('raw_runtime_fetch')].map((d) => d.file));
  const sfc = [...touched].some((f) => f.endsWith('.vue')) ? await loadSfcCompiler(root) : null;
  for (const file of touched) {
    const source = (await files.read(file))!;
    const position = positionFinder(source);
    const units = scriptUnits(file, source, sfc);
    let edited = source;
    // Later blocks first, so earlier blocks' offsets stay valid.
    for (const unit of [...units].sort((a, b) => b.offset - a.offset)) {
      const plan = planScript(unit, context);
      edited = edited.slice(0, unit.offset) + applyEdits(unit.code, plan.edits) + edited.slice(unit.offset + unit.code.length);
      bridgeExports.push(...plan.bridgeExports);
      const at = (f: Finding) => ({ code: f.code, file, ...position(unit.offset + f.offset) });
      for (const f of plan.fixed) fixed.push({ ...at(f), fix: f.text });
      for (const f of plan.refused) refusals.set(key(at(f)), f.text);
    }
    if (edited !== source) files.update(file, edited);
  }
  // Rewritten imports resolve only if the bridge exports what they import.
  if (bridgeExports.length > 0) {
    const { code, added } = bridgeWithExports(bridge, (await files.read(bridge))!, bridgeExports);
    if (added.length > 0) files.update(bridge, code);
  }

  // 3. The provider (React) or the plugins (Nuxt).
  for (const d of has('missing_provider')) {
    const reason = layout === 'vite' ? await mountReactProvider(files, graph, bridge) : await addNuxtPlugins(files, bridge);
    if (typeof reason === 'string') refusals.set(key(located(d)), reason);
    else fixed.push({ ...located(d), fix: reason.fix });
  }

  const fixedKeys = new Set(fixed.map(key));
  const unfixed = diagnostics
    .filter((d) => !fixedKeys.has(key(located(d))))
    .map((d) => ({
      ...located(d),
      message: d.message,
      hint: d.hint,
      reason: refusals.get(key(located(d))) ?? (repairable.has(d.code) ? 'Not a mechanical case.' : `connect-ui repairs wiring only (bridge, provider, imports, raw command fetches); ${d.code} needs a decision: ${d.hint}`),
    }));

  return {
    report(dryRun: boolean): ConnectUiReport {
      const changes = files.changes();
      return {
        ok: unfixed.length === 0,
        dryRun,
        layout,
        fixed: fixed.sort(byPlace),
        unfixed: unfixed.sort(byPlace),
        files: changes.map((c) => ({ path: c.path, change: c.before === null ? 'created' : 'modified' })),
        diff: changes.map((c) => createTwoFilesPatch(c.before === null ? '/dev/null' : `a/${c.path}`, `b/${c.path}`, c.before ?? '', c.after, '', '', { context: 3 })).join(''),
      };
    },
    write: () => files.write(),
  };
}

async function mountReactProvider(files: WorkingFiles, graph: FrontendGraph, bridge: string): Promise<{ fix: string } | string> {
  const candidates = [graph.routes.find((r) => r.source === 'root')?.file, 'web/src/main.tsx', 'web/src/main.jsx', 'web/src/index.tsx', 'web/src/index.jsx'];
  for (const file of candidates) {
    if (file === undefined) continue;
    const code = await files.read(file);
    if (code === null) continue;
    const edits = planViteProvider(file, code, bridge, true);
    if (edits === undefined) continue;
    files.update(file, applyEdits(code, edits));
    return { fix: `wrapped what ${file} renders in <FwProvider> (dev identity from import.meta.env.DEV, apiUrl from VITE_FW_URL)` };
  }
  return 'No createRoot(…).render(<…/>), hydrateRoot or ReactDOM.render call was found in the entry file; wrap the app in <FwProvider> by hand.';
}

async function addNuxtPlugins(files: WorkingFiles, bridge: string): Promise<{ fix: string } | string> {
  const bridgeCode = (await files.read(bridge))!;
  const exported = exportedNames(bridge, bridgeCode);
  if (bridge !== 'web/composables/fw.ts' || !exported.has('fw') || !exported.has('devAuth')) {
    return `The fw plugins import { fw, devAuth } from web/composables/fw.ts, which ${bridge === 'web/composables/fw.ts' ? 'does not export both' : 'is not the bridge'}; add the plugins by hand (see the nuxt-web template).`;
  }
  const created: string[] = [];
  for (const plugin of ['web/plugins/fw.client.ts', 'web/plugins/fw.server.ts']) {
    if ((await files.read(plugin)) !== null) continue;
    await files.create(plugin, await templateFile('nuxt-web', plugin));
    created.push(plugin);
  }
  return { fix: `created ${created.join(' and ')} (the fw client from runtimeConfig.public.fwUrl)` };
}

/** The scripts of a file: the whole file, or each script block of a `.vue` file. */
function scriptUnits(file: string, source: string, sfc: Awaited<ReturnType<typeof loadSfcCompiler>>): Array<ScriptUnit & { offset: number }> {
  if (!file.endsWith('.vue')) return [{ file, parseAs: file, code: source, vueSetup: false, offset: 0 }];
  if (sfc === null) return [];
  return readVueFile(sfc, file, source).scripts.map((s) => ({ file, parseAs: `${file}.${s.lang}`, code: s.content, vueSetup: s.setup, offset: s.offset }));
}

function located(d: Located): Located {
  return { code: d.code, file: d.file, line: d.line, column: d.column };
}

function byPlace(a: Located, b: Located): number {
  return a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column || a.code.localeCompare(b.code);
}

/** The app's files as connect-ui changes them: read once, changed in memory, written together at the end. */
class WorkingFiles {
  private readonly files = new Map<string, { before: string | null; after: string | null }>();
  private readonly root: string;
  constructor(root: string) {
    this.root = root;
  }

  async read(file: string): Promise<string | null> {
    const known = this.files.get(file);
    if (known) return known.after;
    const full = path.join(this.root, file);
    const text = existsSync(full) ? await readFile(full, 'utf8') : null;
    this.files.set(file, { before: text, after: text });
    return text;
  }

  async create(file: string, content: string): Promise<void> {
    await this.read(file);
    this.update(file, content);
  }

  update(file: string, content: string): void {
    const known = this.files.get(file);
    if (!known) throw new Error(`fw connect-ui: ${file} was changed before it was read (internal error).`);
    known.after = content;
  }

  changes(): Array<{ path: string; before: string | null; after: string }> {
    return [...this.files]
      .filter(([, f]) => f.after !== null && f.after !== f.before)
      .map(([file, f]) => ({ path: file, before: f.before, after: f.after! }))
      .sort((a, b) => a.path.localeCompare(b.path));
  }

  async write(): Promise<void> {
    for (const change of this.changes()) {
      await mkdir(path.dirname(path.join(this.root, change.path)), { recursive: true });
      await writeFile(path.join(this.root, change.path), change.after);
    }
  }
}
