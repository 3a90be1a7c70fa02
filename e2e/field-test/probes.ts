/** One HTTP call the field test makes against a fresh app, as the report keeps it. */
export interface ProbeResult {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  status: number | null;
  traceId: string | null;
  ok: boolean;
  durationMs: number;
  /** What was wrong, when it was. */
  error?: string;
}

/** What each template's probes call: a command that writes, then a query that must return it. */
export const templateProbes: Record<string, { command: string; args: Record<string, unknown>; query: string; find: (result: unknown, marker: string) => boolean; role: string }> = {
  'minimal-web': notes(),
  'nuxt-web': notes(),
  'b2b-support-web': {
    command: 'createTicket',
    args: { subject: '', body: 'Opened by the field test.' },
    query: 'listTickets',
    find: (result, marker) => Array.isArray(result) && result.some((t) => (t as { subject?: unknown }).subject === marker),
    role: 'agent',
  },
};

function notes() {
  return {
    command: 'createNote',
    args: { title: '' },
    query: 'listNotes',
    find: (result: unknown, marker: string) => Array.isArray(result) && result.some((n) => (n as { title?: unknown }).title === marker),
    role: 'member',
  };
}

const devTenant = '00000000-0000-4000-8000-0000000000f7';

/**
 * The runtime probes, in order: `GET /health` until it answers (up to `waitMs`), `GET /entries`, the
 * template's command, then its query, which must return what the command wrote. Stops at the first
 * failure.
 */
export async function probeApp(serverUrl: string, template: string, options: { waitMs?: number } = {}): Promise<ProbeResult[]> {
  const spec = templateProbes[template];
  const results: ProbeResult[] = [];
  const identity = { 'x-fw-user-id': 'field-test', 'x-fw-tenant-id': devTenant, 'x-fw-role': spec?.role ?? 'member' };

  const health = await waitForHealth(serverUrl, options.waitMs ?? 30_000);
  results.push(health);
  if (!health.ok) return results;

  const entries = await request(serverUrl, 'entries', 'GET', '/entries', undefined, identity);
  results.push(entries.probe);
  if (!entries.probe.ok) return results;
  if (!spec) {
    results.push({ name: 'template', method: 'GET', path: '/entries', status: null, traceId: null, ok: false, durationMs: 0, error: `No probes are defined for template "${template}".` });
    return results;
  }

  const marker = `field-test ${Date.now().toString(36)}`;
  const args = Object.fromEntries(Object.entries(spec.args).map(([k, v]) => [k, v === '' ? marker : v]));
  const command = await request(serverUrl, 'command', 'POST', `/commands/${spec.command}`, { args }, identity);
  results.push(command.probe);
  if (!command.probe.ok) return results;

  const query = await request(serverUrl, 'query', 'POST', `/queries/${spec.query}`, { args: {} }, identity);
  if (query.probe.ok && !spec.find(query.body?.result, marker)) {
    query.probe.ok = false;
    query.probe.error = `${spec.query} did not return what ${spec.command} wrote.`;
  }
  results.push(query.probe);
  return results;
}

async function waitForHealth(serverUrl: string, waitMs: number): Promise<ProbeResult> {
  const deadline = Date.now() + waitMs;
  let last: Awaited<ReturnType<typeof request>> | undefined;
  while (Date.now() < deadline) {
    last = await request(serverUrl, 'health', 'GET', '/health', undefined, {});
    if (last.probe.ok) return last.probe;
    await new Promise((r) => setTimeout(r, 250));
  }
  return last?.probe ?? { name: 'health', method: 'GET', path: '/health', status: null, traceId: null, ok: false, durationMs: waitMs, error: 'no answer' };
}

async function request(serverUrl: string, name: string, method: 'GET' | 'POST', path: string, body: unknown, headers: Record<string, string>) {
  const started = performance.now();
  try {
    const response = await fetch(`${serverUrl}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    let parsed: { ok?: boolean; result?: unknown; error?: { code: string; message: string } } | undefined;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const ok = response.ok && (parsed?.ok ?? true) !== false;
    const probe: ProbeResult = {
      name,
      method,
      path,
      status: response.status,
      traceId: response.headers.get('x-fw-trace-id'),
      ok,
      durationMs: Math.round(performance.now() - started),
      ...(ok ? {} : { error: parsed?.error ? `${parsed.error.code}: ${parsed.error.message}` : text.slice(0, 300) }),
    };
    return { probe, body: parsed };
  } catch (error) {
    const probe: ProbeResult = { name, method, path, status: null, traceId: null, ok: false, durationMs: Math.round(performance.now() - started), error: (error as Error).message };
    return { probe, body: undefined };
  }
}
