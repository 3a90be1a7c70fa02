/**
 * Every environment variable fw reads, with its type, default and meaning: the one table that
 * `resolveConfig` parses, `fw config` prints (secrets masked) and docs/config.md shows. A variable
 * that is not here is not fw's (an app's own, such as an aiTool's declared secrets, is read by name
 * through `FwConfig.appVariable`).
 */

/**
 * How a value is written:
 * - `text`: as given (surrounding spaces trimmed; empty counts as unset unless `emptyIsValue`);
 * - `secret`: text that is never printed (`fw config` masks it);
 * - `whole`: a whole number ≥ `min` (default 1);
 * - `flag`: `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`.
 */
export type VariableType = 'text' | 'secret' | 'whole' | 'flag';

export interface Variable {
  type: VariableType;
  group: 'server' | 'database' | 'auth' | 'ai' | 'telemetry' | 'dev';
  doc: string;
  /** The value when unset (typed: a number for `whole`, a boolean for `flag`). */
  default?: string | number | boolean;
  /** `whole` only: the least value accepted (default 1). */
  min?: number;
  /** An empty value is a value (e.g. `FW_CSP=` sends no policy), not "unset". */
  emptyIsValue?: boolean;
  /** Where it is explained at length. */
  see?: string;
}

export const VARIABLES = {
  PORT: { type: 'whole', group: 'server', min: 0, default: 3000, doc: '`fw start`: the port to listen on (`--port` wins; 0 picks a free one).', see: 'deploy.md' },
  FW_ADMIN_TOKEN: {
    type: 'secret',
    group: 'server',
    doc: 'Opens `/_fw/…` to callers sending it in `x-fw-admin-token`; closed (403) without it.',
    see: 'deploy.md',
  },
  FW_DASHBOARD: {
    type: 'flag',
    group: 'server',
    default: false,
    doc: 'Serves the dashboard (`/_fw/dashboard/`) outside dev mode too, to callers with `FW_ADMIN_TOKEN` only (`fw dev` always serves it).',
    see: 'dashboard.md',
  },
  FW_MCP: {
    type: 'flag',
    group: 'server',
    default: false,
    doc: 'Serves the MCP endpoint (`POST /mcp`) outside dev mode too: the entries as tools for signed-in callers, under their policies (`fw dev` always serves it).',
    see: 'mcp.md',
  },
  FW_MCP_RATE_LIMIT: { type: 'whole', group: 'server', default: 600, doc: 'MCP requests a caller (a user in a tenant) may send per minute; more are answered `429 too_many_requests` (0: no limit).', see: 'mcp.md' },
  FW_CSP: {
    type: 'text',
    group: 'server',
    emptyIsValue: true,
    doc: "`fw start`: the Content-Security-Policy of the built web app (default: own origin only, never framed); empty sends none.",
    see: 'deploy.md#security-headers-and-static-files',
  },
  FW_HEADERS_TIMEOUT_MS: { type: 'whole', group: 'server', default: 15_000, doc: "A request's line and headers must arrive within this (slow clients are cut).", see: 'deploy.md#server-limits' },
  FW_REQUEST_TIMEOUT_MS: { type: 'whole', group: 'server', default: 30_000, doc: 'The whole request (headers and body) must arrive within this; live streams are not cut.', see: 'deploy.md#server-limits' },
  FW_KEEP_ALIVE_TIMEOUT_MS: { type: 'whole', group: 'server', default: 5_000, doc: 'An idle keep-alive connection is closed after this.', see: 'deploy.md#server-limits' },
  FW_MAX_CONNECTIONS: { type: 'whole', group: 'server', default: 1_024, doc: 'Open connections per server; further ones are refused.', see: 'deploy.md#server-limits' },
  FW_BODY_LIMIT_BYTES: { type: 'whole', group: 'server', default: 1_048_576, doc: 'The largest request body accepted (a larger one is answered `413 payload_too_large`).', see: 'deploy.md#server-limits' },
  FW_TRUST_PROXY: {
    type: 'whole',
    group: 'server',
    min: 0,
    default: 0,
    doc: "How many proxies of yours stand in front of fw (a load balancer: 1): the client's address is then read from `X-Forwarded-For`, that many hops from the right; 0 takes the socket's peer and ignores the header.",
    see: 'deploy.md#behind-a-proxy',
  },
  FW_CORS_ORIGINS: {
    type: 'text',
    group: 'server',
    doc: 'Origins whose pages may call the API from a browser, comma-separated and exact (`https://app.example.com`; no `*`): a web app served from another origin (Nuxt’s server, a CDN). Unset: same origin only.',
    see: 'deploy.md#a-web-app-on-another-origin',
  },
  FW_TRACE_TENANT: { type: 'flag', group: 'telemetry', default: false, doc: 'Entry spans carry the tenant id (`fw.tenant_id`).', see: 'observability.md' },
  FW_DEBUG: { type: 'flag', group: 'dev', default: false, doc: 'The CLI prints the stack of an unexpected error.' },

  DATABASE_URL: { type: 'secret', group: 'database', doc: 'PostgreSQL; without it, embedded PGlite in `.fw/db` (one process at a time).', see: 'deploy.md' },
  FW_CACHE_DIR: {
    type: 'text',
    group: 'database',
    doc: 'Where fw keeps what it computes once and reuses — the embedded database initialised once per PGlite version, which every new one starts from (default `$XDG_CACHE_HOME/fwjs`, else `~/.cache/fwjs`); `off` keeps nothing.',
    see: 'testing.md',
  },
  FW_DIRECT_DATABASE_URL: {
    type: 'secret',
    group: 'database',
    doc: 'When `DATABASE_URL` is a transaction pooler: the same database without it, for `LISTEN` and migrations.',
    see: 'deploy.md#behind-a-connection-pooler',
  },

  FW_AUTH: { type: 'text', group: 'auth', doc: 'How callers are identified: `jwt`, `dev-headers` or `none` (default: dev headers under `fw dev`; `fw start` refuses to start without it, `none` being the explicit choice of anonymous callers only).', see: 'auth.md' },
  FW_JWT_ISSUER: { type: 'text', group: 'auth', doc: 'The `iss` of accepted tokens (required with `FW_AUTH=jwt`).', see: 'auth.md' },
  FW_JWT_AUDIENCE: { type: 'text', group: 'auth', doc: 'The `aud` of accepted tokens, comma-separated (required with `FW_AUTH=jwt`).', see: 'auth.md' },
  FW_JWT_JWKS_URL: { type: 'text', group: 'auth', doc: "The issuer's key set (default: discovered from the issuer's OpenID configuration).", see: 'auth.md' },
  FW_JWT_ALGORITHMS: { type: 'text', group: 'auth', doc: 'Accepted signature algorithms, comma-separated (default `RS256,ES256,EdDSA`; `HS256` with a shared secret; never `none`).', see: 'auth.md' },
  FW_JWT_HS_SECRET: { type: 'secret', group: 'auth', doc: 'A shared HMAC secret instead of a key set (at least 32 bytes).', see: 'auth.md' },
  FW_JWT_CLOCK_TOLERANCE: { type: 'text', group: 'auth', default: '30', doc: 'Seconds of clock skew allowed on `exp` and `nbf` (e.g. `30` or `30s`).', see: 'auth.md' },
  FW_JWT_MAX_AGE: { type: 'text', group: 'auth', default: '86400', doc: 'The oldest token accepted, and the longest lifetime, in seconds (60–31536000).', see: 'auth.md' },
  FW_JWT_CLAIM_USER_ID: { type: 'text', group: 'auth', default: 'sub', doc: 'The claim (dotted path) that holds the user id.', see: 'auth.md' },
  FW_JWT_CLAIM_TENANT_ID: { type: 'text', group: 'auth', default: 'tenant_id', doc: 'The claim (dotted path) that holds the tenant id (a UUID).', see: 'auth.md' },
  FW_JWT_CLAIM_ROLE: { type: 'text', group: 'auth', default: 'role', doc: 'The claim (dotted path) that holds the role.', see: 'auth.md' },

  AI_GATEWAY_API_KEY: { type: 'secret', group: 'ai', doc: 'Real models through the AI Gateway; without it, agents run on the scripted mock model.', see: 'ai.md' },
  FW_AI: { type: 'text', group: 'ai', doc: '`mock` forces the scripted mock model even with a gateway key.', see: 'ai.md' },
  FW_AI_MODEL: { type: 'text', group: 'ai', default: 'openai/gpt-4o-mini', doc: 'The model of `ctx.ai.generate` when a call names none.', see: 'ai.md' },
  FW_AI_APPROVAL_SECRET: {
    type: 'secret',
    group: 'ai',
    doc: 'Signs agent approval requests (default: a random key fw keeps in the database, shared by every process).',
    see: 'ai.md',
  },
  FW_AI_APPROVAL_TTL_MS: { type: 'whole', group: 'ai', default: 15 * 60_000, doc: 'How long an approval request may wait for its decision.', see: 'ai.md' },
  FW_AI_RECORD_CONTENT: { type: 'flag', group: 'ai', default: false, doc: "Keep prompts, final texts and tool calls' inputs and outputs in AI traces (off: counts and timings only; the dashboard's AI view shows them).", see: 'ai.md' },

  OTEL_SDK_DISABLED: { type: 'text', group: 'telemetry', doc: '`true` turns telemetry off whatever else is set.', see: 'observability.md' },
  OTEL_EXPORTER_OTLP_ENDPOINT: { type: 'text', group: 'telemetry', doc: 'Export traces and metrics over OTLP/HTTP to this collector (e.g. `http://127.0.0.1:4318`).', see: 'observability.md' },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: { type: 'text', group: 'telemetry', doc: 'The OTLP endpoint for traces alone.', see: 'observability.md' },
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: { type: 'text', group: 'telemetry', doc: 'The OTLP endpoint for metrics alone.', see: 'observability.md' },
  OTEL_TRACES_EXPORTER: { type: 'text', group: 'telemetry', doc: '`otlp`, `console` or `none` (default `otlp` once an endpoint is set, else `none`).', see: 'observability.md' },
  OTEL_METRICS_EXPORTER: { type: 'text', group: 'telemetry', doc: '`otlp`, `console` or `none` (default as for traces).', see: 'observability.md' },
  OTEL_SERVICE_NAME: { type: 'text', group: 'telemetry', doc: "`service.name` (default: the app's package.json name).", see: 'observability.md' },
  OTEL_RESOURCE_ATTRIBUTES: { type: 'text', group: 'telemetry', doc: 'More resource attributes, `key=value,…`.', see: 'observability.md' },
  OTEL_BSP_SCHEDULE_DELAY: { type: 'whole', group: 'telemetry', min: 0, doc: 'Milliseconds between span exports (SDK default).', see: 'observability.md' },
  OTEL_BSP_EXPORT_TIMEOUT: { type: 'whole', group: 'telemetry', min: 0, doc: 'Milliseconds an export of spans may take (SDK default).', see: 'observability.md' },
  OTEL_BSP_MAX_QUEUE_SIZE: { type: 'whole', group: 'telemetry', min: 0, doc: 'Spans queued at most (SDK default).', see: 'observability.md' },
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: { type: 'whole', group: 'telemetry', min: 0, doc: 'Spans per export at most (SDK default).', see: 'observability.md' },
  OTEL_METRIC_EXPORT_INTERVAL: { type: 'whole', group: 'telemetry', min: 0, doc: 'Milliseconds between metric exports (SDK default).', see: 'observability.md' },
  OTEL_METRIC_EXPORT_TIMEOUT: { type: 'whole', group: 'telemetry', min: 0, doc: 'Milliseconds an export of metrics may take (SDK default).', see: 'observability.md' },

  FW_ALLOWED_HOSTS: {
    type: 'text',
    group: 'dev',
    doc: "More `Host` names the dev API port answers (comma-separated, `.example.test` for a name and its subdomains, `true` for any); loopback names and IPs always.",
  },
  NO_COLOR: { type: 'text', group: 'dev', doc: 'Any value: no ANSI colour in fw\'s output, even on a terminal (no-color.org).' },
  FORCE_COLOR: {
    type: 'text',
    group: 'dev',
    emptyIsValue: true,
    doc: '`0`/`false`: never colour; any other value: colour even when the output is not a terminal (wins over `NO_COLOR`, as in Node).',
  },
  CI: {
    type: 'text',
    group: 'dev',
    doc: 'Set by CI services. `true`: `fw dev` leaves stdin alone, as Vite does (no keyboard shortcuts).',
  },
  npm_config_user_agent: {
    type: 'text',
    group: 'dev',
    doc: "Set by npm (and pnpm) for an app's scripts: `fw postinstall` reads the Node.js npm runs on from it, and says in one line when that is older than 22.12 (the app's scripts run on its pinned Node 24).",
  },
  BROWSER: {
    type: 'text',
    group: 'dev',
    doc: "`fw dev --open` and its `d` key: the browser that opens the dashboard (a command or app name; a `.js` file is run with Node and given the URL; `none`: open nothing), as Vite reads it. Unset: the system's default browser.",
    see: 'dashboard.md',
  },
  BROWSER_ARGS: { type: 'text', group: 'dev', doc: 'Arguments for `BROWSER`, space-separated (e.g. `--incognito`).', see: 'dashboard.md' },
  FW_DEV_WORKER: { type: 'flag', group: 'dev', default: true, doc: "The Nuxt module's dev server runs the outbox worker (`0` turns it off)." },
  FW_DEV_TYPECHECK: {
    type: 'flag',
    group: 'dev',
    default: true,
    doc: "The Nuxt module's dev server typechecks the app in the background, errors in the terminal and Nuxt's overlay (`0` turns it off; `fw dev --no-typecheck` sets it).",
  },
} as const satisfies Record<string, Variable>;

export type VariableName = keyof typeof VARIABLES;
