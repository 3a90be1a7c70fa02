import { createHash, randomUUID } from 'node:crypto';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { FwFailure } from '../../runtime/core/failure.ts';

// Agent activity events (spec, Events 6): hook payloads of external coding agents, normalised into the
// `fw.agent-event.v1` envelope (schemas/fw-agent-event.v1.schema.json). Nothing of a payload's content
// is copied: every string in an event is a vocabulary word, a hash, a timestamp fw formatted, or a short
// identifier that passed a strict character check and the secret detector.

export const agentEventSchemaName = 'fw.agent-event.v1';
export const agentSources = ['claude-code', 'codex', 'unknown'] as const;
export const agentEventKinds = ['session.start', 'session.end', 'prompt.submitted', 'tool.started', 'tool.finished', 'tool.failed', 'agent.stopped', 'notification', 'other'] as const;

export type AgentSource = (typeof agentSources)[number];
export type AgentEventKind = (typeof agentEventKinds)[number];
export type AgentToolCategory = 'shell' | 'edit' | 'read' | 'search' | 'web' | 'mcp' | 'agent' | 'other';

/** Counts, lengths, flags and short labels; which ones appear depends on the event. */
export interface AgentEventSummary {
  promptChars?: number;
  messageCount?: number;
  inputKeys?: string[];
  inputChars?: number;
  outputKeys?: string[];
  outputChars?: number;
  exitCode?: number;
  success?: boolean;
  interrupted?: boolean;
  errorChars?: number;
  messageChars?: number;
  assistantChars?: number;
  trigger?: string;
  notificationType?: string;
  permissionMode?: string;
  model?: string;
  agentType?: string;
  subagent?: boolean;
  stopHookActive?: boolean;
  keys?: string[];
  secretsDetected?: number;
}

export interface AgentEventRedaction {
  field: string;
  as: 'dropped' | 'length' | 'keys' | 'basename' | 'hash' | 'secret';
}

/** One `fw.agent-event.v1` envelope; see schemas/fw-agent-event.v1.schema.json for each field. */
export interface AgentEvent {
  schema: typeof agentEventSchemaName;
  id: string;
  source: AgentSource;
  sourceEvent: string | null;
  kind: AgentEventKind;
  occurredAt: string;
  ingestedAt: string;
  session: { id: string; turnId: string | null } | null;
  tool: { name: string; category: AgentToolCategory } | null;
  cwd: string | null;
  summary: AgentEventSummary;
  redactions: AgentEventRedaction[];
}

const REDACTED = '[redacted]';
const REDACTED_KEY = '[redacted-key]';

// ── Secret detector ────────────────────────────────────────────────────────────────────────────
// The second line of defence: fw copies no content in the first place, but every identifier it does
// keep (tool name, event name, model, directory name, key names) must also pass this check.

const secretPatterns: RegExp[] = [
  /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/,
  /\bsk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{16,}/, // OpenAI, Anthropic
  /\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}/, // Stripe
  /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/,
  /\bglpat-[A-Za-z0-9_-]{20,}/,
  /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/, // AWS access key ids
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/, // Slack
  /\bAIza[0-9A-Za-z_-]{35}/, // Google
  /\bnpm_[A-Za-z0-9]{36}/,
  /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/, // JWT
  /\bBearer\s+[A-Za-z0-9._~+/=-]{12,}/i,
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:[^\s/@]+@/i, // credentials in a URL
  /(?:pass(?:word|wd)?|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)["']?\s*[:=]\s*["']?[^\s"']{4,}/i,
];

// Key names that say their value is a secret (`password`, `api_key`, `accessToken`, `Authorization`).
const sensitiveKeyName = /pass(?:word|wd|phrase)|^pass$|^pwd$|secret|token$|(?:^|[_-])token[_-]|api[_-]?key|access[_-]?key|private[_-]?key|credential|(?:^|[_-])auth(?:$|[_-]|orization)|cookie|session[_-]?key/i;

/**
 * Whether a string looks like (or contains) a secret: known token formats, `password=…`-style
 * assignments, credentials in URLs, and long high-entropy tokens.
 * @example looksSecret('export OPENAI_API_KEY=sk-proj-…') // true
 */
export function looksSecret(text: string): boolean {
  if (secretPatterns.some((pattern) => pattern.test(text))) return true;
  for (const token of text.match(/[A-Za-z0-9_+/=-]{32,}/g) ?? []) {
    if (/^[0-9a-f]+$/i.test(token) && /[0-9]/.test(token) && /[a-f]/i.test(token)) return true; // hex keys
    if (/[a-z]/.test(token) && /[A-Z]/.test(token) && /[0-9]/.test(token) && entropy(token) >= 4.2) return true;
  }
  return false;
}

