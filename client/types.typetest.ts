// Type tests: checked by `npm run typecheck`, never run; every @ts-expect-error must stay an error.
import { z } from 'zod';
import { command, liveQuery, query } from '../runtime/core/entries.ts';
import type { EntryRef, ExternalCommandName, ExternalRef } from './api-types.ts';
import { createClient, FwError } from './index.ts';
import { createFwReact } from './react/index.ts';

interface Note {
  id: string;
  title: string;
  created_at: Date;
}
declare const note: Note;

const createNote = command({ args: { title: z.string(), pinned: z.boolean().default(false) }, handler: () => note });
const listNotes = query({ args: { limit: z.number().optional() }, handler: () => [note] });
const liveNotes = liveQuery({ handler: () => ({ notes: [note], at: new Date() }) });

const api = {
  commands: { createNote: { kind: 'command', name: 'createNote', reads: [], writes: ['notes'] } as EntryRef<'command', typeof createNote> },
  queries: { listNotes: { kind: 'query', name: 'listNotes', reads: ['notes'], writes: [] } as EntryRef<'query', typeof listNotes> },
  liveQueries: { liveNotes: { kind: 'liveQuery', name: 'liveNotes', reads: ['notes'], writes: [] } as EntryRef<'liveQuery', typeof liveNotes> },
} as const;

const client = createClient({ apiUrl: '/', api });

export async function clientCalls() {
  const created = await client.command('createNote', { title: 'x' });
  const title: string = created.title;
  const createdAt: string = created.created_at;
  // @ts-expect-error a Date arrives as a string
  const asDate: Date = created.created_at;

  const byRef = await client.command(api.commands.createNote, { title: 'x', pinned: true });
  const byRefTitle: string = byRef.title;

  const notes = await client.query('listNotes', {});
  const firstTitle: string | undefined = notes[0]?.title;
  const live = await client.query('liveNotes', {});
  const liveAt: string = live.at;

  // @ts-expect-error unknown command name
  await client.command('deleteNote', {});
  // @ts-expect-error a query is not a command
  await client.command('listNotes', {});
  // @ts-expect-error a query ref is not a command
  await client.command(api.queries.listNotes, {});
  // @ts-expect-error a command is not a query
  await client.query('createNote', { title: 'x' });
  // @ts-expect-error title must be a string
  await client.command('createNote', { title: 1 });
  // @ts-expect-error title is required
  await client.command('createNote', {});
  // @ts-expect-error limit must be a number
  await client.query('listNotes', { limit: '5' });
  // @ts-expect-error no such member on the result
  created.body;

  return { title, createdAt, asDate, byRefTitle, firstTitle, liveAt };
}

// In the generator's shape: an api with an external service (a dash in its name needs quotes).
const externalApi = {
  ...api,
  external: {
    tickets: {
      commands: {
        createTicket: { kind: 'command', service: 'tickets', name: 'createTicket', qualifiedName: 'tickets.createTicket' } as ExternalRef<
          'command',
          { subject: string; priority?: 'low' | 'high' },
          unknown
        >,
      },
      queries: {
        listTickets: { kind: 'query', service: 'tickets', name: 'listTickets', qualifiedName: 'tickets.listTickets' } as ExternalRef<'query', Record<string, unknown>, unknown>,
      },
    },
    'support-desk': {
      commands: {},
      queries: {
        search: { kind: 'query', service: 'support-desk', name: 'search', qualifiedName: 'support-desk.search' } as ExternalRef<'query', { text: string }, { hits: number }>,
      },
    },
  },
} as const;

const externalClient = createClient({ apiUrl: '/', api: externalApi });

export async function externalCalls() {
  const names: ExternalCommandName<typeof externalApi> = 'tickets.createTicket';
  const created: unknown = await externalClient.externalCommand('tickets.createTicket', { subject: 'x' });
  await externalClient.externalCommand('tickets.createTicket', { subject: 'x', priority: 'high' });
  await externalClient.externalCommand(externalApi.external.tickets.commands.createTicket, { subject: 'x' });
  const tickets: unknown = await externalClient.externalQuery(externalApi.external.tickets.queries.listTickets, {});
  const found = await externalClient.externalQuery(externalApi.external['support-desk'].queries.search, { text: 'printer' });
  const hits: number = found.hits;
  await externalClient.externalQuery('support-desk.search', { text: 'printer' });

  // @ts-expect-error unknown qualified name
  await externalClient.externalCommand('tickets.deleteTicket', {});
  // @ts-expect-error unknown service
  await externalClient.externalCommand('billing.createTicket', { subject: 'x' });
  // @ts-expect-error a query is not a command
  await externalClient.externalCommand('tickets.listTickets', {});
  // @ts-expect-error a query ref is not a command
  await externalClient.externalCommand(externalApi.external.tickets.queries.listTickets, {});
  // @ts-expect-error a command ref is not a query
  await externalClient.externalQuery(externalApi.external.tickets.commands.createTicket, { subject: 'x' });
  // @ts-expect-error an fw entry is not an external one
  await externalClient.externalQuery(externalApi.queries.listNotes, {});
  // @ts-expect-error subject is required
  await externalClient.externalCommand('tickets.createTicket', {});
  // @ts-expect-error subject must be a string
  await externalClient.externalCommand('tickets.createTicket', { subject: 1 });
  // @ts-expect-error priority is 'low' or 'high'
  await externalClient.externalCommand('tickets.createTicket', { subject: 'x', priority: 'urgent' });
  // @ts-expect-error text is required
  await externalClient.externalQuery(externalApi.external['support-desk'].queries.search, {});
  // @ts-expect-error the result is typed by the ref
  const missing: string = found.total;
  // @ts-expect-error an api generated without external services has no external names
  await client.externalCommand('tickets.createTicket', { subject: 'x' });
  // @ts-expect-error not an external command name
  const badName: ExternalCommandName<typeof externalApi> = 'tickets.listTickets';
  return { names, created, tickets, hits, missing, badName };
}

