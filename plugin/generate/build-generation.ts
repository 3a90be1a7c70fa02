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
