import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { ExternalService } from '../../runtime/core/app-definition.ts';
import { backoffDelay } from '../../runtime/core/backoff.ts';
import { childEnvironment } from '../../runtime/config/environment.ts';

/** A process fw dev keeps running for an external service (its manifest's `service.dev`). */
export interface DevServiceStatus {
  service: string;
  pid: number | undefined;
  /** Times it was started (1 on the first start). */
  starts: number;
}

export interface DevServices {
  status(): DevServiceStatus[];
  /** Stops every service (SIGTERM, then SIGKILL after `graceMs`) and waits for them to exit. */
  close(): Promise<void>;
}

/** A run at least this long counts as healthy: the next exit restarts from the first delay again. */
const HEALTHY_RUN_MS = 10_000;
const RESTART = { baseMs: 500, capMs: 10_000, jitter: 0.5 } as const;

/**
 * `fw dev`'s supervisor of the external services whose manifests say how to start them in development
 * (`service.dev`: a command and its args, without a shell, in the app root). Each line a service
 * prints goes to `log` prefixed with its name; a service that exits is started again after a growing
 * delay (runtime/core/backoff.ts), reset once it has run for 10 s. Editing `service.dev` takes effect at
 * the next `fw dev`.
 *
 * @example
 *   const services = startDevServices(external, { log: (line) => process.stderr.write(`${line}\n`) });
 *   await services.close();
 */
export function startDevServices(services: readonly ExternalService[], options: { log(line: string): void; graceMs?: number }): DevServices {
  const graceMs = options.graceMs ?? 5_000;
  let closing = false;
  const running = services
    .filter((service) => service.manifest.service.dev !== undefined)
    .map((service) => supervise(service));

  function supervise(service: ExternalService) {
    const name = service.manifest.service.name;
    const dev = service.manifest.service.dev!;
    const state = { child: undefined as ChildProcess | undefined, starts: 0, retries: 0, timer: undefined as ReturnType<typeof setTimeout> | undefined, exited: Promise.resolve() };
    const start = () => {
      state.timer = undefined;
      if (closing) return;
      state.starts++;
      const startedAt = Date.now();
      const child = spawn(dev.command, dev.args ?? [], { cwd: service.cwd, env: childEnvironment(), stdio: ['ignore', 'pipe', 'pipe'] });
      state.child = child;
      for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on('line', (line) => options.log(`[${name}] ${line}`));
      state.exited = new Promise((resolve) => {
        let done = false;
        const ended = (how: string) => {
          if (done) return;
          done = true;
          resolve();
          if (closing) return;
          if (Date.now() - startedAt >= HEALTHY_RUN_MS) state.retries = 0;
          const delay = backoffDelay(state.retries++, RESTART);
          options.log(`fw dev: service ${name} ${how}; starting it again in ${(delay / 1000).toFixed(1)} s.`);
          state.timer = setTimeout(start, delay);
        };
        child.on('error', (error) => ended(`could not start (${error.message}): check service.dev.command in its manifest`));
        child.on('exit', (code, signal) => ended(signal ? `was stopped by ${signal}` : `exited with code ${code}`));
      });
    };
    start();
    return { name, state };
  }

  return {
    status: () => running.map(({ name, state }) => ({ service: name, pid: state.child?.pid, starts: state.starts })),
    async close() {
      closing = true;
      await Promise.all(
        running.map(async ({ state }) => {
          clearTimeout(state.timer);
          const child = state.child;
          if (!child || child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGTERM');
          const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
          await state.exited;
          clearTimeout(force);
        }),
      );
    },
  };
}
