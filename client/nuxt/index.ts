/**
 * Helpers for an fw app's Nuxt plugins and server routes. They take the values Nuxt gives
 * (`useRuntimeConfig()`), so they need no Nuxt import of their own.
 *
 * @example
 *   // web/plugins/fw.client.ts
 *   import { fwNuxtOptions } from 'fwjs/nuxt';
 *   import { fw } from '../composables/fw';
 *   export default defineNuxtPlugin((nuxtApp) => {
 *     nuxtApp.vueApp.use(fw, fwNuxtOptions(useRuntimeConfig(), { devAuth: import.meta.dev ? devAuth : undefined }));
 *   });
 */
import type { FwVueOptions } from '../vue/context.ts';

/** Where `fw dev` serves the API unless told otherwise. */
export const defaultFwUrl = 'http://127.0.0.1:3100';

/** The part of Nuxt's runtime config fw reads: `runtimeConfig.public.fwUrl` (env: `NUXT_PUBLIC_FW_URL`). */
export interface FwRuntimeConfig {
  public: { fwUrl?: string | undefined; [key: string]: unknown };
}

/**
 * The runtime's URL from Nuxt's runtime config, defaulting to {@link defaultFwUrl}. A path (`/`, which
 * fw's Nuxt module sets in dev: the runtime answers on Nuxt's own origin) is resolved against `origin`
 * when one is given — on the server, where there is no page to be relative to (`useRequestURL().origin`).
 */
export function fwUrlFrom(config: FwRuntimeConfig, origin?: string): string {
  const url = config.public.fwUrl;
  if (typeof url !== 'string' || url === '') return defaultFwUrl;
  if (url.startsWith('/') && origin) return new URL(url, origin).href.replace(/\/+$/, '');
  return url;
}

/**
 * Plugin options for `nuxtApp.vueApp.use(fw, …)`: the runtime URL from the runtime config, plus
 * yours (devAuth, getToken, gcTime…). Pass `server: true` and the request's origin from the server plugin.
 */
export function fwNuxtOptions(config: FwRuntimeConfig, options: Omit<FwVueOptions, 'apiUrl'> = {}, origin?: string): FwVueOptions {
  return { ...options, apiUrl: fwUrlFrom(config, origin) };
}

export interface FwHealthReport {
  /** True when the runtime answered `/health` with 2xx. */
  ok: boolean;
  /** The runtime URL the config points at. */
  fwUrl: string;
  /** The HTTP status of `/health`, 0 when the runtime could not be reached. */
  status: number;
  /** The runtime's `/health` body, or the reason it could not be read. */
  health: unknown;
}

/**
 * Asks the runtime at `fwUrl` for `/health` (for a server route such as `server/api/fw-health.get.ts`).
 * Never throws: an unreachable runtime is `{ ok: false, status: 0 }`.
 */
export async function fetchFwHealth(fwUrl: string, options: { fetch?: typeof globalThis.fetch; timeoutMs?: number } = {}): Promise<FwHealthReport> {
  const url = `${fwUrl.replace(/\/+$/, '')}/health`;
  try {
    const response = await (options.fetch ?? globalThis.fetch)(url, { signal: AbortSignal.timeout(options.timeoutMs ?? 5000) });
    const text = await response.text();
    let health: unknown = text;
    try {
      health = JSON.parse(text);
    } catch {}
    return { ok: response.ok, fwUrl, status: response.status, health };
  } catch (error) {
    return { ok: false, fwUrl, status: 0, health: { error: error instanceof Error ? error.message : String(error) } };
  }
}
