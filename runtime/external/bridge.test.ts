import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFwError } from '../core/errors.ts';
import { type BridgeEnvelope, callExternal } from './bridge.ts';

const envelope: BridgeEnvelope = {
  args: {},
  auth: { kind: 'user', userId: 'u1', tenantId: null, role: 'member' },
  fw: { service: 'wrapped', entry: 'run', kind: 'query', traceId: 'trace-1' },
};

// A grandchild that writes its pid to a file and then holds the stdout it inherited for a minute.
const holdStdout = 'import os, sys, time\nopen(sys.argv[1], "w").write(str(os.getpid()))\ntime.sleep(60)\n';

/**
 * Whether a process still runs. A zombie counts as gone: it is dead and only waits to be reaped, which
 * some container init processes never do for orphans.
 */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
  const stat = `/proc/${pid}/stat`;
  return !(existsSync(stat) && readFileSync(stat, 'utf8').replace(/^.*\) /s, '').startsWith('Z'));
}

async function readPid(file: string): Promise<number> {
  await expect.poll(() => existsSync(file) && readFileSync(file, 'utf8').length > 0, { timeout: 10_000 }).toBe(true);
  return Number(await readFile(file, 'utf8'));
}

describe.skipIf(process.platform === 'win32')('stdio bridge: wrapper commands', () => {
  let dir: string;
  // The interpreter itself, not a version manager's shim: it starts faster, so it writes its pid well within the timeout.
  let python: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'fw-bridge-'));
    python = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('times out a /bin/sh wrapper whose python child holds stdout, and leaves no process behind', async () => {
    const pidFile = path.join(dir, 'timeout.pid');
    // `; exit 0` keeps sh from exec'ing python: python is a grandchild of fw, not its child.
    const target = { transport: 'stdio', command: '/bin/sh', commandArgs: ['-c', '"$0" -c "$1" "$2"; exit 0', python, holdStdout, pidFile], cwd: dir } as const;
    // 5 s: far longer than python needs to write its pid, even on a loaded machine.
    const error = await callExternal(target, envelope, { limits: { timeoutMs: 5_000 } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isFwError(error) && [error.code, error.diagnostics[0]?.code]).toEqual(['gateway_timeout', 'external_timeout']);
    const pid = await readPid(pidFile);
    await expect.poll(() => isRunning(pid), { timeout: 30_000 }).toBe(false);
  }, 60_000);

  it('answers when the wrapper exits, killing the child it left holding stdout', async () => {
    const pidFile = path.join(dir, 'exit.pid');
    // sh prints the answer and exits at once; the backgrounded python keeps stdout open.
    const script = '"$0" -c "$1" "$2" & while [ ! -s "$2" ]; do sleep 0.05; done; echo \'{"ok": true, "result": "done"}\'';
    const target = { transport: 'stdio', command: '/bin/sh', commandArgs: ['-c', script, python, holdStdout, pidFile], cwd: dir } as const;
    await expect(callExternal(target, envelope, { limits: { timeoutMs: 10_000 } })).resolves.toBe('done');
    const pid = await readPid(pidFile);
    await expect.poll(() => isRunning(pid), { timeout: 30_000 }).toBe(false);
  }, 60_000);

  it('kills the wrapper and its child when the output passes the size limit', async () => {
    const pidFile = path.join(dir, 'huge.pid');
    const script = '"$0" -c "$1" "$2" & while [ ! -s "$2" ]; do sleep 0.05; done; head -c 100000 /dev/zero; wait';
    const target = { transport: 'stdio', command: '/bin/sh', commandArgs: ['-c', script, python, holdStdout, pidFile], cwd: dir } as const;
    const error = await callExternal(target, envelope, { limits: { timeoutMs: 10_000, maxResponseBytes: 1_000 } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isFwError(error) && error.diagnostics[0]?.code).toBe('external_response_too_large');
    const pid = await readPid(pidFile);
    await expect.poll(() => isRunning(pid), { timeout: 30_000 }).toBe(false);
  }, 60_000);
});

// Only a 4xx says the caller's input was at fault. A service's 5xx stays a 502 even when its error
// envelope carries diagnostics (a crash handler's traceback), so production answers never show them.
describe('http bridge: who is at fault', () => {
  let server: Server;
  let baseUrl: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const status = Number(req.url!.split('/').at(-1));
      const body = { ok: false, error: { code: 'boom', message: 'failed' }, diagnostics: [{ path: 'args.x', code: 'detail', message: 'Traceback: DATABASE_URL=postgres://u:pw@db/x' }] };
      req.resume();
      req.on('end', () => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server?.close());

  const codeFor = async (status: number) => {
    const error = await callExternal({ transport: 'http', baseUrl, path: `/queries/${status}` }, envelope).then(
      () => undefined,
      (e: unknown) => e,
    );
    return isFwError(error) ? [error.code, error.status] : error;
  };

  it('a 4xx with diagnostics is the caller’s validation_failed', async () => {
    expect(await codeFor(400)).toEqual(['validation_failed', 400]);
    expect(await codeFor(422)).toEqual(['validation_failed', 400]);
  });

  it('a 5xx with diagnostics is bad_gateway', async () => {
    expect(await codeFor(500)).toEqual(['bad_gateway', 502]);
    expect(await codeFor(503)).toEqual(['bad_gateway', 502]);
  });
});
