/** The orchestrator's side of a server process: start it, read and reset its counters, stop it. */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ChildMessage, ParentMessage, ServerStats } from './protocol.ts';
import type { ServerSpec } from './variants/types.ts';

const serverScript = fileURLToPath(new URL('./server-process.ts', import.meta.url));

export interface ServerHandle {
  readonly spec: ServerSpec;
  readonly url: string;
  readonly pid: number;
  resetStats(): Promise<void>;
  readStats(): Promise<ServerStats>;
  close(): Promise<void>;
}

export async function startServer(spec: ServerSpec): Promise<ServerHandle> {
  // The child's stdout goes to our stderr: stdout is reserved for the one JSON document.
  const child = fork(serverScript, [JSON.stringify(spec)], { execPath: process.execPath, stdio: ['ignore', 2, 2, 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    const onMessage = (message: ChildMessage) => {
      if (message.type === 'ready') resolve(message.port);
      if (message.type === 'failed') reject(new Error(`${spec.variant} server (${spec.database}) failed to start:\n${message.message}`));
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`${spec.variant} server (${spec.database}) exited with code ${code} before it was ready.`)));
  });
  child.removeAllListeners('message');
  child.removeAllListeners('exit');

  return {
    spec,
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async resetStats() {
      await ask(child, { type: 'reset' }, 'reset');
    },
    async readStats() {
      const reply = await ask(child, { type: 'stats' }, 'stats');
      return (reply as Extract<ChildMessage, { type: 'stats' }>).stats;
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.send({ type: 'close' } satisfies ParentMessage);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function ask(child: ChildProcess, message: ParentMessage, expect: ChildMessage['type']): Promise<ChildMessage> {
  return new Promise((resolve, reject) => {
    const onMessage = (reply: ChildMessage) => {
      if (reply.type !== expect) return;
      cleanup();
      resolve(reply);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`server process ${child.pid} exited (code ${code}) while asked for ${message.type}.`));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send(message);
  });
}
