// The bridge between this web app and its backend: components import hooks from here, never from
// src/fw/_generated directly. `fw generate` (run by `fw dev`) keeps the api it reads up to date.
import { createFwReact } from 'fwjs/react';
import { api } from '../../../src/fw/_generated/api.ts';

export { api };
export const { FwProvider, useCommand, useQuery, useLiveQuery, usePaginatedLiveQuery, useFwRuntime } = createFwReact(api);
