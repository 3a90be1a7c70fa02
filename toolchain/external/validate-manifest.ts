import { existsSync } from 'node:fs';
import path from 'node:path';
import { manifestPolicyProblems } from '../../runtime/app/check-app.ts';
import { effectProblems } from '../../runtime/external/effects.ts';
import { type ManifestDiagnostic, type ManifestValidation, validateManifest } from '../../runtime/external/manifest.ts';
import { fetchManifest } from '../../plugin/external-manifests.ts';
import { loadAppOnce } from '../../plugin/load-app-once.ts';

export interface ManifestCheck extends ManifestValidation {
  /** The file (resolved) or URL the manifest came from. */
  from: string;
  /** Whether the manifest was checked against an app as well: its policies, and its effects' tables and liveQueries. */
  app: 'checked' | 'none' | 'failed_to_load';
}

/**
 * `fw manifest validate`: the manifest against the schema and the protocol rules, then — when `root`
 * holds an app (a `src/` folder) — against that app, as it would be on import: every policy it names
 * must exist (the app would refuse to load otherwise) and every table and liveQuery its effects name.
 *
 * @example
 *   const check = await checkManifest({ source: 'fw.manifest.json', root: '.' });
 *   check.diagnostics // [{ path: 'entries[0].policy', code: 'unknown_policy', … }]
 */
export async function checkManifest(options: { source: string; root: string }): Promise<ManifestCheck> {
  const root = path.resolve(options.root);
  const { value, from } = await fetchManifest(root, options.source);
  const resolved = /^https?:/i.test(from) ? from : path.resolve(root, options.source);
  const validation = validateManifest(value);
  if (!validation.ok || !existsSync(path.join(root, 'src'))) return { ...validation, from: resolved, app: 'none' };
  const manifest = validation.manifest!;
  let app: Awaited<ReturnType<typeof loadAppOnce>>;
  try {
    app = await loadAppOnce(root);
  } catch (error) {
    const warning: ManifestDiagnostic = {
      path: '',
      code: 'app_not_checked',
      severity: 'warning',
      message: `The app in ${root} did not load (${(error as Error).message.split('\n')[0]}), so the manifest's policies and effects were not checked against it.`,
      hint: 'Fix the app (fw check), then validate again.',
    };
    return { ...validation, diagnostics: [...validation.diagnostics, warning], from: resolved, app: 'failed_to_load' };
  }
  const errors: ManifestDiagnostic[] = [
    ...manifestPolicyProblems(app, manifest).map(({ index, message, hint }) => ({ path: `entries[${index}].policy`, code: 'unknown_policy', severity: 'error' as const, message, hint })),
    ...effectProblems(app, { manifest }).map((message) => ({
      path: 'entries',
      code: 'unknown_effect_target',
      severity: 'error' as const,
      message,
      hint: 'Name tables of src/fw/schema.ts and liveQueries of src/queries/ in the effects, or remove them.',
    })),
  ];
  if (errors.length === 0) return { ...validation, from: resolved, app: 'checked' };
  return { ok: false, diagnostics: [...errors, ...validation.diagnostics], from: resolved, app: 'checked' };
}
