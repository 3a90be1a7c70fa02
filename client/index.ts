/**
 * fw's browser and Node client: typed calls to an app's commands and queries, and an SSE reader.
 *
 * @example
 *   import { createClient } from 'fw/client';
 *   import { api } from '../src/fw/_generated/api.ts';
 *   const client = createClient({ apiUrl: 'http://127.0.0.1:3100', api });
 *   const note = await client.command('createNote', { title: 'Hello' });
 */
export { createClient, type CallOptions, type ClientOptions, type DevAuth, type FwClient, type GetToken } from './client.ts';
export { FwError, type ClientErrorCode, type Diagnostic, type FwErrorCode, type FwErrorInit, type ServerErrorCode } from './errors.ts';
export { readEventStream, type ReadEventStreamOptions, type SseEvent } from './sse.ts';
export type {
  ApiShape,
  CommandName,
  CommandRefOf,
  CommandTarget,
  EntryRef,
  EntryRefKind,
  InputOf,
  LiveQueryName,
  QueryName,
  QueryRefOf,
  QueryTarget,
  ResultOf,
  Serialized,
} from './api-types.ts';
