import path from 'node:path';
import type { AppDefinition } from '../../runtime/registry.ts';
import { type AppModel, analyseApp, type GenerateDiagnostic } from '../analyse/app-model.ts';
import { createAppLoader } from '../load-app.ts';
import { buildAgentContract } from './agent-contract.ts';
import { buildApiJson } from './api-json.ts';
import { buildApiModule } from './api-module.ts';
import { buildCapabilityMap } from './capability-map.ts';
import { type Artifact, codeArtifact, generatedDir, jsonArtifact } from './render.ts';
import { type ArtifactFile, syncArtifacts } from './sync-files.ts';

export interface GenerateOptions {
  /** The app directory. */
  root: string;
  /** Write nothing; report files that differ from what would be written as `drifted`. */
  check?: boolean;
}

export interface GenerateResult {
  /** Every artifact, sorted by path. */
  files: ArtifactFile[];
  diagnostics: GenerateDiagnostic[];
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
  const loader = await createAppLoader(root);
  try {
    return await generateFromApp(await loader.load(), { ...options, root });
  } finally {
    await loader.close();
  }
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
  const files = await syncArtifacts(root, buildArtifacts(model), { check: options.check ?? false });
  return { files, diagnostics: model.diagnostics };
}

/**
 * The artifacts of an analysed app, sorted by path; pure, so the same model always gives the same bytes.
 *
 * @example
 *   buildArtifacts(model).map((a) => a.path)
 *   // ['src/fw/_generated/agentContract.json', 'src/fw/_generated/api.json', 'src/fw/_generated/api.ts', 'src/fw/_generated/capabilityMap.json']
 */
export function buildArtifacts(model: AppModel): Artifact[] {
  return [
    jsonArtifact(`${generatedDir}/agentContract.json`, buildAgentContract(model)),
    jsonArtifact(`${generatedDir}/api.json`, buildApiJson(model)),
    codeArtifact(`${generatedDir}/api.ts`, buildApiModule(model)),
    jsonArtifact(`${generatedDir}/capabilityMap.json`, buildCapabilityMap(model)),
  ];
}
