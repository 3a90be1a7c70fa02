/**
 * How many wrong passwords an email of a workspace may have in a window before sign-in stops trying
 * them: a password guesser gets ten tries per quarter of an hour, not thousands per second (and each
 * try costs the server a key derivation). The counts live in the database (sign_in_failures), so every
 * server process shares them. A right password clears the email's.
 */
export const MAX_FAILED_SIGN_INS = 10;
export const FAILED_SIGN_IN_WINDOW_MS = 15 * 60_000;

/**
 * How many wrong passwords one address (`ctx.clientAddress`: behind a load balancer, set FW_TRUST_PROXY)
 * may give a workspace in the same window, over all emails: one guess for each of many emails (password
 * spraying) stops here. High enough for an office behind one address; a right password does not clear
 * it, so a guesser cannot reset it with an account of their own.
 */
export const MAX_FAILED_SIGN_INS_PER_ADDRESS = 50;

/**
 * What the limit per address counts by: an IPv4 address as it is, an IPv6 one by its /64 — one home
 * or host is given a /64 and may use any address in it, so counting single IPv6 addresses would let a
 * guesser take a fresh one per try.
 *
 * @example
 *   addressKey('2001:db8:1:2::9') // '2001:db8:1:2::/64', as for '2001:db8:1:2:aaaa::1'
 */
export function addressKey(address: string): string {
  if (!address.includes(':')) return address;
  const [head = '', tail] = address.split('%', 1)[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => (Number.parseInt(group, 16) || 0).toString(16))
    .join(':')}::/64`;
}

/** Whole seconds until the oldest failure of a full window leaves it (at least 1). */
export function secondsUntilRetry(oldestFailure: Date, now: Date): number {
  return Math.max(1, Math.ceil((oldestFailure.getTime() + FAILED_SIGN_IN_WINDOW_MS - now.getTime()) / 1000));
}
