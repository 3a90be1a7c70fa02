import path from 'node:path';
import type { FwPluginOptions } from './vite.ts';
import { resolveConfig } from '../runtime/config/resolve-config.ts';
import type { VariableName } from '../runtime/config/variables.ts';

/** The part of Nuxt fw's module touches, typed here so fw needs no Nuxt import of its own. */
export interface NuxtLike {
  options: { rootDir: string; dev: boolean; runtimeConfig: { public: Record<string, unknown> } };
  hook(name: 'vite:extendConfig', fn: (config: { plugins?: unknown[] }, env: { isClient: boolean; isServer: boolean }) => Promise<void>): unknown;
}

/** Set by `fw dev` on the `nuxt dev` it starts: `0` runs no outbox worker (`fw dev --no-worker`). */
export const NUXT_WORKER_ENV = 'FW_DEV_WORKER' satisfies VariableName;
/** Set by `fw dev` on the `nuxt dev` it starts: `0` runs no typecheck (`fw dev --no-typecheck`). */
export const NUXT_TYPECHECK_ENV = 'FW_DEV_TYPECHECK' satisfies VariableName;

/**
 * fw's Nuxt module: the same dev loop as the Vite plugin gives a Vite `web/`. It adds the fw Vite plugin
 * to Nuxt's client Vite only (the SSR Vite would start a second runtime on the same database), so in
 * `nuxt dev` the app's runtime answers on Nuxt's own origin, backend edits reload without a restart,
 * web/ edits are analysed with their diagnostics in the terminal and Vite's overlay, the app's TypeScript
 * is checked in the background with its errors there too (`FW_DEV_TYPECHECK=0` turns it off), and the generated
 * artifacts stay current; `nuxt build` regenerates a stale client before bundling. In dev it points
 * `runtimeConfig.public.fwUrl` at the page's origin (`/`) unless `NUXT_PUBLIC_FW_URL` says otherwise.
 *
 * @example
 *   // web/nuxt.config.ts
 *   export default defineNuxtConfig({ modules: ['fwjs/nuxt/module'] });
 */
export default function fwNuxtModule(options: FwPluginOptions | undefined, nuxt: NuxtLike): void {
  // web/ is Nuxt's rootDir; the app (src/, fw.config) is its parent.
  const root = options?.root ? path.resolve(nuxt.options.rootDir, options.root) : path.dirname(nuxt.options.rootDir);
  const config = resolveConfig();
  const worker = options?.worker ?? config.get(NUXT_WORKER_ENV);
  const typecheck = options?.typecheck ?? config.get(NUXT_TYPECHECK_ENV);
  // Nuxt's own variable (it fills runtimeConfig.public.fwUrl), read through the same environment.
  if (nuxt.options.dev && !config.appVariable('NUXT_PUBLIC_FW_URL')) nuxt.options.runtimeConfig.public.fwUrl = '/';
  nuxt.hook('vite:extendConfig', async (config, env) => {
    if (!env.isClient) return;
    // Imported here: `nuxt prepare` and `nuxt typecheck` load the module but never start Vite.
    const { default: fw } = await import('./vite.ts');
    (config.plugins ??= []).push(fw({ root, worker, typecheck }));
  });
}

/** Nuxt reads a module's name from here (kit's `defineNuxtModule` would set it); options come inline: `['fwjs/nuxt/module', { worker: false }]`. */
(fwNuxtModule as unknown as { getMeta(): Promise<{ name: string }> }).getMeta = () => Promise.resolve({ name: 'fw' });
