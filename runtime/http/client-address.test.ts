import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddressOf } from './client-address.ts';

/** A request as the handler sees it: the socket's peer and the headers. */
const request = (peer: string | undefined, forwardedFor?: string | string[]) =>
  ({ socket: { remoteAddress: peer }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } }) as unknown as IncomingMessage;

describe('the client address (FW_TRUST_PROXY)', () => {
  it('is the socket peer by default, whatever X-Forwarded-For says', () => {
    expect(clientAddressOf(request('203.0.113.7', '6.6.6.6'), 0)).toBe('203.0.113.7');
    expect(clientAddressOf(request('::ffff:203.0.113.7'), 0)).toBe('203.0.113.7');
    expect(clientAddressOf(request('2001:db8::1'), 0)).toBe('2001:db8::1');
    expect(clientAddressOf(request(undefined), 0)).toBe('unknown');
  });

  it('reads as many hops from the right as there are trusted proxies, never what the client wrote left of them', () => {
    expect(clientAddressOf(request('10.0.0.2', '6.6.6.6, 203.0.113.7'), 1)).toBe('203.0.113.7');
    expect(clientAddressOf(request('10.0.0.2', '6.6.6.6, 203.0.113.7, 198.51.100.4'), 2)).toBe('203.0.113.7');
    // Repeated headers read as one list, in order.
    expect(clientAddressOf(request('10.0.0.2', ['6.6.6.6', '203.0.113.7']), 1)).toBe('203.0.113.7');
    expect(clientAddressOf(request('10.0.0.2', ' ::ffff:203.0.113.7 '), 1)).toBe('203.0.113.7');
    expect(clientAddressOf(request('10.0.0.2', '2001:db8::7'), 1)).toBe('2001:db8::7');
  });

  it('stops at the last real address when there are fewer hops than proxies, or one is not an address', () => {
    expect(clientAddressOf(request('10.0.0.2'), 1)).toBe('10.0.0.2');
    expect(clientAddressOf(request('10.0.0.2', '203.0.113.7'), 3)).toBe('203.0.113.7');
    expect(clientAddressOf(request('10.0.0.2', '203.0.113.7, unknown'), 2)).toBe('10.0.0.2');
    expect(clientAddressOf(request('10.0.0.2', '<script>, 203.0.113.7'), 2)).toBe('203.0.113.7');
    expect(clientAddressOf(request('10.0.0.2', ''), 1)).toBe('10.0.0.2');
  });
});
