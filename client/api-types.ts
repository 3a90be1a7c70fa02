/**
 * The contract between generated code and the client: `src/fw/_generated/api.ts` exports an `api`
 * object of EntryRefs (one per command, query and liveQuery) and of ExternalRefs (one per entry of an
 * external service), and the client, React hooks and Vue composables take their names, routes, types
 * and table sets from it.
 *
 * @example generated
 *   import type createNote from '../../commands/createNote.ts';
 *   export const api = {
 *     commands: { createNote: { kind: 'command', name: 'createNote', reads: [], writes: ['notes'] } as EntryRef<'command', typeof createNote> },
 *     queries: {}, liveQueries: {},
 *     external: { tickets: { commands: { createTicket: { kind: 'command', service: 'tickets', name: 'createTicket', qualifiedName: 'tickets.createTicket' } as ExternalRef<'command', { subject: string }, unknown> }, queries: {} } },
 *   } as const;
 */

export type EntryRefKind = 'command' | 'query' | 'liveQuery';

/** Phantom types an entry definition carries (see `runtime/core/entry-types.ts` EntryTypes). */
interface HasTypes<I, R> {
  __types?: { input: I; args: unknown; result: R };
}

type InputOfDefinition<E> = E extends HasTypes<infer I, any> ? I : never;
type ResultOfDefinition<E> = E extends HasTypes<any, infer R> ? R : never;

/** A reference to one backend entry, with the tables it reads and writes (from the capability map). */
export interface EntryRef<K extends EntryRefKind = EntryRefKind, E = unknown> {
  readonly kind: K;
  readonly name: string;
  readonly reads: readonly string[];
  readonly writes: readonly string[];
  /** Type-only: never present at run time. */
  readonly __entry?: E;
}

export type ExternalRefKind = 'command' | 'query';

/**
 * A reference to one entry of an external service (the external runtime protocol), typed by its
 * manifest's argsSchema. Routes: `POST /external/<service>/commands/<name>` (or `/queries/`).
 *
 * @example
 *   { kind: 'command', service: 'tickets', name: 'createTicket', qualifiedName: 'tickets.createTicket' } as ExternalRef<'command', { subject: string }, unknown>
 */
export interface ExternalRef<K extends ExternalRefKind = ExternalRefKind, Args = Record<string, unknown>, Result = unknown> {
  readonly kind: K;
  readonly service: string;
  readonly name: string;
  /** `<service>.<name>`, e.g. `tickets.createTicket`. */
  readonly qualifiedName: string;
  /** Type-only: never present at run time. */
  readonly __args?: Args;
  /** Type-only: never present at run time. */
  readonly __result?: Result;
}

/** One external service in the generated `api.external`. */
export interface ExternalServiceShape {
  readonly commands: Readonly<Record<string, ExternalRef<'command', any, any>>>;
  readonly queries: Readonly<Record<string, ExternalRef<'query', any, any>>>;
}

/** The generated `api` object. */
export interface ApiShape {
  readonly commands: Readonly<Record<string, EntryRef<'command'>>>;
  readonly queries: Readonly<Record<string, EntryRef<'query'>>>;
  readonly liveQueries: Readonly<Record<string, EntryRef<'liveQuery'>>>;
  /** External services by name; absent in api files generated before the external protocol. */
  readonly external?: Readonly<Record<string, ExternalServiceShape>>;
}

/**
 * What JSON does to a value on the way to the client: dates become strings, functions and
 * undefined members disappear, objects with toJSON take its shape.
 */
export type Serialized<T> = T extends Date
  ? string
  : T extends { toJSON(): infer J }
    ? Serialized<J>
    : T extends string | number | boolean | null
      ? T
      : T extends bigint | symbol | ((...args: any[]) => any) | undefined
        ? never
        : T extends readonly (infer U)[]
          ? Serialized<U>[]
          : T extends object
            ? { [K in keyof T as T[K] extends (...args: any[]) => any ? never : K]: Serialized<T[K]> }
            : unknown;

/** The args a caller sends to the entry behind `R`. */
export type InputOf<R> = R extends EntryRef<any, infer E> ? InputOfDefinition<E> : never;
/** What the entry behind `R` returns, as received over the wire. */
export type ResultOf<R> = R extends EntryRef<any, infer E> ? Serialized<ResultOfDefinition<E>> : never;

export type CommandName<A extends ApiShape> = keyof A['commands'] & string;
export type QueryName<A extends ApiShape> = keyof A['queries'] & string;
export type LiveQueryName<A extends ApiShape> = keyof A['liveQueries'] & string;

/** What a command call takes: a command's name in `A`, or an EntryRef (`api.commands.createNote`). */
export type CommandTarget<A extends ApiShape> = CommandName<A> | EntryRef<'command', any>;
/** What a one-shot read takes: a query's or liveQuery's name in `A`, or an EntryRef. */
export type QueryTarget<A extends ApiShape> = QueryName<A> | LiveQueryName<A> | EntryRef<'query' | 'liveQuery', any>;

