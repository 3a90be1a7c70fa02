/**
 * What a cron of `src/crons.ts` means in time: its ticks (croner reads the expressions, with their time
 * zones), a fingerprint of its definition (its ticks' outbox keys carry it, so a changed cron replaces
 * its waiting tick), and the problems `fw check` and the app loader report.
 */
import { createHash } from 'node:crypto';
import { Cron } from 'croner';
import type { AppDefinition } from '../core/app-definition.ts';
import type { CronDefinition } from '../core/crons.ts';
import { canonicalJson } from '../core/canonical-json.ts';
import { parseDuration } from '../core/duration.ts';

const CALLABLE = new Set(['command', 'action']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NAME = /^[a-z][A-Za-z0-9]*$/;

/** A cron's next tick strictly after `after` (epoch ms); null when its expression has none (a date long past). */
export type NextTick = (after: number) => number | null;

/** The ticks of `definition`; throws with the reason when its timing is not valid. */
export function cronTicks(definition: CronDefinition): NextTick {
  if (typeof definition.cron === 'string') {
    const cron = new Cron(definition.cron, { timezone: definition.timezone ?? 'UTC', paused: true });
    return (after) => cron.nextRun(new Date(after))?.getTime() ?? null;
  }
  const every = parseDuration(definition.every, 'every');
  if (every < 1000) throw new TypeError('every must be at least one second (1000 ms or "1s").');
  // Aligned to the epoch, so every process computes the same ticks without agreeing on anything.
  return (after) => Math.floor(after / every) * every + every;
}

/** A short fingerprint of what a cron does and when: its waiting tick is replaced when it changes. */
export function cronFingerprint(definition: CronDefinition): string {
  const { cron, timezone, every, call, args, tenant, forEachTenant } = definition;
  return createHash('sha256')
    .update(canonicalJson({ cron: cron ?? null, timezone: timezone ?? null, every: every ?? null, call, args: args ?? {}, tenant: tenant ?? null, ...(forEachTenant === undefined ? {} : { forEachTenant }) }))
    .digest('hex')
    .slice(0, 12);
}

export interface CronProblem {
  cron: string;
  code: 'unknown_cron_target' | 'invalid_cron';
  message: string;
  hint: string;
}

/** Everything wrong with the app's crons: names, timing, targets, tenants (args are checked when loaded). */
export function cronProblems(app: AppDefinition): CronProblem[] {
  const problems: CronProblem[] = [];
  const callables = [...app.entries].filter(([, e]) => CALLABLE.has(e.kind)).map(([n]) => n).sort();
  for (const [name, definition] of app.crons ?? []) {
    const invalid = (message: string, hint: string) => problems.push({ cron: name, code: 'invalid_cron', message: `cron "${name}": ${message}`, hint });
    if (!NAME.test(name)) invalid('a cron name is camelCase letters and digits.', 'Rename it, e.g. nightlyDigest.');
    if (!definition || typeof definition !== 'object') {
      invalid('must be an object { cron | every, call, args?, tenant? }.', "e.g. { cron: '0 7 * * *', call: 'sendDigest' }.");
      continue;
    }
    const hasCron = definition.cron !== undefined;
    const hasEvery = definition.every !== undefined;
    if (hasCron === hasEvery) {
      invalid('needs exactly one of `cron` (an expression) and `every` (an interval).', "e.g. cron: '0 7 * * *' or every: '15m'.");
    } else {
      try {
        const next = cronTicks(definition);
        if (next(Date.now()) === null) invalid('its expression has no future tick.', 'Check the fields (minute hour day-of-month month day-of-week).');
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        invalid(
          hasCron ? `\`${String(definition.cron)}\`${definition.timezone ? ` in ${definition.timezone}` : ''} is not a valid cron schedule (${reason}).` : `\`every\` is not valid: ${reason}`,
          hasCron ? "Five fields — minute hour day-of-month month day-of-week, e.g. '0 7 * * 1-5' — and an IANA time zone like 'Europe/Berlin'." : "Milliseconds ≥ 1000, or text like '30s', '15m', '6h', '1d'.",
        );
      }
    }
    if (definition.tenant !== undefined && (typeof definition.tenant !== 'string' || !UUID.test(definition.tenant))) {
      invalid('`tenant` must be a tenant id (a UUID).', 'Leave it out to run as the system without a tenant.');
    }
    if (definition.forEachTenant !== undefined) {
      const lister = typeof definition.forEachTenant === 'string' ? app.entries.get(definition.forEachTenant) : undefined;
      const queries = [...app.entries].filter(([, e]) => e.kind === 'query' && e.policy === 'system').map(([n]) => n).sort();
      if (definition.tenant !== undefined) invalid('has both `tenant` and `forEachTenant`.', 'Keep `tenant` for one tenant, or `forEachTenant` for every tenant.');
      if (lister?.kind !== 'query' || lister.policy !== 'system') {
        invalid(
          `\`forEachTenant\` names "${String(definition.forEachTenant)}", which is ${lister ? `a ${lister.kind} with policy '${lister.policy}'` : 'no query of the app'}: it must be a query with policy 'system' that answers the tenant ids.`,
          queries.length ? `System queries: ${queries.join(', ')}.` : "Add one, e.g. src/queries/allWorkspaces.ts: query({ policy: 'system', handler: async (ctx) => (await ctx.db.selectFrom('workspaces').select('id').execute()).map((w) => w.id) }).",
        );
      }
    }
    const target = app.entries.get(definition.call);
    if (!target || !CALLABLE.has(target.kind)) {
      problems.push({
        cron: name,
        code: 'unknown_cron_target',
        message: `cron "${name}" calls "${String(definition.call)}", which is ${target ? `a ${target.kind}, not a command or action` : 'no command or action of the app'}.`,
        hint: callables.length ? `Commands and actions: ${callables.join(', ')}.` : 'Add one in src/commands/ or src/actions/.',
      });
    }
  }
  return problems;
}
