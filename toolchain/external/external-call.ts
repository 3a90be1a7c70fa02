import path from 'node:path';
import type { Auth } from '../../runtime/core/entry-types.ts';
import { isFwError } from '../../runtime/core/errors.ts';
import { callExternalEntry, findExternalEntry } from '../../runtime/external/services.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import { resolveTraceId } from '../../runtime/core/trace.ts';
import { openAppDatabase } from '../../plugin/database-target.ts';
import { loadAppOnce } from '../../plugin/load-app-once.ts';
import { readRuntimeFile } from '../dev/runtime-file.ts';

/** The dev identity `fw run` / `fw query` call as (the templates' dev tenant by default). */
export interface CliIdentity {
  userId: string;
  tenantId: string;
  role: string;
}

export const defaultCliIdentity: CliIdentity = { userId: 'fw-cli', tenantId: '00000000-0000-4000-8000-000000000001', role: 'member' };

export interface ExternalCallResult {
  service: string;
  entry: string;
  kind: 'command' | 'query';
  result: unknown;
  traceId: string;
  /** `runtime` when the app's running fw dev made the call, `direct` when this process did. */
  via: 'runtime' | 'direct';
}

/**
 * `fw run <service.command>` / `fw query <service.query>`: calls an external entry as `identity`,
 * through the app's running `fw dev` when there is one (it owns the embedded database), otherwise in
 * this process with the same bridge, policy check and effects. Failures keep the service's code.
 */
export async function callExternalFromCli(options: { root: string; qualifiedName: string; kind: 'command' | 'query'; args: unknown; identity?: CliIdentity }): Promise<ExternalCallResult> {
  const root = path.resolve(options.root);
  const dot = options.qualifiedName.indexOf('.');
  if (dot <= 0 || dot === options.qualifiedName.length - 1) {
    throw new FwFailure('invalid_name', `"${options.qualifiedName}" is not <service>.<entry>.`, { suggestions: ['fw run tickets.createTicket --args \'{"subject":"Hi"}\''] });
  }
  const service = options.qualifiedName.slice(0, dot);
  const name = options.qualifiedName.slice(dot + 1);
  const identity = options.identity ?? defaultCliIdentity;
  const traceId = resolveTraceId(undefined);
  const running = readRuntimeFile(root)?.serverUrl;
  if (running) {
    const response = await fetch(`${running}/external/${encodeURIComponent(service)}/${options.kind === 'command' ? 'commands' : 'queries'}/${encodeURIComponent(name)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-fw-trace-id': traceId, 'x-fw-user-id': identity.userId, 'x-fw-tenant-id': identity.tenantId, 'x-fw-role': identity.role },
      body: JSON.stringify({ args: options.args }),
    });
    const body = (await response.json().catch(() => null)) as { ok?: boolean; result?: unknown; error?: { code: string; message: string; diagnostics?: [] } } | null;
    if (!body?.ok) throw new FwFailure(body?.error?.code ?? `http_${response.status}`, body?.error?.message ?? `The runtime answered ${response.status}.`, { diagnostics: body?.error?.diagnostics ?? [] });
    return { service, entry: name, kind: options.kind, result: body.result, traceId, via: 'runtime' };
  }
  const app = await loadAppOnce(root);
  const found = (() => {
    try {
      return findExternalEntry(app, service, options.kind, name);
    } catch (error) {
      throw asFailure(error);
    }
  })();
  const auth: Auth = { kind: 'user', ...identity };
  // The database is needed only to record a command's effects.
  const needsDb = options.kind === 'command' && (found.entry.effects?.length ?? 0) > 0;
  const db = needsDb ? await openAppDatabase(root) : undefined;
  try {
    const result = await callExternalEntry(app, db, found.service, found.entry, { auth, traceId, args: options.args });
    return { service, entry: name, kind: options.kind, result, traceId, via: 'direct' };
  } catch (error) {
    throw asFailure(error);
  } finally {
    await db?.close();
  }
}

function asFailure(error: unknown): unknown {
  if (!isFwError(error)) return error;
  return new FwFailure(error.code, error.message, { diagnostics: error.diagnostics, cause: error });
}
