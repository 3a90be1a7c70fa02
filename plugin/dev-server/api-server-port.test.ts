import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FwFailure } from '../../runtime/core/failure.ts';
import { startApiServer } from './api-server.ts';

describe('a busy API port', () => {
  const holder = createServer();
  let port: number;
  beforeAll(async () => {
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    port = (holder.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())));

  const refusal = (command?: string) =>
    startApiServer({ root: '/nonexistent-app', port, host: '127.0.0.1', ...(command ? { command } : {}) }).then(() => undefined, (error: unknown) => error);

  it('suggests the command as it was run, with another port, and no flag the user did not give', async () => {
    const plain = await refusal();
    expect(plain).toBeInstanceOf(FwFailure);
    expect(plain).toMatchObject({
      kind: 'port_busy',
      suggestions: ['fw dev --port 0  (pick a free port)', `fw dev --port ${port + 1}`, `lsof -i :${port}  (find what holds it)`],
    });
    expect(await refusal('fw dev --api-only')).toMatchObject({ suggestions: ['fw dev --api-only --port 0  (pick a free port)', `fw dev --api-only --port ${port + 1}`, `lsof -i :${port}  (find what holds it)`] });
  });
});
