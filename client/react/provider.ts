import { createElement, type ReactElement, type ReactNode, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { ApiShape } from '../api-types.ts';
import { canonicalJson } from '../../runtime/core/canonical-json.ts';
import { createClient, type DevAuth, type GetToken } from '../client.ts';
import type { LiveRetryOptions } from '../live.ts';
import { createLiveStore } from '../live-store.ts';
import { createQueryStore } from '../query-store.ts';
import type { FwContext } from './context.ts';
import { createFwRuntime } from './use-fw-runtime.ts';

export interface FwProviderProps {
  /** The runtime's base URL; `''` or `'/'` means the page's own origin. */
  apiUrl: string;
  /** Dev-headers identity, for local development only. */
  devAuth?: DevAuth;
  /** Returns the bearer token for each call. To switch users, remount the provider (`key={userId}`). */
  getToken?: GetToken;
  /** How long unused query results stay cached (ms, default 5 minutes); read once, when mounted. */
  gcTime?: number;
  /** Reconnection backoff of the live stream (default 250 ms doubling to 15 s); read once, when mounted. */
  live?: LiveRetryOptions;
  children?: ReactNode;
}

/**
 * Builds the FwProvider component of one api: it owns the client, the query cache and the live
 * subscriptions of its subtree (one live stream per provider and identity).
 */
export function createFwProvider<A extends ApiShape>(api: A, { Context }: FwContext<A>): (props: FwProviderProps) => ReactElement {
  return function FwProvider({ apiUrl, devAuth, getToken, gcTime, live, children }) {
    // The latest getToken, without rebuilding the client when callers pass an inline function.
    const getTokenRef = useRef(getToken);
    useLayoutEffect(() => {
      getTokenRef.current = getToken;
    });
    const [store] = useState(() => createQueryStore({ gcTime }));
    const [liveStore] = useState(createLiveStore);
    const [liveOptions] = useState(live);
    // By value: an inline devAuth literal must not look like a new identity on every render.
    const identity = canonicalJson([apiUrl, devAuth ?? null]);
    const value = useMemo(() => {
      const getCurrentToken = () => getTokenRef.current?.();
      return {
        identity,
        store,
        liveStore,
        client: createClient({ apiUrl, api, devAuth, getToken: getCurrentToken, live: liveOptions }),
        runtime: createFwRuntime(apiUrl, { devAuth, getToken: getCurrentToken }),
      };
      // apiUrl and devAuth are captured by identity.
    }, [identity, store, liveStore, liveOptions]);
    return createElement(Context.Provider, { value }, children);
  };
}
