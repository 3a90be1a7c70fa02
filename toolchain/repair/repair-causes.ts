import { closestName } from '../../runtime/core/closest-name.ts';
import type { TestFailureRecord } from '../test/test-reporter.ts';

/** Where in an fw app a failure likely comes from. */
export type CauseKind = 'entry' | 'policy' | 'schema' | 'generated_drift' | 'frontend_wiring' | 'database' | 'live' | 'ai' | 'unknown';

export interface RepairCause {
  kind: CauseKind;
  /** The entry the failure is about, when the test's name or error names one. */
  entry?: string;
  detail: string;
  hint: string;
  suggestedCommand: string;
}

/** The app as the mapping sees it (`file` is null when known from `api.json` only). */
export interface AppFacts {
  entries: Array<{ name: string; kind: string; file: string | null; policy: string }>;
  tables: string[];
  /** Entries whose `src/fw/_generated/api.json` description differs from their source. */
  staleEntries: string[];
}

const errorCodes = ['validation_failed', 'bad_request', 'bad_json', 'unauthenticated', 'forbidden', 'not_found', 'too_many_subscriptions', 'too_many_requests', 'network_error'] as const;

/**
 * The likely causes of one failed test, most specific first; always at least one (`unknown` with how
 * to rerun the test). Pure: the rules read the error's code, text, diagnostics and stack.
 *
 * @example
 *   causesOf({ file: 'tests/a.test.ts', test: 'createNote rejects', message: '…', stack: '', code: 'validation_failed' }, facts)
 *   // [{ kind: 'schema', entry: 'createNote', detail: '…', hint: '…', suggestedCommand: 'fw inspect client --json' }]
 */