export function liveSubscriptions() {
  const byName = client.live(
    'liveNotes',
    {},
    {
      onData(result, revision) {
        const at: string = result.at;
        const noteTitle: string | undefined = result.notes[0]?.title;
        // @ts-expect-error a Date arrives as a string
        const asDate: Date = result.at;
        const rev: number = revision;
        return { at, noteTitle, asDate, rev };
      },
      onError: (error) => {
        const code: FwError['code'] = error.code;
        return code;
      },
      onStatus: (status) => {
        // @ts-expect-error not a live status
        const bad: boolean = status === 'open';
        return bad;
      },
    },
    { lastRevision: 42 },
  );
  const byRef = client.live(api.liveQueries.liveNotes, {}, { onData: (result) => result.notes.length });
  byRef.close();
  const status: 'connecting' | 'live' | 'reconnecting' | 'closed' = byName.status;
  const revision: number | undefined = byName.revision;

  // @ts-expect-error a query is not a liveQuery
  client.live('listNotes', {}, { onData: () => {} });
  // @ts-expect-error a query ref is not a liveQuery
  client.live(api.queries.listNotes, {}, { onData: () => {} });
  // @ts-expect-error a command is not a liveQuery
  client.live('createNote', { title: 'x' }, { onData: () => {} });
  // @ts-expect-error onData is required
  client.live('liveNotes', {}, {});
  // @ts-expect-error lastRevision is a number
  client.live('liveNotes', {}, { onData: () => {} }, { lastRevision: '42' });
  return { status, revision };
}

export function errors(error: FwError) {
  const known: boolean = error.code === 'validation_failed' || error.code === 'network_error';
  // @ts-expect-error not an fw error code
  const unknown: boolean = error.code === 'oops';
  const status: number = error.status;
  const traceId: string | undefined = error.traceId;
  const paths: string[] = error.diagnostics.map((d) => d.path);
  return { known, unknown, status, traceId, paths };
}

const { useCommand, useQuery, useLiveQuery, useFwClient } = createFwReact(api);

export function hooks() {
  const list = useQuery('listNotes', { limit: 5 });
  const listed: string | undefined = list.data?.[0]?.created_at;
  const live = useQuery(api.liveQueries.liveNotes, {}, { enabled: false });
  const liveAt: string | undefined = live.data?.at;
  // @ts-expect-error a command cannot be read with useQuery
  useQuery('createNote', { title: 'x' });
  // @ts-expect-error limit must be a number
  useQuery('listNotes', { limit: 'all' });

  const create = useCommand('createNote');
  create.mutate({ title: 'x' });
  // @ts-expect-error title must be a string
  create.mutate({ title: 5 });
  // @ts-expect-error a query cannot be run with useCommand
  useCommand('listNotes');
  const saved: Promise<string> = create.mutateAsync({ title: 'x' }).then((n) => n.created_at);
  // @ts-expect-error Date arrives as a string
  const savedAsDate: Date | undefined = create.data?.created_at;
  const code: string | undefined = create.error?.code;

  const liveNotes = useLiveQuery('liveNotes', {});
  const liveNotesAt: string | undefined = liveNotes.data?.at;
  const liveTitles: string[] | undefined = liveNotes.data?.notes.map((n) => n.title);
  const liveStatus: 'connecting' | 'live' | 'reconnecting' | 'closed' = liveNotes.status;
  const liveRevision: number | undefined = liveNotes.revision;
  const liveCode: string | undefined = liveNotes.error?.code;
  const liveByRef = useLiveQuery(api.liveQueries.liveNotes, {}, { enabled: false });
  // @ts-expect-error data may be undefined before the first snapshot
  const liveAtNow: string = liveByRef.data.at;
  // @ts-expect-error a query cannot be subscribed to with useLiveQuery
  useLiveQuery('listNotes', {});
  // @ts-expect-error a query ref cannot be subscribed to with useLiveQuery
  useLiveQuery(api.queries.listNotes, {});

  const fromContext = useFwClient();
  // @ts-expect-error the provider's client is typed by the same api
  void fromContext.command('nope', {});
  return { listed, liveAt, saved, savedAsDate, code, liveNotesAt, liveTitles, liveStatus, liveRevision, liveCode, liveAtNow };
}
