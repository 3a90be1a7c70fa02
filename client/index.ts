/**
 * fw's browser and Node client: typed calls to an app's commands and queries, live subscriptions to
 * its liveQueries over one multiplexed stream, and an SSE reader.
 *
 * @example
 *   import { createClient } from 'fwjs/client';
 *   import { api } from '../src/fw/_generated/api.ts';
 *   const client = createClient({ apiUrl: 'http://127.0.0.1:3100', api });
 *   const note = await client.command('createNote', { title: 'Hello' });
 *   const subscription = client.live('liveNotes', {}, { onData: (notes) => console.log(notes.length) });
 */
export { createClient, type CallOptions, type ClientOptions, type DevAuth, type FwClient, type GetToken } from './client.ts';
export type { LiveHandlers, LiveOptions, LiveRetryOptions, LiveStatus, LiveSubscription } from './live.ts';
export { FwError, type ClientErrorCode, type Diagnostic, type FwErrorCode, type FwErrorInit, type ServerErrorCode } from './errors.ts';
export { readEventStream, type ReadEventStreamOptions, type SseEvent } from './sse.ts';
export type {
  ApiShape,
  CommandName,
  CommandRefOf,
  CommandTarget,
  EntryRef,
  EntryRefKind,
  ExternalArgsOf,
  ExternalCommandName,
  ExternalCommandRefOf,
  ExternalCommandTarget,
  ExternalQueryName,
  ExternalQueryRefOf,
  ExternalQueryTarget,
  ExternalRef,
  ExternalRefKind,
  ExternalResultOf,
  ExternalServiceShape,
  InputOf,
  LiveQueryName,
  LiveQueryRefOf,
  LiveQueryTarget,
  QueryName,
  QueryRefOf,
  QueryTarget,
  ResultOf,
  Serialized,
} from './api-types.ts';
