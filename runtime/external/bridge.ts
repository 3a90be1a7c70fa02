import { injectTraceContext, inSpan, SpanKind } from '../telemetry/tracing.ts';
import { type ChildProcess, spawn } from 'node:child_process';
import type { Auth } from '../core/entry-types.ts';
import { FwError } from '../core/errors.ts';
import { readEnvironment } from '../config/environment.ts';

/** What fw sends an external service for one call (the spec's bridge request envelope). */
export interface BridgeEnvelope {
  args: Record<string, unknown>;
  auth: { kind: Auth['kind']; userId: string | null; tenantId: string | null; role: string | null };
  fw: { service: string; entry: string; kind: 'command' | 'query'; traceId: string };
}

/** How to reach one service, from its manifest. */
export type BridgeTarget =
  | { transport: 'http'; baseUrl: string; path: string }
  | { transport: 'stdio'; command: string; commandArgs: readonly string[]; cwd: string }
  | { transport: 'grpc' };

export interface BridgeLimits {
  /** Per call, in ms (default 5 000). The call is abandoned — and a stdio process killed — when it passes. */
  timeoutMs: number;
  /** Largest response accepted, in bytes (default 1 MiB). */
  maxResponseBytes: number;
}

export const defaultBridgeLimits: BridgeLimits = { timeoutMs: 5_000, maxResponseBytes: 1024 * 1024 };

/** How much of a stdio service's stderr is kept for the error message. */
const stderrKept = 2_000;

/**
 * Calls an external service and returns its result. Every way a service can misbehave — down, hung,
 * crashed, too large, not JSON, an error envelope — becomes an FwError with a distinct diagnostic code
 * (`external_unreachable`, `external_timeout`, `external_crashed`, `external_response_too_large`,
 * `external_invalid_response`, `external_error` with the service's own code), never a crash or a hang.
 */
export async function callExternal(target: BridgeTarget, envelope: BridgeEnvelope, options: { limits?: Partial<BridgeLimits>; authorization?: string } = {}): Promise<unknown> {
  const qualified = `${envelope.fw.service}.${envelope.fw.entry}`;
  const attributes = { 'fw.external.service': envelope.fw.service, 'fw.external.entry': envelope.fw.entry, 'fw.external.kind': envelope.fw.kind, 'fw.external.transport': target.transport };
  return inSpan(`fw.external ${qualified}`, { kind: SpanKind.CLIENT, attributes }, () => callTransport(qualified, target, envelope, options));
}

async function callTransport(qualified: string, target: BridgeTarget, envelope: BridgeEnvelope, options: { limits?: Partial<BridgeLimits>; authorization?: string }): Promise<unknown> {
  const limits = { ...defaultBridgeLimits, ...options.limits };
  switch (target.transport) {
    case 'grpc':
      throw new FwError('not_implemented', `${qualified}: the grpc transport is accepted in manifests but the built-in bridge cannot call it.`, {
        diagnostics: [{ path: 'service.transport', code: 'grpc_not_supported', message: 'Serve the entry over http or stdio, or call the service yourself from an action.' }],
      });
    case 'http':
      return readResponse(qualified, await httpCall(qualified, target, envelope, limits, options.authorization));
    case 'stdio':
      return readResponse(qualified, await stdioCall(qualified, target, envelope, limits));
  }
}

interface RawResponse {
  /** The HTTP status, or 200/500 for a stdio exit code 0/other. */
  status: number;
  body: string;
}

async function httpCall(qualified: string, target: Extract<BridgeTarget, { transport: 'http' }>, envelope: BridgeEnvelope, limits: BridgeLimits, authorization: string | undefined): Promise<RawResponse> {
  const url = new URL(target.path.replace(/^\/+/, ''), target.baseUrl.endsWith('/') ? target.baseUrl : `${target.baseUrl}/`);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    'x-fw-trace-id': envelope.fw.traceId,
    'x-fw-auth-kind': envelope.auth.kind,
  };
  if (envelope.auth.userId !== null) headers['x-fw-user-id'] = envelope.auth.userId;
  if (envelope.auth.tenantId !== null) headers['x-fw-tenant-id'] = envelope.auth.tenantId;
  if (envelope.auth.role !== null) headers['x-fw-role'] = envelope.auth.role;
  if (authorization) headers.authorization = authorization;
  // W3C trace context: the service's own spans join the caller's trace.
  injectTraceContext(headers);
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(envelope), signal, redirect: 'error' });
  } catch (error) {
    if (signal.aborted) throw timeout(qualified, limits);
    throw new FwError('unavailable', `${qualified}: the service at ${url.origin} cannot be reached (${causeOf(error)}).`, {
      diagnostics: [{ path: 'service.baseUrl', code: 'external_unreachable', message: `POST ${url} failed.`, hint: 'Start the service, or check service.baseUrl in its manifest (fw manifest import).' }],
      cause: error,
    });
  }
  try {
    return { status: response.status, body: await readCapped(qualified, response, limits) };
  } catch (error) {
    if (signal.aborted) throw timeout(qualified, limits);
    throw error;
  }
}

