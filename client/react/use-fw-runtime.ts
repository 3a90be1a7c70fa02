import type { ApiShape } from '../api-types.ts';
import type { FwContext } from './context.ts';
import type { FwRuntime } from './fw-runtime.ts';

export { createFwRuntime, type FwRuntime } from './fw-runtime.ts';

export type UseFwRuntime = () => FwRuntime;

export function createUseFwRuntime<A extends ApiShape>(context: FwContext<A>): UseFwRuntime {
  return function useFwRuntime() {
    return context.useFwContext('useFwRuntime').runtime;
  };
}
