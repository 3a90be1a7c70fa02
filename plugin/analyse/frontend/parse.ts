import { createHash } from 'node:crypto';
import path from 'node:path';
import { parseSync } from 'oxc-parser';
import { positionFinder } from '../table-access.ts';
import type { FileFacts } from './facts.ts';
import { emptyScan, finishActions, type Scan, scanScript } from './scan-script.ts';
import { readVueFile, type SfcCompiler } from './vue-sfc.ts';

/**
 * Per-file facts keyed by path and content hash: a file whose bytes did not change is never parsed
 * again, whether the caller is the full analysis or the Vite plugin re-reading one edited file.
 */
export interface FrontendCache {
  get(file: string, source: string, sfc: SfcCompiler | null): FileFacts;
  /** Whether `get` would answer from the cache, without parsing. */
  has(file: string, source: string): boolean;
  /** Takes facts made elsewhere for `source` (the parse worker), as if `get` had parsed it. */
  put(file: string, source: string, facts: FileFacts): void;
  /** Drops files that no longer exist. */
  retain(files: ReadonlySet<string>): void;
  /** How many files have been parsed (not served from the cache) so far. */
  readonly parses: number;
}

export function createFrontendCache(): FrontendCache {
  const entries = new Map<string, { source: string; facts: FileFacts; substance: string }>();
  let parses = 0;
  const store = (file: string, source: string, facts: FileFacts): FileFacts => {
    parses++;
    const cached = entries.get(file);
    const substance = substanceOf(facts);
    if (cached !== undefined && cached.substance === substance) {
      // An edit the analysis does not see (markup, styles, logic without hooks): the same facts
      // object, so everything built from the file's facts can be reused as it is.
      cached.facts.hash = facts.hash;
      cached.source = source;
      return cached.facts;
    }
    entries.set(file, { source, facts, substance });
    return facts;
  };
  return {
    get(file, source, sfc) {
      const cached = entries.get(file);
      // The same string (a watcher's unchanged source) needs no hashing at all.
      if (cached !== undefined && (cached.source === source || cached.facts.hash === contentHash(source))) {
        cached.source = source;
        return cached.facts;
      }
      return store(file, source, analyseFile(file, source, sfc));
    },
    has(file, source) {
      const cached = entries.get(file);
      return cached !== undefined && (cached.source === source || cached.facts.hash === contentHash(source));
    },
    put(file, source, facts) {
      store(file, source, facts);
    },
    retain(files) {
      for (const file of entries.keys()) if (!files.has(file)) entries.delete(file);
    },
    get parses() {
      return parses;
    },
  };
}

/**
 * The facts of one web/ file: `.ts`/`.tsx`/`.js`/`.jsx` parsed whole, `.vue` through its script blocks
 * and its template's elements and event handlers, every position mapped back to the file.
 *
 * @example
 *   analyseFile('web/src/App.tsx', source, null).hooks[0]
 *   // { hook: 'useCommand', target: { kind: 'name', name: 'createNote' }, component: 'App', at: { line: 6, column: 22 } }
 */
export function analyseFile(file: string, source: string, sfc: SfcCompiler | null): FileFacts {
  const position = positionFinder(source);
  const isVue = file.endsWith('.vue');
  const scan = emptyScan(isVue ? vueComponentName(file) : null);
  if (!isVue) {
    scanScript(scan, { parseAs: file, code: source, offset: 0, position });
  } else if (sfc === null) {
    scan.errors.push({ message: 'Cannot read .vue files: vue (vue/compiler-sfc) is not installed in the app or next to fw.', at: { line: 1, column: 1 } });
  } else {
    scanVue(scan, file, source, sfc, position);
  }
  finishActions(scan);
  return toFacts(file, contentHash(source), scan);
}

function scanVue(scan: Scan, file: string, source: string, sfc: SfcCompiler, position: (offset: number) => { line: number; column: number }): void {
  const blocks = readVueFile(sfc, file, source);
  for (const error of blocks.errors) scan.errors.push({ message: error.message, at: position(error.offset) });
  scan.components.push({ name: scan.fileComponent!, at: { line: 1, column: 1 } });
  scan.defaultExport = scan.fileComponent;
  for (const block of blocks.scripts) {
    scanScript(scan, { parseAs: `${file}.${block.lang}`, code: block.content, offset: block.offset, position });
  }
  // `<script>`'s `export default {…}` is the component options, not a component name.
  scan.defaultExport = scan.fileComponent;
  for (const element of blocks.elements) {
    if (element.isComponent) scan.renders.push({ from: scan.fileComponent, tag: element.tag, at: position(element.offset) });
    for (const handler of element.handlers) {
      const called = handlerName(handler.expression);
      if (called !== undefined) scan.handlerRefs.push({ handler: called, event: handler.event, element: element.tag });
      // An inline handler (`@click="create.mutate({ … })"`) is scanned as code of its own.
      scanScript(scan, { parseAs: `${file}.handler.ts`, code: handler.expression, offset: handler.offset, position, event: { event: handler.event, element: element.tag } });
    }
  }
}

/** `addNote` or `addNote($event)` → `addNote`. */
function handlerName(expression: string): string | undefined {
  const parsed = parseSync('handler.ts', expression);
  const statement = parsed.program.body[0];
  if (parsed.errors.length > 0 || parsed.program.body.length !== 1 || statement?.type !== 'ExpressionStatement') return undefined;
  const value = statement.expression;
  if (value.type === 'Identifier') return value.name;
  if (value.type === 'CallExpression' && value.callee.type === 'Identifier') return value.callee.name;
  return undefined;
}

/** `web/components/NoteList.vue` → `NoteList`; `web/pages/notes/[id].vue` → `Id`. */
export function vueComponentName(file: string): string {
  const base = path.posix.basename(file, '.vue').replace(/[[\].]/g, ' ');
  const words = base.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const name = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
  return name === '' ? 'Component' : name;
}

function toFacts(file: string, hash: string, scan: Scan): FileFacts {
  return {
    file,
    hash,
    errors: scan.errors,
    imports: scan.imports,
    defaultExport: scan.defaultExport,
    components: scan.components,
    renders: scan.renders,
    hooks: scan.hooks,
    actions: scan.actions,
    providers: scan.providers,
    routes: scan.routes,
    fetches: scan.fetches,
    agentRuns: scan.agentRuns,
  };
}

/** Everything the analysis recorded about a file but its hash, as one comparable string. */
function substanceOf(facts: FileFacts): string {
  const { hash: _, ...rest } = facts;
  return JSON.stringify(rest);
}

function contentHash(source: string): string {
  return createHash('sha256').update(source).digest('hex');
}
