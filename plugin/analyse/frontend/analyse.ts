import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { sortDiagnostics } from '../check-diagnostic.ts';
import { frontendDiagnostics } from './diagnostics.ts';
import type { FileFacts } from './facts.ts';
import { listWebFiles } from './files.ts';
import { buildGraph, type FrontendGraph, type GraphEntry } from './graph.ts';
import { createFrontendCache, type FrontendCache } from './parse.ts';
import { loadSfcCompiler, type SfcCompiler } from './vue-sfc.ts';

export type { FrontendGraph, GraphEntry } from './graph.ts';

export interface FrontendAnalysisOptions {
  /** Per-file facts by content hash; default: one cache shared by the whole process. */
  cache?: FrontendCache;
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
  const files = await listWebFiles(root);
  const sources = await Promise.all(files.map((file) => readFile(path.join(root, file), 'utf8')));
  const sfc = files.some((f) => f.endsWith('.vue')) ? await sfcCompiler(root) : null;
  const facts: FileFacts[] = files.map((file, i) => cache.get(file, sources[i]!, sfc));
  const graph = buildGraph(facts, entries);
  graph.diagnostics = sortDiagnostics(frontendDiagnostics(graph, facts, entries));
  return graph;
}

function sfcCompiler(root: string): Promise<SfcCompiler | null> {
  let loading = compilers.get(root);
  if (!loading) compilers.set(root, (loading = loadSfcCompiler(root)));
  return loading;
}
