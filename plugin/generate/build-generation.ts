import { generateArtifacts } from './generate.ts';

/**
 * Brings `src/fw/_generated/` up to date before a production build, so a build never ships a typed
 * client older than its entries (`fw build` and `vite build` with the fw plugin both call it).
 * Returns the artifacts it had to rewrite; an app that does not load fails the build here, with the
 * same diagnostics as `fw generate`.
 */
export async function generateBeforeBuild(root: string): Promise<string[]> {
  const { files } = await generateArtifacts({ root });
  return files.filter((file) => file.status === 'written').map((file) => file.path);
}

// On globalThis: the fw plugin that `vite build` loads through the app's vite.config may be another
// copy of this module than the caller's (as with the shared dev runtime).
const keptKey = Symbol.for('fw.build.keepGenerated');
const holder = globalThis as unknown as Record<symbol, number | undefined>;

/**
 * Runs `fn` (a `vite build` in this process) with the fw plugin's regeneration off, so the build uses
 * `src/fw/_generated/` as it is on disk: `fw verify` reports drift and writes nothing to the app's sources.
 */
export async function keepingGenerated<T>(fn: () => Promise<T>): Promise<T> {
  holder[keptKey] = (holder[keptKey] ?? 0) + 1;
  try {
    return await fn();
  } finally {
    holder[keptKey] = (holder[keptKey] ?? 1) - 1;
  }
}

/** True inside `keepingGenerated`: a `vite build` then leaves `src/fw/_generated/` alone. */
export function generatedKept(): boolean {
  return (holder[keptKey] ?? 0) > 0;
}
