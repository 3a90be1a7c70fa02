import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { z } from 'zod';
import type { Database, Schema } from './schema.ts';

// The entry types that the rest of the runtime builds on, kept below entries.ts (which adds the
// handler contexts and the builders) so that modules needing only these never import the AI context.

/**
 * What the app registers so that names are checked by TypeScript. The app writes `schema` (so `ctx.db`
 * is typed); `fw generate` writes the rest into `src/fw/_generated/api.ts`: `policies` (the names of
 * `src/policies.ts`), `workflows` (the names in `src/workflows/`) and `events` (each event an action or
 * workflow handles `on`, with the payload its args accept). Without them, every name is a `string`.
 *
 * @example
 *   declare module 'fwjs' { interface Register { schema: typeof schema } }
 *   // generated: declare module 'fwjs' { interface Register { policies: 'admin'; workflows: 'escalateTicket'; events: { 'ticket.created': { ticketId: string } } } }
 */
export interface Register {}

type RegisteredSchema = Register extends { schema: infer S } ? S : Schema;
export type AppDatabase = RegisteredSchema extends Schema<any> ? Database<RegisteredSchema> : any;

/** The events registered (name → payload), or any name with any payload when none are. */
type RegisteredEvents = Register extends { events: infer E } ? E : Record<string, unknown>;

/** A name `ctx.emit` accepts and an action or workflow may handle `on`: a registered event. */
export type EventName = Extract<keyof RegisteredEvents, string>;

/** The payload of event `N`: what `ctx.emit(N, payload)` must send and its handlers receive. */
export type EventPayload<N extends string> = N extends keyof RegisteredEvents ? RegisteredEvents[N] : never;

/** `ctx.emit`'s payload parameter: optional when the event's payload may be undefined. */
export type EmitPayload<N extends string> = undefined extends EventPayload<N> ? [payload?: EventPayload<N>] : [payload: EventPayload<N>];

/** The commands and actions `ctx.scheduler` may call (name → args), or any name with any args when none are registered. */
type RegisteredCalls = Register extends { calls: infer C } ? C : Record<string, unknown>;

/** A command or action `ctx.scheduler.runAfter` / `runAt` may call. */
export type CallName = Extract<keyof RegisteredCalls, string>;

/** The args of call `N`. */
export type CallArgs<N extends string> = N extends keyof RegisteredCalls ? RegisteredCalls[N] : never;

/** The scheduler's args parameter: optional when the target needs none (no required field). */
export type CallArgsParameter<N extends string> = {} extends CallArgs<N> ? [args?: CallArgs<N>] : [args: CallArgs<N>];

/** A workflow `ctx.startWorkflow` may start: a registered name, or any string when none are. */
export type WorkflowName = Register extends { workflows: infer W } ? Extract<W, string> : string;

type RegisteredPolicy = Register extends { policies: infer P } ? Extract<P, string> : string & {};

/** Who is calling. `anonymous` callers reach only `public` entries. */
export interface Auth {
  kind: 'anonymous' | 'user' | 'system';
  userId: string | null;
  tenantId: string | null;
  role: string | null;
}

export type EntryKind = 'command' | 'query' | 'liveQuery' | 'action' | 'workflow' | 'endpoint';

/** `public` (anyone), `user` (any signed-in user, the default), `system` (never over HTTP), or a named policy. */
export type PolicyName = 'public' | 'user' | 'system' | RegisteredPolicy;

/** Args may be any Standard Schema (zod, valibot, arktype…) or a plain object of zod schemas. */
export type ArgsInput = StandardSchemaV1 | z.ZodRawShape;

/** The args a handler receives (after validation, defaults and transforms). */
export type InferArgs<A> = A extends StandardSchemaV1
  ? StandardSchemaV1.InferOutput<A>
  : A extends z.ZodRawShape
    ? z.output<z.ZodObject<A>>
    : Record<string, never>;

/** The args a caller sends (before validation). */
export type InferArgsInput<A> = A extends StandardSchemaV1
  ? StandardSchemaV1.InferInput<A>
  : A extends z.ZodRawShape
    ? z.input<z.ZodObject<A>>
    : Record<string, never>;

/** Marks entry definitions; a registry symbol, so two copies of fw recognise each other's entries. */
export const entryBrand = Symbol.for('fw.entry');

export interface EntryDefinition<K extends EntryKind = EntryKind> {
  readonly [entryBrand]: true;
  readonly kind: K;
  readonly args: StandardSchemaV1;
  readonly policy: PolicyName;
  readonly description?: string;
  readonly handler: (ctx: any, args: any) => unknown;
  /** Extra fields of actions, workflows and endpoints, kept for their runtimes. */
  readonly options: Readonly<Record<string, unknown>>;
}

/** Phantom types of an entry: what callers send (`input`), what the handler gets (`args`), what it returns. */
export interface EntryTypes<I, A, R> {
  input: I;
  args: A;
  result: R;
}

export interface Command<I = unknown, A = unknown, R = unknown> extends EntryDefinition<'command'> {
  readonly __types?: EntryTypes<I, A, R>;
}
export interface Query<I = unknown, A = unknown, R = unknown, K extends 'query' | 'liveQuery' = 'query' | 'liveQuery'>
  extends EntryDefinition<K> {
  readonly __types?: EntryTypes<I, A, R>;
}

/** The args a caller sends to an entry, e.g. `EntryInput<typeof createNote>`. */
export type EntryInput<E> = E extends { __types?: EntryTypes<infer I, any, any> } ? I : never;
/** What an entry returns over the wire, e.g. `EntryResult<typeof listNotes>`. */
export type EntryResult<E> = E extends { __types?: EntryTypes<any, any, infer R> } ? R : never;

/** A named policy decides from the caller alone; data-dependent checks belong in the handler. */
export type PolicyCheck = (input: { auth: Auth }) => boolean | Promise<boolean>;
