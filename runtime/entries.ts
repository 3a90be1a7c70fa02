import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { AiContext } from './ai/ai-runtime.ts';
import type { Database, Schema } from './schema.ts';

/**
 * Apps register their schema (and later other types) here so that `ctx.db` is typed:
 *
 * @example
 *   declare module 'fw' { interface Register { schema: typeof schema } }
 */
export interface Register {}

type RegisteredSchema = Register extends { schema: infer S } ? S : Schema;
export type AppDatabase = RegisteredSchema extends Schema<any> ? Database<RegisteredSchema> : any;

/** Who is calling. `anonymous` callers reach only `public` entries. */
export interface Auth {
  kind: 'anonymous' | 'user' | 'system';
  userId: string | null;
  tenantId: string | null;
  role: string | null;
}

export interface QueryContext {
  /** Kysely bound to this request's transaction (read-only for queries). */
  db: Kysely<AppDatabase>;
  auth: Auth;
  traceId: string;
}

export interface CommandContext extends QueryContext {
  /** Records a domain event in the outbox, in this command's transaction (delivered after commit). */
  emit(event: string, payload?: unknown): void;
}

/**
 * The context of actions, workflows and endpoints: a query context plus the AI surface
 * (`ctx.agent.run`, `ctx.ai.runAgent`, `ctx.ai.generateText`, `ctx.ai.generateStructured`). Commands,
 * queries and liveQueries do not have it: they run in a database transaction, where a model call
 * has no place.
 */
export interface ServerContext extends QueryContext, AiContext {}

export type EntryKind = 'command' | 'query' | 'liveQuery' | 'action' | 'workflow' | 'endpoint';

/** `public` (anyone), `user` (any signed-in user, the default), `system` (never over HTTP), or a named policy. */
export type PolicyName = 'public' | 'user' | 'system' | (string & {});

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

const entryBrand = Symbol.for('fw.entry');

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

interface EntryConfig<A extends ArgsInput | undefined, C, R> {
  args?: A;
  policy?: PolicyName;
  description?: string;
  handler: (ctx: C, args: InferArgs<A>) => R | Promise<R>;
}

/**
 * How a command, query or liveQuery appears to agents as an auto-tool: `false` keeps it away from
 * every agent; `needsApproval` overrides the default (commands need approval, reads do not).
 */
export type EntryToolOption = false | { needsApproval?: boolean; description?: string };

interface CallableEntryConfig<A extends ArgsInput | undefined, C, R> extends EntryConfig<A, C, R> {
  tool?: EntryToolOption;
}

const emptyArgs = z.object({}).strict();

function toArgsSchema(args: ArgsInput | undefined): StandardSchemaV1 {
  if (args === undefined) return emptyArgs;
  if ('~standard' in args) return args as StandardSchemaV1;
  return z.object(args as z.ZodRawShape).strict();
}

function define<K extends EntryKind>(kind: K, config: EntryConfig<any, any, any>): EntryDefinition<K> {
  if (typeof config?.handler !== 'function') {
    throw new TypeError(`fw: ${kind}({...}) needs a handler: ${kind}({ args, handler: async (ctx, args) => … })`);
  }
  const { args, policy, description, handler, ...options } = config as EntryConfig<any, any, any> & Record<string, unknown>;
  return Object.freeze({
    [entryBrand]: true as const,
    kind,
    args: toArgsSchema(args),
    policy: policy ?? 'user',
    ...(description === undefined ? {} : { description }),
    handler,
    options,
  });
}

export function isEntry(value: unknown): value is EntryDefinition {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[entryBrand] === true;
}

/**
 * A transactional write. Runs read-write in its own transaction; commits when the handler returns,
 * rolls back when it throws.
 *
 * @example
 *   export default command({
 *     args: { title: z.string().min(1) },
 *     handler: (ctx, args) => ctx.db.insertInto('notes').values(args).returningAll().executeTakeFirstOrThrow(),
 *   });
 */
export function command<A extends ArgsInput | undefined = undefined, R = unknown>(
  config: CallableEntryConfig<A, CommandContext, R>,
): Command<InferArgsInput<A>, InferArgs<A>, Awaited<R>> {
  return define('command', config);
}

/** A one-shot read, in a read-only transaction (a write inside it is refused by the database). */
export function query<A extends ArgsInput | undefined = undefined, R = unknown>(
  config: CallableEntryConfig<A, QueryContext, R>,
): Query<InferArgsInput<A>, InferArgs<A>, Awaited<R>, 'query'> {
  return define('query', config);
}

/**
 * A read that clients can subscribe to (`useLiveQuery`, `GET /live/:name`); same rules as `query`.
 * fw records the tables it reads from its Kysely queries and re-runs it when one of them changes.
 * Raw SQL statements (`sql\`…\`.execute(ctx.db)`) hide their tables: declare them in `reads`.
 *
 * @example
 *   export default liveQuery({ handler: (ctx) => ctx.db.selectFrom('notes').selectAll().execute() });
 */
export function liveQuery<A extends ArgsInput | undefined = undefined, R = unknown>(
  config: CallableEntryConfig<A, QueryContext, R> & { reads?: readonly string[] },
): Query<InferArgsInput<A>, InferArgs<A>, Awaited<R>, 'liveQuery'> {
  const reads: unknown = (config as { reads?: unknown }).reads;
  if (reads !== undefined && (!Array.isArray(reads) || !reads.every((t) => typeof t === 'string' && t.length > 0))) {
    throw new TypeError("fw: liveQuery({ reads }) must be a list of table names, e.g. reads: ['notes'].");
  }
  return define('liveQuery', config);
}

/** Work that runs after a commit (network, AI, secrets allowed). Executed by the worker (issue #9). */
export function action<A extends ArgsInput | undefined = undefined, R = unknown>(
  config: EntryConfig<A, ServerContext, R> & { on?: string },
): EntryDefinition<'action'> {
  return define('action', config);
}

/** A durable multi-step process. Executed by the workflow engine (issue #9). */
export function workflow<A extends ArgsInput | undefined = undefined, R = unknown>(
  config: EntryConfig<A, ServerContext, R>,
): EntryDefinition<'workflow'> {
  return define('workflow', config);
}

/** A custom HTTP route under the runtime. Served in issue #9. */
export function endpoint<A extends ArgsInput | undefined = undefined, R = unknown>(
  config: EntryConfig<A, ServerContext, R> & { method: string; path: string },
): EntryDefinition<'endpoint'> {
  return define('endpoint', config);
}

/** A named policy decides from the caller alone; data-dependent checks belong in the handler. */
export type PolicyCheck = (input: { auth: Auth }) => boolean | Promise<boolean>;

/**
 * Named policies, referenced by entries as `policy: 'name'`. Export as the default of `src/policies.ts`.
 *
 * @example
 *   export default definePolicies({ admin: ({ auth }) => auth.role === 'admin' });
 */
export function definePolicies<P extends Record<string, PolicyCheck>>(policies: P): P {
  for (const name of Object.keys(policies)) {
    if (name === 'public' || name === 'user' || name === 'system') {
      throw new Error(`fw: policy name "${name}" is built in; choose another name.`);
    }
  }
  return policies;
}
