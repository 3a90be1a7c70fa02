import { createContext, type Context, useContext } from 'react';
import type { ApiShape } from '../api-types.ts';
import type { FwClient } from '../client.ts';
import type { LiveStore } from '../live-store.ts';
import type { QueryStore } from '../query-store.ts';
import type { FwRuntime } from './fw-runtime.ts';

/** What FwProvider gives its hooks. */
export interface FwContextValue<A extends ApiShape> {
  client: FwClient<A>;
  store: QueryStore;
  /** The live subscriptions of the subtree, one per key. */
  liveStore: LiveStore;
  /** Runtime URL and caller identity: part of every cache key, so identities never share results. */
  identity: string;
  /** The runtime URL and identity headers, for requests outside the hooks (`useFwRuntime`). */
  runtime: FwRuntime;
}

export interface FwContext<A extends ApiShape> {
  Context: Context<FwContextValue<A> | null>;
  /** The provider's value; throws naming the fix when a hook is used outside FwProvider. */
  useFwContext(hook: string): FwContextValue<A>;
}

/** A context per `createFwReact` call, so two apis (or two tests) never share a provider. */
export function createFwContext<A extends ApiShape>(): FwContext<A> {
  const Context = createContext<FwContextValue<A> | null>(null);
  Context.displayName = 'FwContext';
  return {
    Context,
    useFwContext(hook) {
      const value = useContext(Context);
      if (!value) throw new Error(`fw: ${hook}() must be used inside <FwProvider apiUrl="…">; mount FwProvider once in the app layout.`);
      return value;
    },
  };
}