/** What a live subscription takes: a liveQuery's name in `A`, or an EntryRef (`api.liveQueries.liveNotes`). */
export type LiveQueryTarget<A extends ApiShape> = LiveQueryName<A> | EntryRef<'liveQuery', any>;

/** The EntryRef behind a command target. */
export type CommandRefOf<A extends ApiShape, T> = T extends EntryRef<any, any>
  ? T
  : T extends keyof A['commands']
    ? A['commands'][T]
    : never;
/** The EntryRef behind a query target (queries first, then liveQueries). */
export type QueryRefOf<A extends ApiShape, T> = T extends EntryRef<any, any>
  ? T
  : T extends keyof A['queries']
    ? A['queries'][T]
    : T extends keyof A['liveQueries']
      ? A['liveQueries'][T]
      : never;
/** The EntryRef behind a live subscription target. */
export type LiveQueryRefOf<A extends ApiShape, T> = T extends EntryRef<any, any>
  ? T
  : T extends keyof A['liveQueries']
    ? A['liveQueries'][T]
    : never;

/** The external services of `A`, or none for an api generated without them. */
type ExternalServicesOf<A> = A extends { readonly external: infer X } ? X : {};
type ExternalGroupKey = { command: 'commands'; query: 'queries' };

/** `<service>.<name>` of every external entry of kind `K` in `A`. */
type QualifiedNames<A, K extends ExternalRefKind> = {
  [S in keyof ExternalServicesOf<A> & string]: ExternalServicesOf<A>[S] extends { readonly [G in ExternalGroupKey[K]]: infer Group }
    ? `${S}.${keyof Group & string}`
    : never;
}[keyof ExternalServicesOf<A> & string];

/** The ExternalRef behind a qualified name of kind `K` (service names cannot contain dots). */
type ExternalRefByName<A, K extends ExternalRefKind, Q> = Q extends `${infer S}.${infer N}`
  ? S extends keyof ExternalServicesOf<A>
    ? ExternalServicesOf<A>[S] extends { readonly [G in ExternalGroupKey[K]]: infer Group }
      ? N extends keyof Group
        ? Group[N]
        : never
      : never
    : never
  : never;

/** The qualified names of the external commands of `A`, e.g. `'tickets.createTicket'`. */
export type ExternalCommandName<A extends ApiShape> = QualifiedNames<A, 'command'>;
/** The qualified names of the external queries of `A`, e.g. `'tickets.listTickets'`. */
export type ExternalQueryName<A extends ApiShape> = QualifiedNames<A, 'query'>;

/** What an external command call takes: a qualified name in `A`, or an ExternalRef (`api.external.tickets.commands.createTicket`). */
export type ExternalCommandTarget<A extends ApiShape> = ExternalCommandName<A> | ExternalRef<'command', any, any>;
/** What an external query call takes: a qualified name in `A`, or an ExternalRef (`api.external.tickets.queries.listTickets`). */
export type ExternalQueryTarget<A extends ApiShape> = ExternalQueryName<A> | ExternalRef<'query', any, any>;

/** The ExternalRef behind an external command target. */
export type ExternalCommandRefOf<A extends ApiShape, T> = T extends ExternalRef<any, any, any> ? T : ExternalRefByName<A, 'command', T>;
/** The ExternalRef behind an external query target. */
export type ExternalQueryRefOf<A extends ApiShape, T> = T extends ExternalRef<any, any, any> ? T : ExternalRefByName<A, 'query', T>;

/** The args a caller sends to the external entry behind `R` (from its manifest's argsSchema). */
export type ExternalArgsOf<R> = R extends ExternalRef<any, infer Args, any> ? Args : never;
/** What the external entry behind `R` returns (`unknown` unless the api says more). */
export type ExternalResultOf<R> = R extends ExternalRef<any, any, infer Result> ? Result : never;

/** The `page` argument of a paginated liveQuery (`page: paginationArgs` in its args). */
interface PageArgsShape {
  cursor: string | null;
  numItems: number;
}

/** The liveQueries of `A` whose args take a `page` (paginated with `paginate`). */
export type PaginatedLiveQueryName<A extends ApiShape> = {
  [K in LiveQueryName<A>]: InputOf<A['liveQueries'][K]> extends { page: PageArgsShape } ? K : never;
}[LiveQueryName<A>];
/** What a paginated subscription takes: a paginated liveQuery's name in `A`, or its EntryRef. */
export type PaginatedLiveQueryTarget<A extends ApiShape> = PaginatedLiveQueryName<A> | EntryRef<'liveQuery', any>;
/** The args of a paginated liveQuery without `page` (the hooks own it). */
export type PaginatedArgsOf<R> = Omit<InputOf<R>, 'page'>;
/** One row of a paginated liveQuery's pages. */
export type PageItemOf<R> = ResultOf<R> extends { page: ReadonlyArray<infer Row> } ? Row : never;
