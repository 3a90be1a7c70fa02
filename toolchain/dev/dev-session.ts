import type { DevRuntime, ReloadOutcome } from '../../plugin/dev-server/dev-runtime.ts';
import type { AllowedHosts } from '../../plugin/dev-server/host-check.ts';
import type { HotChannel } from '../../plugin/dev-server/typecheck-overlay.ts';

// What `fw dev` takes and gives, whichever web host it runs (Vite in dev-server.ts, Nuxt in nuxt-dev.ts).

export interface DevOptions {
  root: string;
  /** API port (default 3100; 0 picks a free one). */
  port?: number;
  host?: string;
  /**
   * Host names the dev ports answer beyond loopback names and IPs (default `FW_ALLOWED_HOSTS`; `true`:
   * any). Given to Vite as well, and the API port also admits Vite's own `server.allowedHosts`.
   */
  allowedHosts?: AllowedHosts;
  /** Web port (default 5173; when busy, the next free one). */
  webPort?: number;
  apiOnly?: boolean;
  webOnly?: boolean;
  /** Reload backend files when they change (default true). */
  watch?: boolean;
  /** Run the outbox worker, delivering emitted events to actions (default true; `--no-worker`). */
  worker?: boolean;
  /**
   * Typecheck the app in the background, reporting type errors as they appear and clear, in the terminal
   * and Vite's overlay (default true; `--no-typecheck`): typecheck.ts, typecheck-overlay.ts.
   */
  typecheck?: boolean;
  /** Vite's own log level (default 'info'); `fw dev --json` keeps it quiet. */
  viteLogLevel?: 'info' | 'warn' | 'error' | 'silent';
  onReload?: (outcome: ReloadOutcome, files: readonly string[]) => void;
  /** Told what the start is doing as it goes (`loading the app`, `starting Vite`, …); `fw dev` shows it on a terminal. */
  onStep?: (step: string) => void;
}

export interface DevSession {
  /** The API runtime's address (absent with webOnly; Nuxt's own address under fw's Nuxt module). */
  serverUrl?: string;
  /** The web dev server's address (absent without web/ or with apiOnly). */
  webUrl?: string;
  /** The runtime, when it runs in this process (under fw's Nuxt module, `nuxt dev` holds it). */
  runtime?: DevRuntime;
  /** What the ready line reports. */
  summary: DevSummary;
  /**
   * The web dev server's websocket, where the typecheck's errors show in Vite's overlay (only a Vite
   * web/ in this process has one: not --api-only, not Nuxt's child process).
   */
  overlay?: HotChannel;
  /**
   * The web dev server typechecks the app itself, its errors in its own overlay (`nuxt dev` under fw's
   * Nuxt module: the overlay is in that process): fw dev starts no typecheck of its own.
   */
  typechecksItself?: boolean;
  close(): Promise<void>;
}

export interface DevSummary {
  database: string;
  entries: number;
  worker: boolean;
  /** External services fw dev started from their manifests' `service.dev` (dev-services.ts). */
  services?: string[];
}

/** The summary of a runtime in this process. */
export function summarise(runtime: DevRuntime): DevSummary {
  return { database: runtime.db.dialect, entries: runtime.app().entries.size, worker: Boolean(runtime.worker) };
}
