/**
 * What an app's external services declare (`fw.manifest.json`, `schemas/fw-manifest.schema.json`):
 * the types every part of the runtime names, and the defaults an entry's missing fields take. The
 * manifest is validated in external/manifest.ts.
 */

/** A side effect a command declares: a name, or a name with the tables and live queries it touches. */
export type ManifestEffect = string | { name: string; tables?: string[]; liveQueries?: string[] };

/** One command or query an external service offers (`<service>.<entry>`). */
export interface ManifestEntry {
  name: string;
  kind: 'command' | 'query';
  path?: string;
  policy?: string;
  transaction?: 'external-managed' | 'read-only';
  risk?: 'read' | 'write' | 'destructive' | 'external';
  needsApproval?: boolean;
  effects?: ManifestEffect[];
  tenantScoped?: boolean;
  description?: string;
  argsSchema?: Record<string, unknown>;
  /** JSON Schema of what the entry answers: the generated client's result type, checked on every answer. */
  resultSchema?: Record<string, unknown>;
}

/**
 * An external service description, as in `schemas/fw-manifest.schema.json`.
 * @example { fwProtocol: '1.0', service: { name: 'billing', transport: 'http', baseUrl: 'http://localhost:8080' }, entries: [{ name: 'invoice', kind: 'command', path: '/invoice', risk: 'write' }] }
 */
export interface Manifest {
  fwProtocol: string;
  language?: string;
  framework?: string;
  service: {
    name: string;
    transport: 'http' | 'stdio' | 'grpc';
    baseUrl?: string;
    health?: string;
    command?: string;
    commandArgs?: string[];
    /**
     * http only: forward the caller's `Authorization` header to the service (default false). The
     * caller's token is valid against fw itself, so it goes only where the manifest says so.
     */
    forwardAuthorization?: boolean;
    /**
     * How `fw dev` starts the service beside the app (and restarts it when it exits): the program alone
     * and its arguments, started in the app root without a shell. Only `fw dev` reads it.
     */
    dev?: { command: string; args?: string[] };
    /** Per-call timeout of the bridge, ms (default 5 000). */
    timeoutMs?: number;
    /** Largest response the bridge reads, bytes (default 1 MiB). */
    maxResponseBytes?: number;
  };
  entries: ManifestEntry[];
}

/**
 * An entry's settings with the protocol's defaults: policy `user`, queries read-only (`read`,
 * `read-only`, no approval), commands writes managed by the service that need approval.
 */
export function entryDefaults(entry: ManifestEntry) {
  const query = entry.kind === 'query';
  return {
    policy: entry.policy ?? 'user',
    risk: entry.risk ?? (query ? 'read' : 'write'),
    transaction: entry.transaction ?? (query ? 'read-only' : 'external-managed'),
    needsApproval: entry.needsApproval ?? !query,
    tenantScoped: entry.tenantScoped ?? true,
  } as const;
}