function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) bits -= (count / text.length) * Math.log2(count / text.length);
  return bits;
}

/** Counts the strings anywhere in a payload that look secret: values, keys, and values of secret-named keys. */
function countSecrets(value: unknown, depth = 0): number {
  if (typeof value === 'string') return looksSecret(value) ? 1 : 0;
  if (depth > 32 || value === null || typeof value !== 'object') return 0;
  let count = 0;
  for (const [key, child] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
    if (typeof key === 'string' && looksSecret(key)) count++;
    if (typeof key === 'string' && typeof child === 'string' && child !== '' && sensitiveKeyName.test(key) && !looksSecret(child)) count++;
    else count += countSecrets(child, depth + 1);
  }
  return count;
}

// ── Identifiers fw keeps ───────────────────────────────────────────────────────────────────────

const eventNamePattern = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
const toolNamePattern = /^[A-Za-z0-9_.:@/-]{1,128}$/;
const keyNamePattern = /^[A-Za-z0-9_.$@:-]{1,64}$/;
const modelPattern = /^[A-Za-z0-9._:@/-]{1,96}$/;
const dirNamePattern = /^[^/\\\u0000-\u001f]{1,128}$/;

/** The value when it is a string of the given shape and not secret-looking; otherwise undefined. */
function identifier(value: unknown, pattern: RegExp): string | undefined {
  return typeof value === 'string' && pattern.test(value) && !looksSecret(value) ? value : undefined;
}

/** A key name as stored: itself, or `[redacted-key]` when it looks secret or is not a plain name. */
export function safeKeyName(key: string): string {
  return keyNamePattern.test(key) && !sensitiveKeyName.test(key) && !looksSecret(key) ? key : REDACTED_KEY;
}

function keyNames(value: Record<string, unknown>): string[] {
  return [...new Set(Object.keys(value).map(safeKeyName))].slice(0, 64);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function jsonLength(value: unknown): number {
  return typeof value === 'string' ? value.length : (JSON.stringify(value) ?? '').length;
}

function hash16(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 16);
}

// ── Tools ──────────────────────────────────────────────────────────────────────────────────────

// Claude Code's and Codex's built-in tools, by lower-cased name.
const toolCategories: Record<string, AgentToolCategory> = {
  bash: 'shell', bashoutput: 'shell', killshell: 'shell', killbash: 'shell', shell: 'shell', local_shell: 'shell',
  exec_command: 'shell', write_stdin: 'shell', unified_exec: 'shell', powershell: 'shell',
  edit: 'edit', multiedit: 'edit', write: 'edit', notebookedit: 'edit', apply_patch: 'edit',
  read: 'read', notebookread: 'read', ls: 'read', view_image: 'read', read_file: 'read', list_dir: 'read',
  grep: 'search', glob: 'search', toolsearch: 'search', grep_files: 'search', file_search: 'search',
  webfetch: 'web', websearch: 'web', web_fetch: 'web', web_search: 'web',
  task: 'agent', agent: 'agent',
};

function toolCategory(name: string): AgentToolCategory {
  if (name.startsWith('mcp__')) return 'mcp';
  return toolCategories[name.toLowerCase()] ?? 'other';
}

// ── Normalising ────────────────────────────────────────────────────────────────────────────────

/** What a payload's fields came to, before it becomes an event. Raw ids live here only to be hashed. */
interface Draft {
  sourceEvent: string | null;
  rawSession?: string;
  rawTurn?: string;
  identity: string[];
  occurredAt?: string;
  tool: AgentEvent['tool'];
  cwd: string | null;
  summary: AgentEventSummary;
  redactions: AgentEventRedaction[];
}

type FieldReader = (value: unknown, draft: Draft, field: string) => void;

function redact(draft: Draft, field: string, as: AgentEventRedaction['as']): void {
  draft.redactions.push({ field: safeKeyName(field), as });
}

const drop: FieldReader = (_value, draft, field) => redact(draft, field, 'dropped');

/** A short label copied into the summary when it is one; otherwise dropped. */
function label(key: 'trigger' | 'notificationType' | 'permissionMode' | 'agentType' | 'model'): FieldReader {
  return (value, draft, field) => {
    const kept = identifier(value, key === 'model' ? modelPattern : eventNamePattern);
    if (kept !== undefined) draft.summary[key] = kept;
    else redact(draft, field, typeof value === 'string' && looksSecret(value) ? 'secret' : 'dropped');
  };
}