export function causesOf(failure: TestFailureRecord, facts: AppFacts): RepairCause[] {
  const text = [failure.message, failure.diff ?? '', ...(failure.diagnostics ?? []).map((d) => `${d.code} ${d.path} ${d.message}`)].join('\n');
  const diagnosticCodes = new Set((failure.diagnostics ?? []).map((d) => d.code));
  // The error's own code when it is fw's or a SQLSTATE (not e.g. ERR_ASSERTION); else one named in its text.
  const own = failure.code !== undefined && ((errorCodes as readonly string[]).includes(failure.code) || /^[0-9A-Z]{5}$/.test(failure.code)) ? failure.code : undefined;
  const code = own ?? errorCodes.find((c) => new RegExp(`\\b${c}\\b`).test(text));
  const entry = mentionedEntry(failure, text, facts);
  const about = entry ? { entry: entry.name } : {};
  const causes: RepairCause[] = [];
  const add = (cause: RepairCause) => {
    if (!causes.some((c) => c.kind === cause.kind && c.entry === cause.entry && c.detail === cause.detail)) causes.push(cause);
  };

  // AI approvals first: a forged approval is `forbidden` and an unknown one `validation_failed`.
  if (diagnosticCodes.has('forged_approval') || /forged_approval|not issued by this server/.test(text)) {
    add({ kind: 'ai', ...about, detail: 'An approval sent back to the agent was not issued by this runtime (its signature does not match); no tool ran.', hint: 'Send back the messages of the run exactly as it returned them and answer its approval request by approvalId; approvals cannot be built by hand.', suggestedCommand: 'fw ai tools --json' });
  } else if (diagnosticCodes.has('unknown_approval') || /answers no pending approval request/.test(text)) {
    add({ kind: 'ai', ...about, detail: 'An approval answered no pending approval request of the messages sent.', hint: 'Send the messages of the run that asked for approval together with the approval.', suggestedCommand: 'fw ai tools --json' });
  }

  // The database: row-level security (also surfaced as `forbidden`), missing relations and columns.
  if (code === '42501' || /row-level security|permission denied for (table|relation)|refused the operation for this caller/i.test(text)) {
    add({ kind: 'database', ...about, detail: 'Row-level security refused a row: tenant-scoped tables only hold and show rows of the caller’s tenant.', hint: 'Call with a tenant (devAuth.tenantId / x-fw-tenant-id), let fw fill tenant_id instead of setting it, or declare the table { tenantScoped: false } in src/fw/schema.ts if it is shared by design.', suggestedCommand: 'fw inspect client --json' });
  }
  const relation = /relation "(?:public\.)?([^"]+)" does not exist/.exec(text);
  if (code === '42P01' || relation) {
    const table = relation?.[1];
    const declared = table !== undefined && facts.tables.includes(table);
    add({
      kind: 'database',
      ...about,
      detail: table ? `Table "${table}" does not exist in the database${declared ? ', though src/fw/schema.ts declares it: the database is behind the schema' : ' and src/fw/schema.ts does not declare it'}.` : 'A table the code uses does not exist in the database.',
      hint: declared || !table ? 'Migrate the database (fw dev migrates additive changes on start).' : `Declare "${table}" in src/fw/schema.ts (or fix the name), then migrate.`,
      suggestedCommand: 'fw db migrate',
    });
  }
  const column = /column "([^"]+)"(?: of relation "([^"]+)")? does not exist/.exec(text);
  if (code === '42703' || column) {
    add({ kind: 'database', ...about, detail: `Column "${column?.[1] ?? '?'}" does not exist${column?.[2] ? ` in "${column[2]}"` : ''}.`, hint: 'Declare the column in src/fw/schema.ts (or fix the name), then migrate.', suggestedCommand: 'fw db migrate' });
  }
  if (/migration_blocked|will not apply automatically|need(s)? a decision/.test(text)) {
    add({ kind: 'database', ...about, detail: 'A schema change needs a decision (a drop or a narrowing), so fw applied nothing.', hint: 'Review the blocked changes; accept data loss only if it is intended.', suggestedCommand: 'fw db status --json' });
  }

  const aiOrDatabase = causes.length > 0;
  if (!aiOrDatabase && (code === 'forbidden' || code === 'unauthenticated')) add(policyCause(code, text, entry));
  if (!aiOrDatabase && (code === 'validation_failed' || code === 'bad_request' || code === 'bad_json')) {
    const problems = (failure.diagnostics ?? []).map((d) => `${d.path}: ${d.message}`).join('; ');
    add({
      kind: 'schema',
      ...about,
      detail: `${entry ? `The args did not match the args schema of ${entry.name}${entry.file ? ` (${entry.file})` : ''}` : 'The args did not match the entry’s args schema'}${problems ? `: ${problems}` : ''}.`,
      hint: 'Fix the arguments the test sends, or the args schema if the call is right; `fw inspect client --json` shows each entry’s schema as JSON Schema.',
      suggestedCommand: 'fw inspect client --json',
    });
  }

  const missing = /No (command|query|liveQuery|agent) named "([^"]+)"/.exec(text);
  if (missing) {
    const [, kind, name] = missing as unknown as [string, string, string];
    const exists = facts.entries.find((e) => e.name === name);
    const near = exists ? undefined : closestName(name, facts.entries.map((e) => e.name), 3);
    add({
      kind: 'entry',
      entry: name,
      detail: exists
        ? `The runtime that answered has no ${kind} "${name}", but ${exists.file ?? 'the app'} defines it: the runtime runs older code.`
        : `No ${kind} "${name}": ${kind === 'agent' ? `src/ai/agents/${name}.ts` : `src/${kind === 'command' ? 'commands' : 'queries'}/${name}.ts`} is missing or was renamed${near ? ` (did you mean "${near}"?)` : ''}.`,
      hint: exists ? 'Restart the runtime the test calls (fw dev reloads on save; a server started by the test does not).' : 'Entries are named after their file: create the file, or call the entry by its current name.',
      suggestedCommand: 'fw inspect client --json',
    });
  }

  const stale = entry ? facts.staleEntries.includes(entry.name) : facts.staleEntries.length > 0 && (missing !== null || text.includes('_generated'));
  if (/generated_drift|_generated\/\S+ is out of date/.test(text) || stale) {
    add({ kind: 'generated_drift', ...about, detail: `src/fw/_generated/ is out of date${facts.staleEntries.length > 0 ? ` (differs for ${facts.staleEntries.join(', ')})` : ''}: clients and hooks are typed against old entries.`, hint: 'Regenerate (fw dev does it on every reload); never edit src/fw/_generated/ by hand.', suggestedCommand: 'fw generate' });
  }

  if (/must be used inside <FwProvider|missing_provider/.test(text)) {
    add({ kind: 'frontend_wiring', detail: 'A component used an fw hook outside <FwProvider>.', hint: 'Mount <FwProvider apiUrl=…> once around the app (web/src/main.tsx); render components under test inside it too.', suggestedCommand: 'fw do connect-ui' });
  }
  if (/deep_generated_import|missing_bridge|raw_runtime_fetch/.test(text) || (failure.file.startsWith('web/') && /_generated\//.test(`${text}\n${failure.stack}`))) {
    add({ kind: 'frontend_wiring', detail: 'web/ reaches the backend around the bridge (a deep src/fw/_generated import or a raw fetch of a runtime route).', hint: 'Import hooks and api from the bridge (web/src/lib/fw.ts) only.', suggestedCommand: 'fw do connect-ui' });
  }

  if (code === 'too_many_requests') {
    add({
      kind: 'entry',
      ...about,
      detail: "The app's own limit refused the call (a handler's tooManyRequests(), e.g. too many wrong passwords): earlier calls of the test, or of another test sharing the app, used it up.",
      hint: 'Give each test data of its own (another email, another tenant), or move the test clock past Retry-After with fw.advanceTime() — never wait the wall clock.',
      suggestedCommand: 'fw test',
    });
  }
  if (code === 'too_many_subscriptions') {
    add({ kind: 'live', ...about, detail: 'Too many live subscriptions for one connection or tenant.', hint: 'Unsubscribe streams the test no longer needs (close the client), or raise the live limits of the runtime.', suggestedCommand: 'fw live status --json' });
  } else if (/\/live\/\w|event-stream|EventSource|\bSSE\b|No liveQuery named/.test(text)) {
    add({ kind: 'live', ...about, detail: 'A live-query stream failed.', hint: 'Live streams need a running runtime and a liveQuery entry; check the subscriptions it holds.', suggestedCommand: 'fw live status --json' });
  }

  if (causes.length === 0 && (code === 'network_error' || /ECONNREFUSED|fetch failed/.test(text))) {
    add({ kind: 'unknown', ...about, detail: 'No runtime answered the call.', hint: 'Start the runtime the test calls (fw dev) and pass its URL to the test.', suggestedCommand: 'fw dev --once --json' });
  }
  if (causes.length === 0) {
    add({
      kind: 'unknown',
      ...about,
      detail: `No fw cause recognised: ${failure.message.split('\n')[0]}`,
      hint: failure.stack ? `Start at the first app frame: ${failure.stack.split('\n')[0]!.trim()}` : 'Read the error and rerun the test alone.',
      suggestedCommand: failure.file ? `fw test -- ${failure.file}${failure.test.startsWith('(') ? '' : ` -t ${JSON.stringify(failure.test.split(' > ').at(-1))}`}` : 'fw test',
    });
  }
  return causes;
}

