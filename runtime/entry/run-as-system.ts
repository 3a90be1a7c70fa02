import { FwError } from '../core/errors.ts';
import { type EntryServices, invokeEntry } from './pipeline.ts';

/** The kinds `ctx.runAsSystem` may run: each in its own transaction (a query's read-only). */
const RUNNABLE = new Set(['command', 'query']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface RunAsSystemOptions {
  /** The tenant the call runs in (a UUID), or `null` for none (then tenant tables show no rows). */
  tenantId: string | null;
}

/**
 * An endpoint's `ctx.runAsSystem(name, args, { tenantId })`: runs the command or query `name` — one whose
 * policy is `system`, so it is never reachable over HTTP and was written to be run this way — as the
 * system inside one tenant, through the whole pipeline (args validated, its own transaction, whose
 * identity fw proves to the database like any request's: `kind` system, that tenant, no user, no role).
 *
 * It is how trusted app code acts in a tenant before any caller is known (a sign-in looking a user up),
 * the way a cron does: the endpoint's own `ctx.db` stays the caller's (an anonymous caller sees no
 * tenant's rows), and only the named entry's SQL runs in the tenant. Anything else is refused before a
 * transaction opens: an unknown name, another kind, a policy other than `system`, a tenant that is not a UUID.
 */
export function runAsSystem(services: EntryServices, traceId: string) {
  return async (name: unknown, args: unknown, options: RunAsSystemOptions): Promise<unknown> => {
    const where = `ctx.runAsSystem(${JSON.stringify(name)})`;
    const entry = typeof name === 'string' ? services.app.entries.get(name) : undefined;
    if (!entry || !RUNNABLE.has(entry.kind)) {
      const known = [...services.app.entries].filter(([, e]) => RUNNABLE.has(e.kind) && e.policy === 'system').map(([n]) => n).sort();
      throw new FwError('internal', `${where}: ${entry ? `"${String(name)}" is a ${entry.kind}; only commands and queries run this way.` : 'no command or query has that name.'} ${known.length ? `System commands and queries: ${known.join(', ')}.` : "Declare one with policy: 'system'."}`);
    }
    if (entry.policy !== 'system') {
      throw new FwError('internal', `${where}: its policy is "${entry.policy}"; only entries with policy 'system' run as the system (they cannot be called over HTTP, so nothing else reaches them).`);
    }
    const tenantId = options?.tenantId;
    if (tenantId !== null && (typeof tenantId !== 'string' || !UUID.test(tenantId))) {
      throw new FwError('internal', `${where}: { tenantId } must be a tenant id (a UUID) or null.`);
    }
    return invokeEntry(services, entry, {
      name: String(name),
      auth: { kind: 'system', tenantId: tenantId === null ? null : tenantId.toLowerCase(), userId: null, role: null },
      traceId,
      external: false,
      args: args ?? {},
    });
  };
}
