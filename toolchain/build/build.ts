import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FwFailure } from '../../runtime/core/failure.ts';
import { fwVersion } from '../../runtime/core/version.ts';
import { withProductionNodeEnv } from '../../runtime/config/environment.ts';
import { generateBeforeBuild } from '../../plugin/generate/build-generation.ts';
import { bundleAppModules, loadAppOnce } from '../../plugin/load-app-once.ts';
import { appModuleFiles, assembleApp } from '../../plugin/load-app.ts';
import { AppLoadError } from '../../plugin/app-load-error.ts';

/** Where `fw build` writes, relative to the app root. */
export const BUILD_DIR = '.fw/build';

/** `.fw/build/server/manifest.json`: which export of `app.mjs` holds which source module. */
export interface ServerBuildManifest {
  fwVersion: string;
  builtAt: string;
  /** Bundle file, relative to the manifest. */
  bundle: string;
  /** Source file relative to the app root (`src/commands/createNote.ts`) → export name in the bundle. */
  modules: Record<string, string>;
  entries: string[];
}

export interface BuildOptions {
  root: string;
  /** Build web/ too when it has a Vite config (default true). */
  web?: boolean;
  /** Where to write, absolute or relative to the root (default `.fw/build`): `server/` and `web/` inside. */
  outDir?: string;
}

export interface BuildResult {
  ok: true;
  /** The server bundle's directory. */
  server: string;
  /** The built web assets' directory, or null when there is none. */
  web: string | null;
  durationMs: number;
  notes: string[];
}

/**
 * `fw build`: first `src/fw/_generated/` brought up to date (the web bundle imports the typed client),
 * then the backend as one ESM bundle (`.fw/build/server/app.mjs`, packages external, so it
 * loads without Vite or rolldown) plus a manifest naming each module, and web/ through `vite build`.
 * The bundle is evaluated once before it is kept, so an app that would not start does not build.
 */
export async function buildApp(options: BuildOptions): Promise<BuildResult> {
  const started = Date.now();
  const root = path.resolve(options.root);
  const outDir = path.resolve(root, options.outDir ?? BUILD_DIR);
  const notes: string[] = [];
  const regenerated = await generateBeforeBuild(root);
  if (regenerated.length > 0) notes.push(`regenerated ${regenerated.join(', ')} (older than the entries); commit them with the change.`);
  const server = await buildServer(root, path.join(outDir, 'server'));
  const web = options.web === false ? null : await buildWeb(root, path.join(outDir, 'web'), notes);
  return { ok: true, server: server.dir, web, durationMs: Date.now() - started, notes };
}

/**
 * The backend half of `fw build`: bundles `src/` into `<serverDir>/app.mjs`, evaluates it the way
 * `fw start` will (plain Node, no Vite), then writes `manifest.json`. Fails with `build_failed`
 * naming the source file when the bundle does not build or does not evaluate.
 */