function flag(key: 'interrupted' | 'stopHookActive'): FieldReader {
  return (value, draft, field) => {
    if (typeof value === 'boolean') draft.summary[key] = value;
    else redact(draft, field, 'dropped');
  };
}

/** Content reduced to its length (as JSON when it is not a string). */
function length(key: 'promptChars' | 'messageChars' | 'errorChars' | 'assistantChars'): FieldReader {
  return (value, draft, field) => {
    if (value !== null && value !== undefined) draft.summary[key] = jsonLength(value);
    redact(draft, field, 'length');
  };
}

/** An id that only feeds the event id (tool_use_id, agent_id). */
const identity: FieldReader = (value, draft, field) => {
  if (typeof value === 'string' || typeof value === 'number') draft.identity.push(`${field}=${value}`);
  redact(draft, field, 'hash');
};

const sessionId: FieldReader = (value, draft, field) => {
  if (typeof value === 'string' && value !== '') draft.rawSession = value;
  redact(draft, field, 'hash');
};

const turnId: FieldReader = (value, draft, field) => {
  if (typeof value === 'string' && value !== '') {
    draft.rawTurn = value;
    draft.identity.push(`turn=${value}`);
  }
  redact(draft, field, 'hash');
};

const cwd: FieldReader = (value, draft, field) => {
  if (typeof value === 'string') {
    const name = value.split(/[\\/]/).filter(Boolean).at(-1) ?? '';
    if (looksSecret(name)) {
      draft.cwd = REDACTED;
      redact(draft, field, 'secret');
      return;
    }
    if (dirNamePattern.test(name)) draft.cwd = name;
  }
  redact(draft, field, 'basename');
};

const toolName: FieldReader = (value, draft, field) => {
  if (typeof value !== 'string') return redact(draft, field, 'dropped');
  const name = identifier(value, toolNamePattern);
  draft.tool = { name: name ?? REDACTED, category: name === undefined ? 'other' : toolCategory(name) };
  if (name === undefined) redact(draft, field, looksSecret(value) ? 'secret' : 'dropped');
};

const toolInput: FieldReader = (value, draft, field) => {
  if (isRecord(value)) draft.summary.inputKeys = keyNames(value);
  if (value !== null && value !== undefined) draft.summary.inputChars = jsonLength(value);
  redact(draft, field, 'keys');
};

const toolResponse: FieldReader = (value, draft, field) => {
  if (value !== null && value !== undefined) draft.summary.outputChars = jsonLength(value);
  if (!isRecord(value)) return redact(draft, field, 'length');
  draft.summary.outputKeys = keyNames(value);
  const exitCode = [value.exit_code, value.exitCode, value.returncode].find((v) => Number.isInteger(v)) as number | undefined;
  if (exitCode !== undefined) draft.summary.exitCode = exitCode;
  if (typeof value.success === 'boolean') draft.summary.success = value.success;
  else if (typeof value.is_error === 'boolean') draft.summary.success = !value.is_error;
  else if (exitCode !== undefined) draft.summary.success = exitCode === 0;
  if (typeof value.interrupted === 'boolean') draft.summary.interrupted = value.interrupted;
  redact(draft, field, 'keys');
};

const timestampFields = new Set(['timestamp', 'time', 'ts', 'created_at', 'createdAt', 'occurred_at', 'occurredAt', 'event_time']);

/** A payload timestamp (ISO string, or epoch seconds/milliseconds) reformatted by fw; never copied. */
const timestamp: FieldReader = (value, draft, field) => {
  const ms = typeof value === 'number' ? (value < 1e12 ? value * 1000 : value) : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  const date = new Date(ms);
  const valid = Number.isFinite(ms) && date.getUTCFullYear() >= 1970 && date.getUTCFullYear() <= 9999;
  if (valid && draft.occurredAt === undefined) {
    draft.occurredAt = date.toISOString();
    draft.identity.push(`at=${draft.occurredAt}`);
  } else if (!valid) redact(draft, field, 'dropped');
};

