import { type CallerOptions, requestHeaders } from '../request-headers.ts';

/**
 * Where the provider's runtime is and who its calls speak for, for requests fw's hooks do not make
 * themselves (an AI SDK chat transport, a file upload).
 */
export interface FwRuntime {
  /** The runtime's base URL without a trailing slash; `''` is the page's own origin, so `${apiUrl}/ai/agents/chat` works for both. */
  apiUrl: string;
  /** The identity headers of the next request: the dev headers and the bearer token (`getToken` is asked afresh each time). */
  headers(): Promise<Record<string, string>>;
}

/** The runtime of one provider: `apiUrl` as the client reads it, and the client's identity headers. */
export function createFwRuntime(apiUrl: string, caller: CallerOptions): FwRuntime {
  return {
    apiUrl: apiUrl.replace(/\/+$/, ''),
    async headers() {
      // The request's own content type and accept header are the caller's business, not the identity's.
      const { 'content-type': _contentType, accept: _accept, ...identity } = await requestHeaders(caller, '*/*');
      return identity;
    },
  };
}