export async function buildServer(root: string, serverDir: string): Promise<{ dir: string; entries: string[] }> {
  const files = await appModuleFiles(root);
  if (files.length === 0) throw new FwFailure('build_failed', `No backend sources under ${path.join(root, 'src')}.`, { suggestions: ['fw build --root <app directory>'] });

  let code: string;
  try {
    code = await bundleAppModules(root, files);
  } catch (error) {
    // The module runner names the file and line; rethrow its AppLoadError when it finds the problem.
    await loadAppOnce(root);
    throw new FwFailure('build_failed', `The backend did not bundle: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  await rm(serverDir, { recursive: true, force: true });
  await mkdir(serverDir, { recursive: true });
  const bundleFile = path.join(serverDir, 'app.mjs');
  await writeFile(bundleFile, code);
  const modules = Object.fromEntries(files.map((file, i) => [toRel(root, file), `m${i}`]));
  let app: Awaited<ReturnType<typeof loadBuiltApp>>;
  try {
    app = await loadBuiltApp(root, bundleFile, modules);
  } catch (error) {
    if (error instanceof FwFailure || error instanceof AppLoadError) throw error;
    throw evaluationFailure(root, bundleFile, code, error);
  }
  const manifest: ServerBuildManifest = { fwVersion, builtAt: new Date().toISOString(), bundle: 'app.mjs', modules, entries: [...app.entries.keys()] };
  await writeFile(path.join(serverDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return { dir: serverDir, entries: manifest.entries };
}

/**
 * A bundle that throws while it loads, located in its source file: rolldown heads each module's code
 * with a `// src/…` comment, and the error's stack names the bundle line.
 */
function evaluationFailure(root: string, bundleFile: string, code: string, error: unknown): FwFailure {
  const message = error instanceof Error ? error.message : String(error);
  const after = ((error as Error)?.stack ?? '').split(`${path.basename(bundleFile)}:`)[1];
  const line = after === undefined ? undefined : /^(\d+):\d+/.exec(after)?.[1];
  const source = line === undefined ? undefined : code.split('\n').slice(0, Number(line)).reverse().find((l) => /^\/\/ src\/\S+$/.test(l))?.slice(3);
  return new FwFailure(
    'build_failed',
    `The production bundle of the backend throws while loading${source ? ` (in ${source})` : ''}: ${message}. Under fw dev, Vite's module runner loads it; fw start runs it on plain Node, without Vite-only features such as import.meta.env or import.meta.glob.`,
    {
      diagnostics: [{ path: source ?? path.relative(root, bundleFile), code: 'build_evaluation_failed', message: `Throws when the built backend loads: ${message}` }],
      suggestions: ['fw build --json'],
      cause: error,
    },
  );
}

/** Assembles the app from a built bundle: no Vite, no rolldown. */
export async function loadBuiltApp(root: string, bundleFile: string, modules: Record<string, string>) {
  const namespace = (await import(pathToFileURL(bundleFile).href)) as Record<string, Record<string, unknown>>;
  return assembleApp(root, async (file) => {
    const name = modules[toRel(root, file)];
    const mod = name === undefined ? undefined : namespace[name];
    if (!mod) {
      throw new FwFailure('build_stale', `${toRel(root, file)} is not in the build (${path.relative(root, bundleFile)}): the sources changed since \`fw build\`.`, {
        suggestions: ['fw build'],
      });
    }
    return mod;
  });
}

/** The web half of `fw build`: `vite build` of a Vite web/ into `outDir`; null (with a note) for none or Nuxt. */
export async function buildWeb(root: string, outDir: string, notes: string[]): Promise<string | null> {
  const webRoot = path.join(root, 'web');
  if (!existsSync(webRoot)) return null;
  const has = (names: string[]) => names.some((name) => existsSync(path.join(webRoot, name)));
  if (has(['nuxt.config.ts', 'nuxt.config.js', 'nuxt.config.mjs'])) {
    notes.push('web/ is a Nuxt app: build and serve it with Nuxt (nuxi build web); fw start serves the API only.');
    return null;
  }
  if (!has(['vite.config.ts', 'vite.config.js', 'vite.config.mjs', 'vite.config.mts'])) {
    notes.push('web/ has no vite.config: skipped.');
    return null;
  }
  const { build } = await import('vite');
  try {
    // An inherited NODE_ENV=test (Vitest's) would make Vite ship React's development build.
    await withProductionNodeEnv(() => build({ root: webRoot, logLevel: 'warn', build: { outDir, emptyOutDir: true } }));
  } catch (error) {
    const id = (error as { id?: string }).id;
    throw new FwFailure('build_failed', `vite build web failed${id ? ` in ${path.relative(root, id)}` : ''}: ${error instanceof Error ? error.message : String(error)}`, {
      suggestions: ['fw dev  (the web dev server reports the same error with its location)'],
      cause: error,
    });
  }
  return outDir;
}

function toRel(root: string, file: string): string {
  return path.relative(root, file).split(path.sep).join('/');
}