async function readCapped(qualified: string, response: Response, limits: BridgeLimits): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limits.maxResponseBytes) {
    await response.body?.cancel();
    throw tooLarge(qualified, limits);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body ?? []) {
      size += chunk.byteLength;
      if (size > limits.maxResponseBytes) {
        await response.body?.cancel().catch(() => undefined);
        throw tooLarge(qualified, limits);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof FwError) throw error;
    throw new FwError('unavailable', `${qualified}: the service dropped the connection mid-response (${causeOf(error)}).`, {
      diagnostics: [{ path: 'response', code: 'external_unreachable', message: 'The connection closed before the response was complete.' }],
      cause: error,
    });
  }
  return Buffer.concat(chunks).toString('utf8');
}

function stdioCall(qualified: string, target: Extract<BridgeTarget, { transport: 'stdio' }>, envelope: BridgeEnvelope, limits: BridgeLimits): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    // No shell: arguments reach the process exactly as listed, empty ones included. Detached, it leads
    // its own process group, so whatever it starts (a wrapper script's child) can be killed with it.
    const child = spawn(target.command, [...target.commandArgs], { cwd: target.cwd, shell: false, stdio: ['pipe', 'pipe', 'pipe'], env: stdioEnv(), detached: groupKill });
    const group = trackGroup(child);
    const stdout: Buffer[] = [];
    let stdoutSize = 0;
    let stderr = '';
    let settled = false;
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      finish();
    };
    // Timeout or size overflow: kill the whole group and answer now. A grandchild that holds stdout
    // open (or escaped the group) must not keep the call waiting for a 'close' that may never come.
    const abort = (error: FwError) => {
      group.kill();
      child.stdout.destroy();
      child.stderr.destroy();
      child.stdin.destroy();
      settle(() => reject(error));
    };
    const timer = setTimeout(() => abort(timeout(qualified, limits)), limits.timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      stdoutSize += chunk.length;
      if (stdoutSize > limits.maxResponseBytes) return abort(tooLarge(qualified, limits));
      stdout.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < stderrKept) stderr += chunk.toString('utf8').slice(0, stderrKept - stderr.length);
    });
    child.on('error', (error) => {
      settle(() =>
        reject(
          new FwError('unavailable', `${qualified}: cannot start "${target.command}" (${causeOf(error)}).`, {
            diagnostics: [{ path: 'service.command', code: 'external_unreachable', message: 'The command was not found or is not executable.', hint: 'Check service.command and service.commandArgs in the manifest.' }],
            cause: error,
          }),
        ),
      );
    });
    child.on('close', (code, signal) => {
      settle(() => {
        const body = Buffer.concat(stdout).toString('utf8');
        if (code === 0) return resolve({ status: 200, body });
        // A failing process may still have printed an error envelope: prefer it to a bare exit code.
        if (isErrorEnvelope(parseJson(body))) return resolve({ status: 500, body });
        reject(
          new FwError('bad_gateway', `${qualified}: the process ${signal ? `was killed by ${signal}` : `exited with code ${code}`}${stderr ? `: ${stderr.trim().split('\n').at(-1)}` : ''}.`, {
            diagnostics: [{ path: 'service.command', code: 'external_crashed', message: stderr.trim() || 'No output on stderr.', hint: 'Run the command by hand with the envelope on stdin to see the failure.' }],
          }),
        );
      });
    });
    child.stdin.on('error', () => undefined); // A process that exits without reading stdin is reported by 'close'.
    child.stdin.end(JSON.stringify(envelope));
  });
}

/** Process groups need POSIX; elsewhere only the started process itself is killed. */
const groupKill = process.platform !== 'win32';

/** Process groups of stdio calls in flight, killed if fw itself exits first (they have left its group). */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

/**
 * A started process's group. `kill()` sends SIGKILL to every process in it; when the process itself
 * exits, whatever it left running in its group is killed too (one process per call), so its pipes
 * reach end-of-file. After that exit the group is done and is never signalled again.
 */