/** Fields of Claude Code hook payloads; Codex hooks use the same names (plus turn_id). */
const hookFields: Record<string, FieldReader> = {
  hook_event_name: () => {},
  session_id: sessionId,
  turn_id: turnId,
  transcript_path: drop,
  agent_transcript_path: drop,
  cwd,
  tool_name: toolName,
  tool_input: toolInput,
  tool_response: toolResponse,
  tool_output: toolResponse,
  tool_use_id: identity,
  agent_id: identity,
  prompt: length('promptChars'),
  message: length('messageChars'),
  error: length('errorChars'),
  last_assistant_message: length('assistantChars'),
  is_interrupt: flag('interrupted'),
  stop_hook_active: flag('stopHookActive'),
  permission_mode: label('permissionMode'),
  model: label('model'),
  source: label('trigger'),
  reason: label('trigger'),
  trigger: label('trigger'),
  notification_type: label('notificationType'),
  agent_type: label('agentType'),
};

/** Fields of the Codex CLI `notify` payload (kebab-case). */
const codexNotifyFields: Record<string, FieldReader> = {
  type: () => {},
  'thread-id': sessionId,
  'turn-id': turnId,
  cwd,
  'input-messages': (value, draft, field) => {
    if (Array.isArray(value)) {
      draft.summary.messageCount = value.length;
      draft.summary.promptChars = value.reduce<number>((sum, message) => sum + jsonLength(message), 0);
    }
    redact(draft, field, 'length');
  },
  'last-assistant-message': length('assistantChars'),
  model: label('model'),
};

const hookKinds: Record<string, AgentEventKind> = {
  SessionStart: 'session.start',
  SessionEnd: 'session.end',
  UserPromptSubmit: 'prompt.submitted',
  PreToolUse: 'tool.started',
  PostToolUse: 'tool.finished',
  PostToolUseFailure: 'tool.failed',
  PermissionDenied: 'tool.failed',
  Stop: 'agent.stopped',
  SubagentStop: 'agent.stopped',
  StopFailure: 'agent.stopped',
  Notification: 'notification',
  PermissionRequest: 'notification',
};
const failedHookEvents = new Set(['PostToolUseFailure', 'PermissionDenied', 'StopFailure']);
const codexNotifyKeys = ['thread-id', 'turn-id', 'input-messages', 'last-assistant-message'];

type Shape = 'hook' | 'codex-notify' | 'unknown';

function shapeOf(payload: Record<string, unknown>): Shape {
  if (typeof payload.hook_event_name === 'string') return 'hook';
  if (typeof payload.type === 'string' && codexNotifyKeys.some((key) => key in payload)) return 'codex-notify';
  return 'unknown';
}

// Codex hooks are modelled on Claude Code's and share their field names; Codex adds turn_id and keeps
// transcripts under ~/.codex, Claude Code under ~/.claude.
function detectSource(shape: Shape, payload: Record<string, unknown>): AgentSource {
  if (shape === 'codex-notify') return 'codex';
  if (shape === 'unknown') return 'unknown';
  const transcript = typeof payload.transcript_path === 'string' ? payload.transcript_path.replaceAll('\\', '/') : '';
  if (transcript.includes('/.claude/')) return 'claude-code';
  if (transcript.includes('/.codex/') || typeof payload.turn_id === 'string') return 'codex';
  return 'claude-code';
}

/** Checks a `--source` value; misuse fails naming the accepted values. */
export function resolveAgentSource(source: string): AgentSource {
  if ((agentSources as readonly string[]).includes(source)) return source as AgentSource;
  throw new FwFailure('invalid_option', `Unknown agent source "${source}".`, {
    suggestions: [`Use --source ${agentSources.join(', --source ')}, or leave it out to detect the source from the payload.`],
  });
}

export interface NormaliseAgentEventOptions {
  /** The ingest time (default: now). */
  now?: Date;
}

/**
 * Normalises one hook payload of a coding agent into a redacted `fw.agent-event.v1` envelope. Claude Code
 * hook payloads, Codex hook payloads and the Codex `notify` payload are recognised (the source is
 * detected from the payload's shape unless given); other objects become kind "other" with only their
 * key names kept.
 * @example normaliseAgentEvent({ hook_event_name: 'PreToolUse', session_id: 'abc', tool_name: 'Bash', tool_input: { command: 'ls' } })
 * // → { kind: 'tool.started', tool: { name: 'Bash', category: 'shell' }, summary: { inputKeys: ['command'], … }, … }
 */
