/** The orchestrator's side of its child processes: fork one, wait until ready, ask it things, stop it. */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LiveQueryName } from './app.ts';
import type { ClientProgress, ClientRequest, ClientResult, GcKind, MemorySample, Ready, Reply, ServerRequest, ServerSpec, ServerStats, SubscriberSpec, WriteRecord } from './protocol.ts';

interface Child<Q> {
  readonly pid: number;
  readonly port: number | undefined;
  ask(request: Q): Promise<unknown>;
  /** Sends without waiting for an answer (the answer, if any, is ignored). */
  tell(request: Q): void;
  close(closeRequest: Q): Promise<void>;
}

async function startChild<Q extends object>(script: string, args: string[], execArgv: string[], what: string): Promise<Child<Q>> {
  // The child's stdout goes to our stderr: stdout is reserved for the one JSON document.
  const child = fork(fileURLToPath(new URL(script, import.meta.url)), args, {
    execPath: process.execPath,
    execArgv: [...process.execArgv, ...execArgv],
    stdio: ['ignore', 2, 2, 'ipc'],
    serialization: 'advanced',
  });
  const port = await new Promise<number | undefined>((resolve, reject) => {
    child.once('message', (message: Ready) => {
      if (message.type === 'ready') resolve(message.port);
      else reject(new Error(`${what} failed to start:\n${message.message}`));
    });
    child.once('exit', (code) => reject(new Error(`${what} exited with code ${code} before it was ready.`)));
  });
  child.removeAllListeners('exit');

  let nextId = 1;
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void; type: string }>();
  child.on('message', (reply: Reply) => {
    const waiter = waiting.get(reply.id);
    if (!waiter) return;
    waiting.delete(reply.id);
    if (reply.ok) waiter.resolve(reply.result);
    else waiter.reject(new Error(`${what}: ${waiter.type} failed:\n${reply.message}`));
  });
  child.on('exit', (code, signal) => {
    for (const [id, waiter] of waiting) {
      waiting.delete(id);
      waiter.reject(new Error(`${what} (pid ${child.pid}) exited (${signal ?? code}) while asked for ${waiter.type}.`));
    }
  });

  const send = (request: Q, waiter?: { resolve: (value: unknown) => void; reject: (error: Error) => void }) => {
    const id = nextId++;
    if (waiter) waiting.set(id, { ...waiter, type: (request as { type?: string }).type ?? '?' });
    child.send({ ...request, id });
  };
  return {
    pid: child.pid!,
    port,
    ask: (request) => new Promise((resolve, reject) => send(request, { resolve, reject })),
    tell: (request) => send(request),
    async close(closeRequest) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      send(closeRequest, { resolve: () => undefined, reject: () => undefined });
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface ServerHandle {
  readonly spec: ServerSpec;
  readonly url: string;
  readonly pid: number;
  memory(gc: GcKind): Promise<MemorySample>;
  reset(): Promise<void>;
  stats(): Promise<ServerStats>;
  close(): Promise<void>;
}

export async function startServer(spec: ServerSpec, cpuProfDir: string | null): Promise<ServerHandle> {
  const execArgv = ['--expose-gc', ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [])];
  const child = await startChild<ServerRequest>('./server-process.ts', [JSON.stringify(spec)], execArgv, `${spec.variant} server`);
  return {
    spec,
    url: `http://127.0.0.1:${child.port}`,
    pid: child.pid,
    memory: (gc) => child.ask({ type: 'memory', gc }) as Promise<MemorySample>,
    reset: async () => void (await child.ask({ type: 'reset' })),
    stats: () => child.ask({ type: 'stats' }) as Promise<ServerStats>,
    close: () => child.close({ type: 'close' }),
  };
}

export interface ClientHandle {
  readonly pid: number;
  open(baseUrl: string, query: LiveQueryName, subscribers: SubscriberSpec[], concurrency: number): Promise<void>;
  writes(writes: WriteRecord[]): void;
  start(): Promise<void>;
  progress(): Promise<ClientProgress>;
  finish(): Promise<ClientResult>;
  close(): Promise<void>;
}

export async function startClient(index: number): Promise<ClientHandle> {
  const child = await startChild<ClientRequest>('./client-process.ts', [], [], `subscriber process ${index}`);
  return {
    pid: child.pid,
    open: async (baseUrl, query, subscribers, concurrency) => void (await child.ask({ type: 'open', baseUrl, query, subscribers, concurrency })),
    writes: (writes) => child.tell({ type: 'writes', writes }),
    start: async () => void (await child.ask({ type: 'start' })),
    progress: () => child.ask({ type: 'progress' }) as Promise<ClientProgress>,
    finish: () => child.ask({ type: 'finish' }) as Promise<ClientResult>,
    close: () => child.close({ type: 'close' }),
  };
}
