import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/**
 * The address of whoever sent a request: the socket's peer, or — with `trustedProxies` (FW_TRUST_PROXY)
 * proxies of the deployment's own in front — the address the outermost of them saw, read from
 * `X-Forwarded-For` that many hops from the right. Each proxy appends the peer it saw, so the entries
 * left of those the deployment's proxies wrote are whatever the client sent, and are never read: with
 * one proxy, the last entry; with two, the one before it. An entry that is not an IP address ends the
 * walk at the last one that was (a proxy of yours wrote nonsense, or there are fewer proxies than
 * said). Anonymous live callers are counted by it (docs/live.md); endpoints get it as
 * `ctx.clientAddress` (a sign-in's limit per address).
 *
 * IPv4 peers of a dual-stack socket (`::ffff:203.0.113.7`) read as plain IPv4, so one client is one key.
 *
 * @example
 *   // FW_TRUST_PROXY=1, socket peer 10.0.0.2 (the load balancer), X-Forwarded-For: "spoofed, 203.0.113.7"
 *   clientAddressOf(req, 1) // '203.0.113.7'
 */
export function clientAddressOf(req: IncomingMessage, trustedProxies: number): string {
  let address = plain(req.socket.remoteAddress ?? 'unknown');
  if (trustedProxies === 0) return address;
  const header = req.headers['x-forwarded-for'];
  if (header === undefined) return address;
  const hops = (Array.isArray(header) ? header.join(',') : header).split(',');
  for (let i = hops.length - 1, left = trustedProxies; i >= 0 && left > 0; i--, left--) {
    const hop = plain(hops[i]!.trim());
    if (isIP(hop) === 0) break;
    address = hop;
  }
  return address;
}

function plain(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
