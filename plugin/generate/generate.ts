import { stableIds, withoutPositions } from './position-free.ts';
import path from 'node:path';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import { type AppModel, analyseApp, type GenerateDiagnostic } from '../analyse/app-model.ts';
import { type CheckDiagnostic, sortDiagnostics } from '../analyse/check-diagnostic.ts';
import { analyseFrontend, type FrontendAnalysisOptions, warmFrontend } from '../analyse/frontend/analyse.ts';
import { createWebSources } from '../analyse/frontend/files.ts';
import type { FrontendGraph } from '../analyse/frontend/graph.ts';
import { loadAppOnce } from '../load-app-once.ts';
import { buildAgentContract } from './agent-contract.ts';
import { buildAgentTools } from './agent-tools.ts';
import { buildApiJson } from './api-json.ts';
import { buildApiModule } from './api-module.ts';
import { buildCapabilityMap } from './capability-map.ts';
import { buildExternalServices } from './external-services.ts';
import { buildFrontendGraphJson } from './frontend-graph.ts';
import { type Artifact, codeArtifact, generatedDir, jsonArtifact } from './render.ts';
import { type ArtifactFile, syncArtifacts } from './sync-files.ts';

export interface GenerateOptions {
  /** The app directory. */
  root: string;
  /** Write nothing; report files that differ from what would be written as `drifted`. */
  check?: boolean;
  /** The frontend analysis' per-file cache (default: shared by the process). */
  frontend?: FrontendAnalysisOptions;
}

export interface GenerateResult {
  /** Every artifact, sorted by path. */
  files: ArtifactFile[];
  diagnostics: GenerateDiagnostic[];
  /** The analysed web/ (empty, layout `none`, without one). */
  frontend: FrontendGraph;
  /** Contract checks: the frontend's diagnostics plus agent runs in commands and queries and unknown workflow starts, sorted. */
  checks: CheckDiagnostic[];
}

/**
 * Loads the app at `root`, analyses it and writes (or with `check`, compares) `src/fw/_generated/`.
 * This is `fw generate`.
 *
 * @example
 *   const { files } = await generateArtifacts({ root: '.', check: true });
 *   const drifted = files.filter((f) => f.status === 'drifted');
 */
export async function generateArtifacts(options: GenerateOptions): Promise<GenerateResult> {
  const root = path.resolve(options.root);
  // web/ is parsed while the backend bundles (on rolldown's threads); the analysis then finds it cached.
  const frontend = { ...options.frontend, sources: options.frontend?.sources ?? createWebSources(root) };
  const [app] = await Promise.all([loadAppOnce(root), warmFrontend(root, frontend)]);
  return generateFromApp(app, { ...options, root, frontend });
}

/**
 * The same pipeline for an app that is already loaded (the Vite plugin calls this after a backend
 * file changes). Unchanged files are not rewritten, so calling it again is cheap and quiet.
 *
 * @example
 *   await generateFromApp(await loader.load(), { root: server.config.root });
 */
export async function generateFromApp(app: AppDefinition, options: GenerateOptions): Promise<GenerateResult> {
  const root = path.resolve(options.root);
  const model = await analyseApp(root, app);
  const frontend = await analyseFrontend(root, model.entries, options.frontend);
  const checks = sortDiagnostics([...frontend.diagnostics, ...model.agentRuns, ...model.workflowStarts]);
  const files = await syncArtifacts(root, artifactsOf(model, frontend), { check: options.check ?? false });
  return { files, diagnostics: model.diagnostics, frontend, checks };
}

/**
 * The artifacts of an analysed app, sorted by path; pure, so the same model always gives the same bytes.
 *
 * @example
 *   buildArtifacts(model, frontend).map((a) => a.path)
 *   // ['src/fw/_generated/agentContract.json', 'src/fw/_generated/agentTools.json', 'src/fw/_generated/api.json', 'src/fw/_generated/api.ts',
 *   //  'src/fw/_generated/capabilityMap.json', 'src/fw/_generated/externalServices.json', 'src/fw/_generated/frontendGraph.json']
 */
export function buildArtifacts(model: AppModel, frontend: FrontendGraph): Artifact[] {
  const [apiJson, apiModule] = backendArtifacts(model);
  // What web/ contributes is recorded without line numbers (see position-free.ts).
  const ids = stableIds(frontend);
  return [
    jsonArtifact(`${generatedDir}/agentContract.json`, withoutPositions(buildAgentContract(model, frontend), ids)),
    jsonArtifact(`${generatedDir}/agentTools.json`, buildAgentTools(model)),
    apiJson,
    apiModule,
    jsonArtifact(`${generatedDir}/capabilityMap.json`, withoutPositions(buildCapabilityMap(model, frontend), ids)),
    jsonArtifact(`${generatedDir}/externalServices.json`, buildExternalServices(model)),
    jsonArtifact(`${generatedDir}/frontendGraph.json`, withoutPositions(buildFrontendGraphJson(frontend), ids)),
  ];
}

/** `buildArtifacts`, remembered for the last graph of each model (an edit the analysis does not see changes neither). */
function artifactsOf(model: AppModel, frontend: FrontendGraph): Artifact[] {
  const last = lastArtifacts.get(model);
  if (last?.frontend === frontend) return last.artifacts;
  const artifacts = buildArtifacts(model, frontend);
  lastArtifacts.set(model, { frontend, artifacts });
  return artifacts;
}

const lastArtifacts = new WeakMap<AppModel, { frontend: FrontendGraph; artifacts: Artifact[] }>();

/** The artifacts made from the backend alone, built once per model (a web/ edit does not change them). */
function backendArtifacts(model: AppModel): [Artifact, Artifact] {
  let built = backendBuilt.get(model);
  if (built === undefined) {
    built = [jsonArtifact(`${generatedDir}/api.json`, buildApiJson(model)), codeArtifact(`${generatedDir}/api.ts`, buildApiModule(model))];
    backendBuilt.set(model, built);
  }
  return built;
}

const backendBuilt = new WeakMap<AppModel, [Artifact, Artifact]>();
