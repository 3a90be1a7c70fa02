/**
 * Turns the app's crons into scheduled calls: each cron keeps one row in the outbox for its next tick,
 * with the key `cron:<name>:<fingerprint>:<tick>` — a `fw.call:` row, or for a cron `forEachTenant` a
 * `fw.tenants:` row that calls it in each tenant when it runs (tenant-fan-out.ts). Only fw writes either
 * (the owner; requests have no privilege on the outbox), so only the scheduler makes or cancels a tick.
 * The key is unique, and every process
 * computes the same ticks, so however many processes look, a tick is one row — run once, by whichever
 * worker claims it (a command settles it in its own transaction: exactly once). When a tick's row has
 * run, the next look adds the one after *now*.
 *
 * Ticks missed while no process ran: the waiting row of the first missed tick runs once when a worker
 * next looks (late), and the ones after it are skipped — the next row is the first tick after now. A
 * new cron starts with its first tick after now. A changed cron (its fingerprint) replaces its waiting
 * row; a removed cron's waiting row is cancelled.
 */
import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { AppDefinition } from '../core/app-definition.ts';
import { enqueueAsOwner } from '../db/outbox.ts';
import { cronFingerprint, cronTicks, type NextTick } from './cron-spec.ts';
import { CALL_EVENT_PREFIX } from './plan.ts';
import { TENANTS_EVENT_PREFIX } from './tenant-fan-out.ts';

export const CRON_KEY_PREFIX = 'cron:';
/** A tick an operator asked for now (`cron-now:<name>:<fingerprint>:<id>`): never `cron:`, so the ticker leaves it alone. */
export const CRON_NOW_KEY_PREFIX = 'cron-now:';

export function cronTickKey(name: string, fingerprint: string, tick: number): string {
  return `${CRON_KEY_PREFIX}${name}:${fingerprint}:${new Date(tick).toISOString()}`;
}

interface Planned {
  name: string;
  call: string;
  args: unknown;
  tenant: string | null;
  forEachTenant: string | null;
  fingerprint: string;
  next: NextTick;
}

/**
 * The crons of `app`, ready to tick: `check(now)` makes sure each has its next tick's row, and does not
 * touch the database while every cron's known row is still in the future. Crons whose timing does not
 * parse are left out (the app loader refuses them first).
 */
export function createCronTicker(app: AppDefinition, admin: Kysely<any>): { check(now: number): Promise<void>; readonly size: number } {
  const planned: Planned[] = [];
  for (const [name, definition] of app.crons ?? []) {
    try {
      planned.push({
        name,
        call: definition.call,
        args: definition.args ?? {},
        tenant: definition.tenant ?? null,
        forEachTenant: definition.forEachTenant ?? null,
        fingerprint: cronFingerprint(definition),
        next: cronTicks(definition),
      });
    } catch {
      // Refused when the app loaded (cronProblems); an app assembled by hand skips it.
    }
  }
  /** The tick each cron's row is known to wait for: no look is needed before then. */
  const waiting = new Map<string, number>();
  let swept = false;
  return {
    size: planned.length,
    async check(now: number) {
      if (swept && planned.every((cron) => (waiting.get(cron.name) ?? -Infinity) > now)) return;
      const rows = await sql<{ idempotency_key: string }>`
        select idempotency_key from "public"."_fw_outbox"
        where status = 'pending' and idempotency_key like ${`${CRON_KEY_PREFIX}%`}`.execute(admin);
      const stale: string[] = [];
      const current = new Map<string, number>();
      for (const { idempotency_key: key } of rows.rows) {
        const [, name, fingerprint, ...time] = key.split(':');
        const cron = planned.find((c) => c.name === name);
        if (cron && cron.fingerprint === fingerprint) current.set(cron.name, Date.parse(time.join(':')));
        else if (!cron && (app.crons?.has(name!) ?? false)) continue; // a cron this process could not parse: leave it
        else stale.push(key);
      }
      if (stale.length > 0) {
        await sql`
          update "public"."_fw_outbox" set status = 'cancelled', dead_at = now(), last_error = 'The cron changed or was removed; its next tick replaces this one.'
          where idempotency_key = any(${stale}::text[]) and status = 'pending' and (lease_until is null or lease_until < now())`.execute(admin);
      }
      swept = true;
      for (const cron of planned) {
        const known = current.get(cron.name);
        if (known !== undefined) {
          waiting.set(cron.name, known);
          continue;
        }
        const tick = cron.next(now);
        if (tick === null) continue;
        const row = cron.forEachTenant
          ? { event: `${TENANTS_EVENT_PREFIX}${cron.name}`, payload: { call: cron.call, forEachTenant: cron.forEachTenant, tick: new Date(tick).toISOString() } }
          : { event: `${CALL_EVENT_PREFIX}${cron.call}`, payload: { args: cron.args } };
        await enqueueAsOwner(admin, { tenantId: cron.tenant, userId: null, traceId: null, kind: 'system', role: null }, [
          { ...row, idempotencyKey: cronTickKey(cron.name, cron.fingerprint, tick), availableAt: new Date(tick) },
        ]);
        waiting.set(cron.name, tick);
      }
    },
  };
}

/** The app's crons with their next tick after `now` (`fw inspect`). */
export function nextCronTicks(app: AppDefinition, now: number): Array<{ name: string; call: string; schedule: string; tenant: string | null; forEachTenant: string | null; nextRun: string | null }> {
  return [...(app.crons ?? [])]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, definition]) => {
      let nextRun: string | null = null;
      try {
        const tick = cronTicks(definition)(now);
        nextRun = tick === null ? null : new Date(tick).toISOString();
      } catch {
        // An invalid cron has no next run; fw check says why.
      }
      const schedule = definition.cron !== undefined ? `${definition.cron} (${definition.timezone ?? 'UTC'})` : `every ${String(definition.every)}`;
      return { name, call: definition.call, schedule, tenant: definition.tenant ?? null, forEachTenant: definition.forEachTenant ?? null, nextRun };
    });
}

/**
 * A tick of cron `name` now, beside its schedule (an operator's "trigger", fw dev): one more row, as the
 * cron's own tick would be — a call of its target as the system (in its tenant), or for a cron
 * `forEachTenant` the row that calls it in each tenant. The waiting tick stays as it is. Returns the
 * row's key, or undefined when there is no such cron.
 */
export async function triggerCron(app: AppDefinition, admin: Kysely<any>, name: string, traceId: string, now: number): Promise<string | undefined> {
  const definition = app.crons?.get(name);
  if (!definition) return undefined;
  const key = `${CRON_NOW_KEY_PREFIX}${name}:${cronFingerprint(definition)}:${randomUUID()}`;
  const row = definition.forEachTenant
    ? { event: `${TENANTS_EVENT_PREFIX}${name}`, payload: { call: definition.call, forEachTenant: definition.forEachTenant, tick: new Date(now).toISOString() } }
    : { event: `${CALL_EVENT_PREFIX}${definition.call}`, payload: { args: definition.args ?? {} } };
  await enqueueAsOwner(admin, { tenantId: definition.tenant ?? null, userId: null, traceId, kind: 'system', role: null }, [{ ...row, idempotencyKey: key }]);
  return key;
}
