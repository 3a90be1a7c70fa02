import { inject, type InjectionKey } from 'vue';
import type { ApiShape } from '../api-types.ts';
import { canonicalJson } from '../../runtime/core/canonical-json.ts';
import { createClient, type DevAuth, type FwClient, type GetToken } from '../client.ts';
import type { LiveRetryOptions } from '../live.ts';
import { createLiveStore, type LiveStore } from '../live-store.ts';
import { createQueryStore, type QueryStore } from '../query-store.ts';

/** What `app.use(fw, options)` takes. */
export interface FwVueOptions {
  /** The runtime's base URL; `''` or `'/'` means the page's own origin. */
  apiUrl: string;
  /** Dev-headers identity, for local development only. */
  devAuth?: DevAuth;
  /** Returns the bearer token for each call and every live (re)connect. */
  getToken?: GetToken;
  /** How long unused query results stay cached (ms, default 5 minutes). */
  gcTime?: number;
  /** Reconnection backoff of the live stream (default 250 ms doubling to 15 s). */
  live?: LiveRetryOptions;
  /**
   * Rendering on the server (Nuxt SSR): composables render their loading state and open nothing (no
   * request, no live stream), so the page hydrates as the browser renders it first. Calls through
   * `useFwClient()` work on both sides, e.g. inside `useAsyncData`.
   */
  server?: boolean;
  /** The fetch to use (default: the global one), e.g. Nuxt's `$fetch.raw`-backed fetch on the server. */
  fetch?: typeof globalThis.fetch;
}

/** What the plugin provides to the composables of one app. */
export interface FwVueContext<A extends ApiShape = ApiShape> {
  api: A;
  client: FwClient<A>;
  store: QueryStore;
  /** The live subscriptions of the app: one per key, all on the client's one stream. */
  liveStore: LiveStore;
  /** Runtime URL and caller identity: part of every cache key, so identities never share results. */
  identity: string;
  server: boolean;
}

/** One key for every fw Vue app: composables find the context the nearest `app.use(fw)` provided. */
export const fwContextKey: InjectionKey<FwVueContext> = Symbol('fw');

/** Builds the context `app.use(fw, options)` provides: a client, a query cache and the live subscriptions. */
export function createFwVueContext<A extends ApiShape>(api: A, options: FwVueOptions): FwVueContext<A> {
  if (!options || typeof options.apiUrl !== 'string') {
    throw new TypeError('fw: app.use(fw, { apiUrl }) needs apiUrl, e.g. "http://127.0.0.1:3100" (or "/" for the page\'s origin).');
  }
  return {
    api,
    client: createClient({
      apiUrl: options.apiUrl,
      api,
      ...(options.devAuth ? { devAuth: options.devAuth } : {}),
      ...(options.getToken ? { getToken: options.getToken } : {}),
      ...(options.live ? { live: options.live } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    }),
    store: createQueryStore({ ...(options.gcTime !== undefined ? { gcTime: options.gcTime } : {}) }),
    liveStore: createLiveStore(),
    identity: canonicalJson([options.apiUrl, options.devAuth ?? null]),
    server: options.server ?? false,
  };
}

/** The provided context; throws naming the fix when the plugin is missing. */
export function useFwContext<A extends ApiShape>(composable: string): FwVueContext<A> {
  const context = inject(fwContextKey, null);
  if (!context) {
    throw new Error(
      `fw: ${composable}() needs the fw plugin: app.use(fw, { apiUrl: "…" }) (in Nuxt: the plugins/fw.client.ts and fw.server.ts of \`fw make ui --framework nuxt\`), and must be called in setup() or an app.runWithContext() scope.`,
    );
  }
  return context as unknown as FwVueContext<A>;
}