export function normaliseAgentEvent(payload: unknown, source?: string, options: NormaliseAgentEventOptions = {}): AgentEvent {
  const forced = source === undefined ? undefined : resolveAgentSource(source);
  if (!isRecord(payload)) {
    const what = Array.isArray(payload) ? 'an array' : payload === null ? 'null' : `a ${typeof payload}`;
    throw new FwFailure('invalid_agent_event', `An agent event must be a JSON object, not ${what}.`, {
      suggestions: ['Send one hook payload object per line (JSON Lines), or one JSON object.'],
    });
  }
  const shape = shapeOf(payload);
  const resolved = forced ?? detectSource(shape, payload);
  const draft: Draft = { sourceEvent: null, identity: [], tool: null, cwd: null, summary: {}, redactions: [] };
  let kind: AgentEventKind = 'other';

  if (shape === 'hook' && resolved !== 'unknown') {
    const name = payload.hook_event_name as string;
    draft.sourceEvent = eventName(name, draft, 'hook_event_name');
    kind = hookKinds[name] ?? 'other';
    readFields(payload, hookFields, draft);
    if (name === 'SubagentStart' || name === 'SubagentStop') draft.summary.subagent = true;
    if (failedHookEvents.has(name)) draft.summary.success = false;
  } else if (shape === 'codex-notify' && resolved === 'codex') {
    const type = payload.type as string;
    draft.sourceEvent = eventName(type, draft, 'type');
    kind = type === 'agent-turn-complete' ? 'agent.stopped' : 'other';
    readFields(payload, codexNotifyFields, draft);
  } else {
    draft.summary.keys = keyNames(payload);
    readFields(payload, {}, draft);
  }

  const secrets = countSecrets(payload);
  if (secrets > 0) draft.summary.secretsDetected = secrets;
  return assertRedacted(buildEvent(resolved, kind, draft, options.now ?? new Date()));
}

function eventName(name: string, draft: Draft, field: string): string | null {
  const kept = identifier(name, eventNamePattern);
  if (kept === undefined) redact(draft, field, looksSecret(name) ? 'secret' : 'dropped');
  return kept ?? null;
}

function readFields(payload: Record<string, unknown>, fields: Record<string, FieldReader>, draft: Draft): void {
  for (const [field, value] of Object.entries(payload)) {
    const reader = Object.hasOwn(fields, field) ? fields[field]! : timestampFields.has(field) ? timestamp : drop;
    reader(value, draft, field);
  }
}

function buildEvent(source: AgentSource, kind: AgentEventKind, draft: Draft, now: Date): AgentEvent {
  const ingestedAt = now.toISOString();
  return {
    schema: agentEventSchemaName,
    id: eventId(source, draft),
    source,
    sourceEvent: draft.sourceEvent,
    kind,
    occurredAt: draft.occurredAt ?? ingestedAt,
    ingestedAt,
    session: draft.rawSession === undefined ? null : { id: hash16(draft.rawSession), turnId: draft.rawTurn === undefined ? null : hash16(draft.rawTurn) },
    tool: draft.tool,
    cwd: draft.cwd,
    summary: draft.summary,
    redactions: draft.redactions,
  };
}

/**
 * A payload that identifies its event (tool_use_id, a turn id, a timestamp) gets an id derived from those
 * identifiers (UUID version 8), so a re-delivered payload keeps its id; any other gets a random UUID.
 */