function trackGroup(child: ChildProcess): { kill(): void } {
  const pid = child.pid;
  if (pid === undefined) return { kill: () => undefined };
  let done = false;
  const kill = () => {
    if (done) return;
    if (groupKill) killGroup(pid);
    else child.kill('SIGKILL');
  };
  if (groupKill) {
    liveGroups.add(pid);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.once('exit', () => {
        for (const id of liveGroups) killGroup(id);
      });
    }
  }
  child.once('exit', () => {
    if (groupKill) killGroup(pid);
    done = true;
    liveGroups.delete(pid);
  });
  return { kill };
}

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // ESRCH: the group is empty already.
  }
}

/** A stdio service gets a minimal environment: no secrets of the fw process leak into it. */
function stdioEnv(): NodeJS.ProcessEnv {
  const environment = readEnvironment();
  const keep = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'SYSTEMROOT', 'TMPDIR', 'TEMP', 'TMP'];
  // A process has no headers: the trace context travels as TRACEPARENT / TRACESTATE, as OpenTelemetry's env carrier says.
  const trace: Record<string, string> = {};
  injectTraceContext(trace);
  return {
    ...Object.fromEntries(keep.flatMap((k) => (environment[k] === undefined ? [] : [[k, environment[k]!]]))),
    ...(trace.traceparent ? { TRACEPARENT: trace.traceparent } : {}),
    ...(trace.tracestate ? { TRACESTATE: trace.tracestate } : {}),
  };
}

/** The spec's response forms: `{ok, result}`, a raw JSON value, or an error envelope. */
function readResponse(qualified: string, response: RawResponse): unknown {
  const parsed = parseJson(response.body);
  if (parsed === invalid) {
    throw new FwError('bad_gateway', `${qualified}: the service answered something that is not JSON (status ${response.status}).`, {
      diagnostics: [{ path: 'response', code: 'external_invalid_response', message: `Starts with: ${JSON.stringify(response.body.slice(0, 80))}`, hint: 'An adapter answers with {"ok": true, "result": …} or a raw JSON value.' }],
    });
  }
  if (isErrorEnvelope(parsed) || response.status >= 400) throw serviceError(qualified, response.status, parsed);
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && (parsed as { ok?: unknown }).ok === true) {
    return (parsed as { result?: unknown }).result ?? null;
  }
  return parsed;
}

const invalid = Symbol('invalid');

function parseJson(text: string): unknown {
  if (text.trim() === '') return invalid;
  try {
    return JSON.parse(text);
  } catch {
    return invalid;
  }
}

function isErrorEnvelope(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return v.ok === false || ('error' in v && v.ok !== true) || (Array.isArray(v.diagnostics) && v.ok !== true);
}

/** An error the service reported, with its own code and diagnostics, as an fw error. */
function serviceError(qualified: string, status: number, body: unknown): FwError {
  const v = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const error = v.error;
  const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : 'external_error';
  const message =
    typeof (error as { message?: unknown })?.message === 'string' ? (error as { message: string }).message : typeof error === 'string' ? error : `The service answered ${status}.`;
  const diagnostics = Array.isArray(v.diagnostics)
    ? v.diagnostics.slice(0, 50).map((d) => {
        const item = (typeof d === 'object' && d !== null ? d : {}) as Record<string, unknown>;
        return { path: String(item.path ?? ''), message: String(item.message ?? ''), code: String(item.code ?? 'invalid') };
      })
    : [];
  // The caller's mistakes (the service's 4xx) stay the caller's; anything else is the service failing.
  // A 5xx (or a stdio process that exits non-zero) is a failure even with diagnostics: a crash handler
  // that puts its traceback there must not turn it into a 400 that shows it to the caller.
  const fwCode =
    status >= 500 ? 'bad_gateway'
    : status === 400 || status === 422 || diagnostics.length > 0 ? 'validation_failed'
    : status === 404 ? 'not_found'
    : status === 409 ? 'conflict'
    : status === 403 ? 'forbidden'
    : 'bad_gateway';
  return new FwError(fwCode, `${qualified}: ${message}`, {
    diagnostics: [{ path: 'external', code, message, hint: `Reported by the service (status ${status}).` }, ...diagnostics],
  });
}

function timeout(qualified: string, limits: BridgeLimits): FwError {
  return new FwError('gateway_timeout', `${qualified}: no answer within ${limits.timeoutMs} ms.`, {
    diagnostics: [{ path: 'service', code: 'external_timeout', message: `The call was abandoned after ${limits.timeoutMs} ms.`, hint: 'Make the service answer faster, or raise the timeout for this service.' }],
  });
}

function tooLarge(qualified: string, limits: BridgeLimits): FwError {
  return new FwError('bad_gateway', `${qualified}: the response is larger than ${limits.maxResponseBytes} bytes.`, {
    diagnostics: [{ path: 'response', code: 'external_response_too_large', message: `At most ${limits.maxResponseBytes} bytes are read.`, hint: 'Page the result, or raise the size limit for this service.' }],
  });
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