function policyCause(code: 'forbidden' | 'unauthenticated', text: string, entry: AppFacts['entries'][number] | undefined): RepairCause {
  const about = entry ? { entry: entry.name } : {};
  if (/is internal \(policy: 'system'\)|for the system only/.test(text)) {
    return { kind: 'policy', ...about, detail: `${entry?.name ?? 'The entry'} has policy "system": it runs from server code only and cannot be called over HTTP.`, hint: 'Call it from another entry’s handler, or give it a user-facing policy.', suggestedCommand: 'fw inspect client --json' };
  }
  const policy = /Policy "([^"]+)"/.exec(text)?.[1] ?? entry?.policy;
  const declared = entry ? `${entry.name} has policy "${entry.policy}"${entry.file ? ` (${entry.file})` : ''}` : policy ? `Policy "${policy}"` : 'A policy';
  if (code === 'unauthenticated') {
    return { kind: 'policy', ...about, detail: `${declared}; the call was anonymous or its dev identity malformed.`, hint: "Call with an identity: createClient({ devAuth: { userId, tenantId, role } }) or the x-fw-user-id and x-fw-tenant-id headers; use policy 'public' only if anyone may call it.", suggestedCommand: 'fw inspect client --json' };
  }
  return {
    kind: 'policy',
    ...about,
    detail: `${declared}${policy && entry && policy !== entry.policy ? ` (refused by "${policy}")` : ''}, which refused this caller.`,
    hint: `Call as someone ${policy ? `policy "${policy}" (src/policies.ts)` : 'the policy'} allows (e.g. with the role it checks, x-fw-role in dev), or change the entry’s policy if this caller should be allowed.`,
    suggestedCommand: 'fw inspect client --json',
  };
}

/** The entry a failure is about: a route or `named "x"` in its error, else an entry name in the test's name, else in its error. */
function mentionedEntry(failure: TestFailureRecord, text: string, facts: AppFacts): AppFacts['entries'][number] | undefined {
  const byName = (name: string | undefined) => (name ? facts.entries.find((e) => e.name === name) : undefined);
  const routed = /\/(?:commands|queries|live)\/([A-Za-z][A-Za-z0-9]*)/.exec(text)?.[1] ?? /named "([^"]+)"/.exec(text)?.[1];
  if (byName(routed)) return byName(routed);
  const longestFirst = [...facts.entries].sort((a, b) => b.name.length - a.name.length);
  for (const haystack of [failure.test, text]) {
    const found = longestFirst.find((e) => new RegExp(`\\b${e.name}\\b`).test(haystack));
    if (found) return found;
  }
  return undefined;
}
