// @vitest-environment happy-dom
import { cleanup, renderHook } from '@testing-library/react';
import { DefaultChatTransport } from 'ai';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReactNode } from 'react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DevAuth, GetToken } from '../client.ts';
import { createFwReact } from './index.ts';

const { FwProvider, useFwRuntime } = createFwReact({ commands: {}, queries: {}, liveQueries: {} });
const devAuth: DevAuth = { userId: 'u1', tenantId: '00000000-0000-4000-8000-000000000001', role: 'member' };
const identity = { 'x-fw-user-id': 'u1', 'x-fw-tenant-id': devAuth.tenantId, 'x-fw-role': 'member' };

function renderRuntime(props: { apiUrl: string; devAuth?: DevAuth; getToken?: GetToken }) {
  return renderHook(() => useFwRuntime(), {
    initialProps: props,
    wrapper: ({ children }: { children: ReactNode }) => <FwProvider {...props}>{children}</FwProvider>,
  });
}

describe('useFwRuntime', () => {
  afterEach(cleanup);

  it('gives the provider’s URL without a trailing slash and the identity headers, without content type or accept', async () => {
    const { result } = renderRuntime({ apiUrl: 'http://127.0.0.1:3100/', devAuth });
    expect(result.current.apiUrl).toBe('http://127.0.0.1:3100');
    expect(await result.current.headers()).toEqual(identity);
  });

  it('keeps the page-origin URL relative: "" and "/" are both ""', () => {
    for (const apiUrl of ['', '/']) expect(renderRuntime({ apiUrl }).result.current.apiUrl).toBe('');
  });

  it('asks the latest getToken afresh for every headers() call', async () => {
    let n = 0;
    let getToken: GetToken = () => `a${++n}`;
    const { result, rerender } = renderHook(() => useFwRuntime(), {
      wrapper: ({ children }: { children: ReactNode }) => (
        <FwProvider apiUrl="" getToken={getToken}>
          {children}
        </FwProvider>
      ),
    });
    expect(await result.current.headers()).toEqual({ authorization: 'Bearer a1' });
    expect(await result.current.headers()).toEqual({ authorization: 'Bearer a2' });
    getToken = () => 'b';
    rerender();
    expect(await result.current.headers()).toEqual({ authorization: 'Bearer b' });
    getToken = () => null;
    rerender();
    expect(await result.current.headers()).toEqual({});
  });

  it('stays the same object across renders with an equal inline devAuth, so a transport built from it survives', () => {
    const { result, rerender } = renderHook(() => useFwRuntime(), {
      wrapper: ({ children }: { children: ReactNode }) => (
        <FwProvider apiUrl="http://127.0.0.1:3100" devAuth={{ ...devAuth }}>
          {children}
        </FwProvider>
      ),
    });
    const first = result.current;
    rerender();
    expect(result.current).toBe(first);
  });

  it('names the fix outside FwProvider', () => {
    expect(() => renderHook(() => useFwRuntime())).toThrow(/useFwRuntime\(\) must be used inside <FwProvider/);
  });
});

describe('useFwRuntime with an AI SDK chat transport', () => {
  let server: Server;
  let url: string;
  const seen: Array<{ method?: string; url?: string; headers: IncomingHttpHeaders; body: string }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      // happy-dom's page is on another origin: answer the preflight the custom headers cause.
      res.setHeader('access-control-allow-origin', '*');
      res.setHeader('access-control-allow-headers', '*');
      if (req.method === 'OPTIONS') return void res.end();
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, headers: req.headers, body });
        res.writeHead(200, { 'content-type': 'text/event-stream', 'x-vercel-ai-ui-message-stream': 'v1' });
        res.end('data: {"type":"start"}\n\ndata: {"type":"finish"}\n\ndata: [DONE]\n\n');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server?.close());
  afterEach(cleanup);

  it('sends the identity headers and the agent to POST <apiUrl>/ai/agents/chat', async () => {
    const { result } = renderRuntime({ apiUrl: `${url}/`, devAuth, getToken: () => 'tok' });
    const runtime = result.current;
    const transport = new DefaultChatTransport({ api: `${runtime.apiUrl}/ai/agents/chat`, headers: () => runtime.headers(), body: { agent: 'support' } });
    const stream = await transport.sendMessages({
      trigger: 'submit-message',
      chatId: 'c1',
      messageId: undefined,
      messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
      abortSignal: undefined,
    });
    const chunks: unknown[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks).toEqual([{ type: 'start' }, { type: 'finish' }]);
    expect(seen).toHaveLength(1);
    const [request] = seen;
    expect(request).toMatchObject({ method: 'POST', url: '/ai/agents/chat' });
    expect(request!.headers).toMatchObject({ ...identity, authorization: 'Bearer tok', 'content-type': 'application/json' });
    expect(JSON.parse(request!.body)).toMatchObject({ agent: 'support', id: 'c1', messages: [{ id: 'm1', role: 'user' }] });
  });
});
