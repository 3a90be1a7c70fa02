import type { AppDefinition } from '../core/app-definition.ts';
import type { Auth, EntryDefinition } from '../core/entry-types.ts';
import { FwError } from '../core/errors.ts';
import type { FwDatabase } from '../db/database.ts';
import { invokeEntry } from '../entry/pipeline.ts';
import { entryServices } from './entry-services.ts';

export interface CallOptions {
  auth: Auth;
  traceId: string;
  /** The raw, unvalidated args as received. */
  args: unknown;
  /** True when the call arrives over the network (then `system` entries are refused). */
  external: boolean;
  /** The entry's name, for its span (`fw.entry`) and errors about its SQL. */
  name?: string;
}

const callable = new Set(['command', 'query', 'liveQuery']);

/**
 * Runs a command, query or liveQuery of `app` for a caller, through the entry pipeline (policy,
 * args, its transaction under the caller's identity): for code that embeds fw's runtime (scripts, the
 * CLI, tests). Actions, workflows and endpoints have callers of their own.
 */
export function callEntry(app: AppDefinition, db: FwDatabase, entry: EntryDefinition, call: CallOptions): Promise<unknown> {
  if (!callable.has(entry.kind)) return Promise.reject(new FwError('not_found', `${entry.kind} entries are not callable this way.`));
  const { name, ...caller } = call;
  return invokeEntry(entryServices(app, db), entry, { ...caller, name: name ?? entry.kind });
}
