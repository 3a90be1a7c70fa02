import { trace } from '@opentelemetry/api';

/**
 * What fw dev's dashboard keeps about a trace beside its spans — never on them: spans are what an
 * exporter sends, and they carry no args, results, users, messages or SQL values (docs/observability.md).
 * Here, in this process's memory only: who made the request, how it failed (code, status, message), the
 * entries it ran with their args and result, and the text of its raw SQL statements. Kept only while
 * `fw dev` keeps recent spans (recent-spans.ts turns it on); otherwise every note is one flag check.
 * Bounded: notes go with their trace when the buffer lets it go, and past MAX_TRACES the oldest go first.
 */

export interface Caller {
  kind: string;
  userId: string | null;
  tenantId: string | null;
  role: string | null;
}

/** How a trace's work failed, as its caller was told (dev: the message too). */
export interface Failure {
  code: string;
  /** The HTTP status of that code (a delivery's failure has the status its code would answer). */
  status: number;
  message: string;
  /** Where in the app's source (dev answers' diagnostic), e.g. `src/commands/x.ts:6:11`. */
  location?: string;
  diagnostics?: Array<{ path: string; code: string; message: string }>;
}

/** One entry the trace ran: its args and what it returned or threw (JSON text, cut at MAX_VALUE). */
export interface Invocation {
  entry: string;
  kind: string;
  args: string | null;
  result?: string;
  error?: { code: string; message: string };
  /** A workflow that ended its attempt to wait, or stopped for a cancel. */
  suspended?: 'wait' | 'cancelled';
  durationMs: number;
}

export interface TraceNotes {
  caller?: Caller;
  failure?: Failure;
  invocations: Invocation[];
  /** Raw SQL text by span id (Kysely-built text is on the span itself). */
  statements: Map<string, string>;
}

const MAX_TRACES = 2000;
const MAX_INVOCATIONS = 20;
const MAX_STATEMENTS = 300;
/** The longest args or result kept, in characters of JSON. */
export const MAX_VALUE = 16_000;

const notes = new Map<string, TraceNotes>();
let keeping = false;

export function setKeepingTraceNotes(on: boolean): void {
  keeping = on;
  if (!on) notes.clear();
}

/** Whether notes are kept (fw dev): callers skip the work of making one otherwise. */
export function keepingTraceNotes(): boolean {
  return keeping;
}

function notesFor(traceId: string): TraceNotes {
  let found = notes.get(traceId);
  if (!found) {
    found = { invocations: [], statements: new Map() };
    notes.set(traceId, found);
    if (notes.size > MAX_TRACES) notes.delete(notes.keys().next().value!);
  }
  return found;
}

/** The trace the running code belongs to (its active span's), if it is traced. */
export function activeTraceId(): string | undefined {
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span.spanContext().traceId : undefined;
}

/** Remembers who made the request of `traceId` (for the Requests view's Caller column). */
export function noteCaller(traceId: string, caller: Caller): void {
  if (!keeping) return;
  notesFor(traceId).caller = { kind: caller.kind, userId: caller.userId, tenantId: caller.tenantId, role: caller.role };
}

/** How the trace's work failed; the outermost teller (the HTTP answer, the delivery) notes last and wins. */
export function noteFailure(traceId: string | undefined, failure: Failure): void {
  const id = traceId ?? activeTraceId();
  if (!keeping || !id) return;
  notesFor(id).failure = failure;
}

/** An entry the active trace ran, with its args and outcome. */
export function noteInvocation(invocation: Omit<Invocation, 'args' | 'result'> & { args: unknown; result?: unknown }): void {
  const id = activeTraceId();
  if (!keeping || !id) return;
  const list = notesFor(id).invocations;
  if (list.length >= MAX_INVOCATIONS) return;
  const { args, result, ...rest } = invocation;
  list.push({ ...rest, args: valueText(args), ...('result' in invocation ? { result: valueText(result) ?? 'null' } : {}) });
}

/** The text of a raw SQL statement (its values are `$n` parameters, or whatever `sql.raw` wrote). */
export function noteStatement(traceId: string, spanId: string, text: string): void {
  if (!keeping) return;
  const statements = notesFor(traceId).statements;
  if (statements.size < MAX_STATEMENTS) statements.set(spanId, text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE)}…` : text);
}

export function notesOf(traceId: string): TraceNotes | undefined {
  return notes.get(traceId);
}

export function forgetNotes(traceId: string): void {
  notes.delete(traceId);
}

/** A value as JSON text, cut at MAX_VALUE (with `…`); null when there is none or it is not JSON. */
function valueText(value: unknown): string | null {
  if (value === undefined) return null;
  try {
    const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    if (text === undefined) return null;
    return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE)}…` : text;
  } catch {
    return null;
  }
}
