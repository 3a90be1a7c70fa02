import type { FwDatabase } from '../db/database.ts';
import type { Auth } from '../core/entry-types.ts';
import { FwError } from '../core/errors.ts';
import { authorizePolicy } from '../entry/policy.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { assertExternalArgs, assertExternalResult } from './args-schema.ts';
import { type BridgeLimits, type BridgeTarget, callExternal } from './bridge.ts';
import { assertEffectsKnown, recordEffects } from './effects.ts';
import { entryDefaults, type Manifest, type ManifestEntry } from '../core/external-manifest.ts';

import type { ExternalService } from '../core/app-definition.ts';

export type { ExternalService };

export interface ExternalCall {
  auth: Auth;
  traceId: string;
  args: unknown;
  /** The inbound `Authorization` header, forwarded to http services whose manifest sets `forwardAuthorization`. */
  authorization?: string;
  limits?: Partial<BridgeLimits>;
}

/**
 * The external entry `service.name` of `kind`, or a 404. `listKnown` (default true) names the entries
 * there are in the diagnostic; the runtime passes false outside dev mode, where the app's surface is
 * not shown to whoever asks.
 */
export function findExternalEntry(
  app: AppDefinition,
  service: string,
  kind: 'command' | 'query',
  name: string,
  options: { listKnown?: boolean } = {},
): { service: ExternalService; entry: ManifestEntry } {
  const found = app.external?.find((s) => s.manifest.service.name === service);
  const entry = found?.manifest.entries.find((e) => e.name === name && e.kind === kind);
  if (!found || !entry) {
    const known = (app.external ?? []).flatMap((s) => s.manifest.entries.filter((e) => e.kind === kind).map((e) => `${s.manifest.service.name}.${e.name}`));
    const hint = 'fw manifest import <file> adds a service; fw generate lists them in externalServices.json.';
    throw new FwError('not_found', `No external ${kind} "${service}.${name}".`, {
      diagnostics: [{ path: 'url', code: 'unknown_external_entry', message: options.listKnown === false ? 'No such entry.' : `Known: ${known.sort().join(', ') || '(none)'}`, hint }],
    });
  }
  return { service: found, entry };
}

/**
 * Runs an external entry for a caller: its policy first (nothing leaves fw for a caller it refuses),
 * then the bridge call, then — for a command that succeeded — its declared effects (`recordEffects`:
 * outbox rows and live invalidations, so `db` is needed for commands with effects).
 */
export async function callExternalEntry(app: AppDefinition, db: FwDatabase | undefined, service: ExternalService, entry: ManifestEntry, call: ExternalCall): Promise<unknown> {
  const { policy } = entryDefaults(entry);
  await authorizePolicy(app, policy, call.auth, true, `${service.manifest.service.name}.${entry.name}`);
  if (typeof call.args !== 'object' || call.args === null || Array.isArray(call.args)) {
    throw new FwError('validation_failed', 'External entries take an object of args.', { diagnostics: [{ path: 'args', code: 'invalid_type', message: 'Send {"args": {…}}.' }] });
  }
  const { manifest } = service;
  assertExternalArgs(`${manifest.service.name}.${entry.name}`, entry.argsSchema, call.args as Record<string, unknown>);
  // Checked before the call: a service that did its work must not be answered with "effects failed".
  const effectsDb = entry.kind === 'command' && (entry.effects?.length ?? 0) > 0 ? effectsDatabase(app, db, service, entry) : undefined;
  // The manifest's own limits, then the runtime's, then the defaults.
  const limits = {
    ...call.limits,
    ...(manifest.service.timeoutMs === undefined ? {} : { timeoutMs: manifest.service.timeoutMs }),
    ...(manifest.service.maxResponseBytes === undefined ? {} : { maxResponseBytes: manifest.service.maxResponseBytes }),
  };
  const result = await callExternal(targetOf(service, entry), {
    args: call.args as Record<string, unknown>,
    auth: { kind: call.auth.kind, userId: call.auth.userId, tenantId: call.auth.tenantId, role: call.auth.role },
    fw: { service: manifest.service.name, entry: entry.name, kind: entry.kind, traceId: call.traceId },
  }, { limits, ...(call.authorization && manifest.service.forwardAuthorization === true ? { authorization: call.authorization } : {}) });
  // The service did its work whatever it answered: its effects count before its answer is checked.
  if (effectsDb) await recordEffects(app, effectsDb, { service: manifest.service.name, entry }, call);
  assertExternalResult(`${manifest.service.name}.${entry.name}`, entry.resultSchema, result);
  return result;
}

/** The database a command's effects are recorded in, once their tables and liveQueries are known to exist. */
function effectsDatabase(app: AppDefinition, db: FwDatabase | undefined, service: ExternalService, entry: ManifestEntry): FwDatabase {
  if (!db) throw new FwError('internal', `${service.manifest.service.name}.${entry.name} declares effects, which need the app database to record them.`);
  assertEffectsKnown(app, service, entry);
  return db;
}

function targetOf({ manifest, cwd }: ExternalService, entry: ManifestEntry): BridgeTarget {
  const { service } = manifest;
  if (service.transport === 'http') return { transport: 'http', baseUrl: service.baseUrl!, path: entry.path ?? `/${entry.kind === 'command' ? 'commands' : 'queries'}/${entry.name}` };
  if (service.transport === 'stdio') return { transport: 'stdio', command: service.command!, commandArgs: service.commandArgs ?? [], cwd };
  return { transport: 'grpc' };
}
