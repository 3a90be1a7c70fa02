import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { sortDiagnostics } from '../check-diagnostic.ts';
import { frontendDiagnostics } from './diagnostics.ts';
import type { FileFacts } from './facts.ts';
import { createWebSources, type WebSources } from './files.ts';
import { buildGraph, type FrontendGraph, type GraphEntry } from './graph.ts';
import { createFrontendCache, type FrontendCache } from './parse.ts';
import { loadSfcCompiler, type SfcCompiler } from './vue-sfc.ts';

export type { FrontendGraph, GraphEntry } from './graph.ts';

export interface FrontendAnalysisOptions {
  /** Per-file facts by content hash; default: one cache shared by the whole process. */
  cache?: FrontendCache;
  /** web/'s sources kept up to date by a watcher; default: list and read web/ on every call. */
  sources?: WebSources;
}

// Facts depend only on a file's path and bytes, so one cache serves every app in the process.
const sharedCache = createFrontendCache();
const compilers = new Map<string, Promise<SfcCompiler | null>>();

/**
 * Analyses the app's web/ against its entries: the frontend graph with its diagnostics. Files whose
 * content did not change since the last call are not parsed again. An app without web/ gets an
 * empty graph (layout `none`) and no diagnostics.
 *
 * @example
 *   const graph = await analyseFrontend(root, model.entries);
 *   graph.hooks.filter((h) => h.status !== 'ok') // the orphan UI actions
 */
export async function analyseFrontend(root: string, entries: readonly GraphEntry[], options: FrontendAnalysisOptions = {}): Promise<FrontendGraph> {
  const cache = options.cache ?? sharedCache;
  const current = await (options.sources ?? createWebSources(root)).read();
  const files = [...current.keys()].sort();
  const sfc = files.some((f) => f.endsWith('.vue')) ? await sfcCompiler(root) : null;
  const facts: FileFacts[] = files.map((file) => cache.get(file, current.get(file)!, sfc));
  // The same facts (the cache keeps a file's facts object across edits the analysis does not see) and
  // the same entries make the same graph: return it as it was.
  const last = lastGraphs.get(cache);
  if (last !== undefined && last.entries === entries && last.facts.length === facts.length && last.facts.every((f, i) => f === facts[i])) return last.graph;
  const graph = buildGraph(facts, entries);
  graph.diagnostics = sortDiagnostics(frontendDiagnostics(graph, facts, entries));
  lastGraphs.set(cache, { entries, facts, graph });
  return graph;
}

const lastGraphs = new WeakMap<FrontendCache, { entries: readonly GraphEntry[]; facts: readonly FileFacts[]; graph: FrontendGraph }>();

/**
 * Reads and parses web/ ahead of `analyseFrontend` (same cache, same sources) while the caller does
 * other work (`fw generate` loads the backend meanwhile): a large web/ is parsed on a worker thread,
 * so on a machine with two cores the parsing costs no extra time; the rest a few files at a time with
 * the event loop free in between.
 */
export async function warmFrontend(root: string, options: FrontendAnalysisOptions & { sources: WebSources }): Promise<{ parsedInWorker: number }> {
  const cache = options.cache ?? sharedCache;
  const current = await options.sources.read();
  const pending = [...current].filter(([file, source]) => !file.endsWith('.vue') && !cache.has(file, source));
  let parsedInWorker = 0;
  if (pending.length >= workerThreshold) {
    const facts = await parseInWorker(pending).catch(() => undefined); // on failure: parsed below, here
    if (facts) pending.forEach(([file, source], i) => cache.put(file, source, facts[i]!));
    parsedInWorker = facts?.length ?? 0;
  }
  const sfc = [...current.keys()].some((f) => f.endsWith('.vue')) ? await sfcCompiler(root) : null;
  let done = 0;
  for (const [file, source] of current) {
    cache.get(file, source, sfc);
    if (++done % 16 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return { parsedInWorker };
}

/** Below this many files a worker's start-up (~50 ms) costs more than it saves. */
const workerThreshold = 200;

function parseInWorker(files: Array<[string, string]>): Promise<FileFacts[]> {
  // parse-worker.ts from the sources (tests, Node's type stripping), parse-worker.js from dist/.
  const worker = new Worker(new URL(`./parse-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url), { workerData: { files } });
  return new Promise<FileFacts[]>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the parse worker exited with code ${code}`)));
  }).finally(() => void worker.terminate());
}

function sfcCompiler(root: string): Promise<SfcCompiler | null> {
  let loading = compilers.get(root);
  if (!loading) compilers.set(root, (loading = loadSfcCompiler(root)));
  return loading;
}
