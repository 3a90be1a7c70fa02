/**
 * fw's define API: what an app imports from `fwjs`.
 *
 * @example
 *   import { command, z } from 'fwjs';
 *   export default command({ args: { title: z.string() }, handler: (ctx, args) => … });
 */
export {
  action,
  command,
  definePolicies,
  endpoint,
  liveQuery,
  query,
  respond,
  workflow,
  type ActionContext,
  type ActionEvent,
  type Auth,
  type CallName,
  type Command,
  type CommandContext,
  type EndpointContext,
  type EndpointMethod,
  type EndpointResponse,
  type EntryDefinition,
  type EntryInput,
  type EntryKind,
  type EntryResult,
  type EventName,
  type EventPayload,
  type PolicyCheck,
  type PolicyName,
  type Query,
  type QueryContext,
  type Register,
  type RunAs,
  type ServerContext,
  type Duration,
  type Scheduler,
  type StepInfo,
  type WorkflowContext,
  type WorkflowName,
  type WorkflowRun,
} from './core/entries.ts';
export { crons, type CronDefinition } from './core/crons.ts';
export { defineSchema, table, t, type Column, type Database, type Schema, type Table } from './core/schema.ts';
export { FwError, type Diagnostic, type FwErrorCode } from './core/errors.ts';
export { badRequest, conflict, forbidden, notFound, type RefusalOptions, tooManyRequests } from './core/refusals.ts';
export { paginate, paginationArgs, type Cursor, type OrderDirection, type PaginateOptions, type PaginationOptions, type PaginationResult } from './core/paginate.ts';
export {
  agent,
  aiTool,
  externalTool,
  type AgentConfig,
  type AgentDefinition,
  type AgentTool,
  type AiToolConfig,
  type AiToolDefinition,
  type StepCountStop,
  type ToolContext,
  type ToolRisk,
} from './core/ai-definitions.ts';
// One zod and one Kysely for every app, so schemas and SQL fragments always match fw's.
export { z } from 'zod';
export { sql } from 'kysely';