function eventId(source: AgentSource, draft: Draft): string {
  if (draft.identity.length === 0) return randomUUID();
  const hex = createHash('sha256').update(JSON.stringify([source, draft.sourceEvent, draft.rawSession ?? null, ...draft.identity])).digest('hex');
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Fails closed: an event with a secret-looking string left in it is never returned (and so never stored). */
function assertRedacted(event: AgentEvent): AgentEvent {
  const { id: _id, session: _session, ...rest } = event;
  const strings: string[] = [];
  JSON.stringify(rest, (_key, value: unknown) => {
    if (typeof value === 'string') strings.push(value);
    return value;
  });
  if (strings.some(looksSecret)) {
    throw new FwFailure('internal', 'fw refused to store an agent event that still contained a secret-looking value; this is a bug in fw.');
  }
  return event;
}

// ── The store: .fw/agent-events.jsonl ────────────────────────────────────────────────────────────

/** Where `root`'s agent events are stored. */
export function agentEventsFile(root: string): string {
  return path.join(root, '.fw', 'agent-events.jsonl');
}

export interface IngestAgentEventsResult {
  file: string;
  ingested: number;
  events: AgentEvent[];
  /** Lines that were not stored, with why; the message never quotes the line. */
  rejected: Array<{ line: number; message: string }>;
}

/**
 * Normalises one JSON document or JSON Lines (one payload per line) and appends the events to
 * `.fw/agent-events.jsonl`; a bad line is reported and the others are still stored.
 * @example const { ingested, rejected } = await ingestAgentEvents(root, hookPayloadText, 'claude-code');
 */
export async function ingestAgentEvents(root: string, input: string, source?: string): Promise<IngestAgentEventsResult> {
  if (source !== undefined) resolveAgentSource(source);
  const now = new Date();
  const events: AgentEvent[] = [];
  const rejected: IngestAgentEventsResult['rejected'] = [];
  for (const document of parseDocuments(input)) {
    if ('error' in document) {
      rejected.push({ line: document.line, message: document.error });
      continue;
    }
    try {
      events.push(normaliseAgentEvent(document.value, source, { now }));
    } catch (error) {
      rejected.push({ line: document.line, message: error instanceof FwFailure ? error.message : 'fw could not normalise this payload.' });
    }
  }
  const file = agentEventsFile(root);
  if (events.length > 0) {
    await mkdir(path.dirname(file), { recursive: true });
    // One write for the batch: hooks of parallel tool calls append concurrently, and O_APPEND keeps
    // each write's lines together.
    await appendFile(file, events.map((event) => `${JSON.stringify(event)}\n`).join(''));
  }
  return { file, ingested: events.length, events, rejected };
}

type Document = { line: number; value: unknown } | { line: number; error: string };

function parseDocuments(input: string): Document[] {
  const text = input.trim();
  if (text === '') return [];
  try {
    return [{ line: 1, value: JSON.parse(text) }];
  } catch {
    // Not one document: JSON Lines.
  }
  const documents: Document[] = [];
  input.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    try {
      documents.push({ line: index + 1, value: JSON.parse(line) });
    } catch (error) {
      // The parser's own message quotes the input, which may hold a secret: keep only the position.
      const position = /position (\d+)/.exec(error instanceof Error ? error.message : '')?.[1];
      documents.push({ line: index + 1, error: `Line ${index + 1} is not valid JSON${position === undefined ? '' : ` (at character ${Number(position) + 1})`}.` });
    }
  });
  return documents;
}

export interface ListAgentEventsOptions {
  /** At most this many events (default: all). */
  limit?: number;
  source?: string;
  kind?: string;
}

export interface ListAgentEventsResult {
  file: string;
  /** Matching events before the limit. */
  total: number;
  /** Newest first (by occurredAt, then by the order they were stored). */
  events: AgentEvent[];
  /** Lines of the file that were not fw.agent-event.v1 envelopes. */
  skipped: number;
}

/**
 * The stored agent events of `root`, newest first, optionally filtered by source and kind. Events with
 * the same id (a payload delivered twice) are listed once.
 * @example const { events } = await listAgentEvents(root, { kind: 'tool.started', limit: 20 });
 */
export async function listAgentEvents(root: string, options: ListAgentEventsOptions = {}): Promise<ListAgentEventsResult> {
  const { limit, source, kind } = options;
  if (source !== undefined) resolveAgentSource(source);
  if (kind !== undefined && !(agentEventKinds as readonly string[]).includes(kind)) {
    throw new FwFailure('invalid_option', `Unknown agent event kind "${kind}".`, { suggestions: [`Use one of: ${agentEventKinds.join(', ')}.`] });
  }
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
    throw new FwFailure('invalid_option', `--limit must be a positive integer, not ${limit}.`, { suggestions: ['Pass e.g. --limit 20.'] });
  }
  const file = agentEventsFile(root);
  let text = '';
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const seen = new Set<string>();
  const stored: AgentEvent[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let event: AgentEvent;
    try {
      event = JSON.parse(line) as AgentEvent;
    } catch {
      skipped++;
      continue;
    }
    if (!isRecord(event) || event.schema !== agentEventSchemaName || typeof event.id !== 'string' || typeof event.occurredAt !== 'string') {
      skipped++;
      continue;
    }
    if (seen.has(event.id)) continue;
    seen.add(event.id);
    stored.push(event);
  }
  const matching = stored
    .map((event, index) => ({ event, index }))
    .filter(({ event }) => (source === undefined || event.source === source) && (kind === undefined || event.kind === kind))
    .sort((a, b) => (a.event.occurredAt === b.event.occurredAt ? b.index - a.index : a.event.occurredAt < b.event.occurredAt ? 1 : -1))
    .map(({ event }) => event);
  return { file, total: matching.length, events: limit === undefined ? matching : matching.slice(0, limit), skipped };
}
