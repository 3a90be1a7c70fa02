import { randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AppDefinition } from '../runtime/core/app-definition.ts';
import { appModuleFiles, assembleApp, createAppLoader } from './load-app.ts';
import { AppLoadError } from './app-load-error.ts';

const entryId = '\0fw-app-modules';

/**
 * Loads an app's backend once, for commands that read it and exit (`fw generate`, `fw check`,
 * `fw inspect`, `fw do connect-ui`): its modules are bundled in one pass by rolldown (the bundler
 * Vite itself runs on) and evaluated as one module, which on a large app is several times faster than
 * the dev module runner's module-by-module transform. Anything that goes wrong on that path — a file
 * that does not bundle or throws while evaluating — is loaded again through the module runner, so
 * errors name their file and line exactly as `fw dev` reports them. (The dev server keeps the runner:
 * it reloads single files.)
 */
export async function loadAppOnce(root: string): Promise<AppDefinition> {
  const files = await appModuleFiles(root);
  let modules: Record<string, Record<string, unknown>> | undefined;
  try {
    modules = await bundleAndImport(root, files);
  } catch {
    // Reported precisely by the module runner below.
  }
  if (modules !== undefined) {
    const byFile = new Map(files.map((file, i) => [file, modules[`m${i}`]!]));
    // Validation problems (a missing default export, an undefined policy) are the same on both paths.
    return assembleApp(root, async (file) => byFile.get(file) ?? Promise.reject(new AppLoadError([{ file, message: 'was not bundled (internal error).' }])));
  }
  const loader = await createAppLoader(root);
  try {
    return await loader.load();
  } finally {
    await loader.close();
  }
}

/** One ESM bundle re-exporting each file's namespace as `m<i>`; packages (fw included) stay external. */
export async function bundleAppModules(root: string, files: readonly string[]): Promise<string> {
  const { rolldown } = await import('rolldown');
  const source = files.map((file, i) => `export * as m${i} from ${JSON.stringify(file)};`).join('\n');
  const bundle = await rolldown({
    input: entryId,
    cwd: root,
    logLevel: 'silent',
    external: (id) => id !== entryId && !id.startsWith('.') && !path.isAbsolute(id),
    plugins: [{ name: 'fw:app-modules', resolveId: (id) => (id === entryId ? id : null), load: (id) => (id === entryId ? source : null) }],
  });
  try {
    const { output } = await bundle.generate({ format: 'esm' });
    return output[0].code;
  } finally {
    await bundle.close();
  }
}

async function bundleAndImport(root: string, files: readonly string[]): Promise<Record<string, Record<string, unknown>>> {
  const code = await bundleAppModules(root, files);
  // Inside the app, so its packages resolve from its node_modules; a fresh name, so a second load in
  // the same process evaluates the app afresh.
  const dir = path.join(root, '.fw', 'cache');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `backend-${randomUUID()}.mjs`);
  await writeFile(file, code);
  try {
    return (await import(pathToFileURL(file).href)) as Record<string, Record<string, unknown>>;
  } finally {
    await rm(file, { force: true });
  }
}
