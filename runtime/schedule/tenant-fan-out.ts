/**
 * A cron that runs in every tenant (`forEachTenant` in src/crons.ts): its tick is one `fw.tenants:<cron>`
 * row (cron-ticks.ts); delivering it runs the cron's tenant query as the system — with no tenant, so it
 * reads a table that is not tenant-scoped, such as `workspaces` — and adds one scheduled call of the
 * cron's target per tenant it answers, as the system in that tenant, keyed by cron, tenant and tick: a
 * redelivered tick adds nothing twice, and each tenant's call is retried (or dead) on its own.
 */
import { FwError } from '../core/errors.ts';
import { resolveTraceId } from '../core/trace.ts';
import { type DeliveryResult, enqueueForCallers, failedDelivery, type OutboxRow } from '../db/outbox.ts';
import { type EntryServices, invokeEntry } from '../entry/pipeline.ts';
import { cronFingerprint } from './cron-spec.ts';
import { CALL_EVENT_PREFIX } from './plan.ts';

export const TENANTS_EVENT_PREFIX = 'fw.tenants:';
/** The key of a cron's call in one tenant: `cron-tenant:<cron>:<tenant>:<tick>` (never `cron:`, which is a tick's). */
export const CRON_TENANT_KEY_PREFIX = 'cron-tenant:';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isTenantsEvent(event: string): boolean {
  return event.startsWith(TENANTS_EVENT_PREFIX);
}

export function cronOfTenantsEvent(event: string): string {
  return event.slice(TENANTS_EVENT_PREFIX.length);
}

/** Calls the cron's target once in each tenant its `forEachTenant` query answers. */
export async function fanOutToTenants(services: EntryServices, row: OutboxRow): Promise<DeliveryResult> {
  const name = cronOfTenantsEvent(row.event);
  const definition = services.app.crons?.get(name);
  const [, , fingerprint] = row.idempotencyKey.split(':');
  if (!definition?.forEachTenant || cronFingerprint(definition) !== fingerprint) {
    return { ok: true, note: `The cron "${name}" changed or was removed since this tick was planned; its next tick replaces it.` };
  }
  const tick = (row.payload as { tick?: unknown } | null)?.tick;
  const lister = definition.forEachTenant;
  let answer: unknown;
  try {
    const entry = services.app.entries.get(lister);
    if (entry?.kind !== 'query' || entry.policy !== 'system') throw new FwError('internal', `forEachTenant names "${lister}", which is no query with policy 'system'.`);
    answer = await invokeEntry(services, entry, {
      name: lister,
      auth: { kind: 'system', tenantId: null, userId: null, role: null },
      traceId: row.traceId || resolveTraceId(undefined),
      external: false,
      args: {},
    });
  } catch (error) {
    return failedDelivery(`cron ${name}`, error, false);
  }
  let tenants: string[];
  try {
    tenants = tenantIds(lister, answer);
  } catch (error) {
    return failedDelivery(`cron ${name}`, error, true);
  }
  await enqueueForCallers(
    services.db.admin,
    tenants.map((tenantId) => ({
      caller: { tenantId, userId: null, traceId: row.traceId, kind: 'system', role: null },
      entry: { event: `${CALL_EVENT_PREFIX}${definition.call}`, payload: { args: definition.args ?? {} }, idempotencyKey: `${CRON_TENANT_KEY_PREFIX}${name}:${tenantId}:${String(tick)}` },
    })),
  );
  return { ok: true, note: `Called ${definition.call} in ${tenants.length} tenant${tenants.length === 1 ? '' : 's'}.` };
}

/** The tenant ids a `forEachTenant` query answered: UUID strings (lower-cased, each once), or an error saying what came instead. */
function tenantIds(lister: string, answer: unknown): string[] {
  if (!Array.isArray(answer) || !answer.every((id) => typeof id === 'string' && UUID.test(id))) {
    const shown = JSON.stringify(answer)?.slice(0, 120) ?? String(answer);
    throw new FwError('internal', `query ${lister} (forEachTenant) answered ${shown}: it must answer an array of tenant ids (UUIDs), e.g. (await ctx.db.selectFrom('workspaces').select('id').execute()).map((w) => w.id).`);
  }
  return [...new Set(answer.map((id: string) => id.toLowerCase()))];
}
