/**
 * fw's Vue bindings: a plugin and composables bound to one app's generated api.
 *
 * @example
 *   // web/composables/fw.ts (the bridge: components import from here, never from _generated/)
 *   import { createFwVue } from 'fwjs/vue';
 *   import { api } from '../../src/fw/_generated/api';
 *   export const fw = createFwVue(api);
 *   export const { useFwCommand, useFwQuery, useFwLiveQuery, useFwClient } = fw;
 *
 *   // main.ts
 *   createApp(App).use(fw, { apiUrl: 'http://127.0.0.1:3100', devAuth }).mount('#app');
 */
import type { App, Plugin } from 'vue';
import type { ApiShape } from '../api-types.ts';
import type { FwClient } from '../client.ts';
import {
  type UseFwCommand,
  useFwCommandOf,
  type UseFwExternalCommand,
  useFwExternalCommandOf,
  type UseFwExternalQuery,
  useFwExternalQueryOf,
  type UseFwLiveQuery,
  useFwLiveQueryOf,
  type UseFwQuery,
  useFwQueryOf,
} from './composables.ts';
import { type UseFwPaginatedLiveQuery, useFwPaginatedLiveQueryOf } from './paginated.ts';
import { createFwVueContext, fwContextKey, type FwVueContext, type FwVueOptions, useFwContext } from './context.ts';

export interface FwVue<A extends ApiShape> {
  /** The plugin: `app.use(fw, { apiUrl, devAuth, getToken })` provides one client, cache and live stream to the app. */
  install(app: App, options: FwVueOptions): void;
  /** `const { mutate, mutateAsync, data, error, isPending, reset } = useFwCommand('createNote')` (or `api.commands.createNote`). */
  useFwCommand: UseFwCommand<A>;
  /** `const { data, error, isLoading, refetch } = useFwQuery('listNotes', {})`; args may be a ref, getter or reactive object. */
  useFwQuery: UseFwQuery<A>;
  /** `const { data, error, status, revision } = useFwLiveQuery('liveNotes', {})`: data pushed on every relevant write. */
  useFwLiveQuery: UseFwLiveQuery<A>;
  /** `const { data, error, isLoading } = useFwExternalQuery('tickets.listTickets', {})`: an external service's query, typed by its manifest. */
  useFwExternalQuery: UseFwExternalQuery<A>;
  /** `const { mutate } = useFwExternalCommand('tickets.createTicket')`; the service's queries refresh on success. */
  useFwExternalCommand: UseFwExternalCommand<A>;
  /** `const { results, loadMore, isDone, status } = useFwPaginatedLiveQuery('listTickets', { board })`: every loaded page live (docs/live.md "Pagination"). */
  useFwPaginatedLiveQuery: UseFwPaginatedLiveQuery<A>;
  /** The app's typed client, for calls outside the composables (`await client.query(…)`, e.g. in useAsyncData). */
  useFwClient: () => FwClient<A>;
}

/**
 * Binds the plugin and composables to an api object, typed by its entries.
 *
 * @example
 *   const fw = createFwVue(api);
 *   app.use(fw, { apiUrl: '' });
 *   // in setup():
 *   const search = ref('a');
 *   const found = fw.useFwQuery('findNotes', () => ({ prefix: search.value, limit: 5 }));
 *   const notes = fw.useFwLiveQuery(api.liveQueries.liveNotes, {});
 */
export function createFwVue<A extends ApiShape>(api: A): FwVue<A> {
  return {
    install(app, options) {
      app.provide(fwContextKey, createFwVueContext(api, options) as unknown as FwVueContext);
    },
    useFwCommand: useFwCommandOf as UseFwCommand<A>,
    useFwQuery: useFwQueryOf as UseFwQuery<A>,
    useFwLiveQuery: useFwLiveQueryOf as UseFwLiveQuery<A>,
    useFwExternalQuery: useFwExternalQueryOf as UseFwExternalQuery<A>,
    useFwExternalCommand: useFwExternalCommandOf as UseFwExternalCommand<A>,
    useFwPaginatedLiveQuery: useFwPaginatedLiveQueryOf as UseFwPaginatedLiveQuery<A>,
    useFwClient: () => useFwContext<A>('useFwClient').client,
  };
}

/** The plugin without a bound api: `app.use(fwPlugin, { api, apiUrl })`; composables then take entry refs (`api.queries.x`). */
export const fwPlugin: Plugin<[FwVueOptions & { api: ApiShape }]> = {
  install(app, options) {
    app.provide(fwContextKey, createFwVueContext(options.api, options));
  },
};

type RefsOnly = { commands: {}; queries: {}; liveQueries: {} };

/** Composables that take entry refs, fully typed by them: `useFwQuery(api.queries.listNotes, {})`. */
const refComposables: Pick<FwVue<RefsOnly>, 'useFwCommand' | 'useFwQuery' | 'useFwLiveQuery' | 'useFwPaginatedLiveQuery'> = createFwVue<RefsOnly>({ commands: {}, queries: {}, liveQueries: {} });
export const { useFwCommand, useFwQuery, useFwLiveQuery, useFwPaginatedLiveQuery } = refComposables;

export { createFwVueContext, fwContextKey, type FwVueContext, type FwVueOptions } from './context.ts';
export { FwError } from '../errors.ts';
export type { DevAuth, FwClient, GetToken } from '../client.ts';
export type { LiveRetryOptions, LiveStatus } from '../live.ts';
export type { PaginationStatus } from '../paginated-live.ts';
export type { OptimisticLocalStore, OptimisticUpdate, Updater } from '../optimistic.ts';
export type { UseFwPaginatedLiveQuery, UseFwPaginatedLiveQueryOptions, UseFwPaginatedLiveQueryResult } from './paginated.ts';
export type {
  ReactiveArgs,
  UseFwCommand,
  UseFwCommandOptions,
  UseFwCommandResult,
  UseFwExternalCommand,
  UseFwExternalQuery,
  UseFwLiveQuery,
  UseFwLiveQueryOptions,
  UseFwLiveQueryResult,
  UseFwQuery,
  UseFwQueryOptions,
  UseFwQueryResult,
} from './composables.ts';
