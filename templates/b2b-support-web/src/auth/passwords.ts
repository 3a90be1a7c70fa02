import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

// Passwords are stored as `scrypt$N$r$p$<salt>$<hash>` (base64url): a random 16-byte salt per user, and
// the cost parameters with the hash so they can be raised later without breaking older hashes.
// N = 2^15, r = 8, p = 1 (OWASP's minimum for scrypt) costs about 32 MiB and tens of milliseconds.
const N = 2 ** 15;
const r = 8;
const p = 1;
const KEY_LENGTH = 32;
const maxmem = 64 * 1024 * 1024;

function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...cost, maxmem }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** A new hash of `password` with a fresh salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { N, r, p });
  return ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

// Checked when nobody has the email asked for, so that an unknown user costs the same work as a wrong
// password and the answer's timing does not tell which emails exist.
let decoy: Promise<string> | undefined;

/**
 * Whether `password` matches `stored` (a {@link hashPassword} hash). With no stored hash (no such user)
 * it still derives a key against a decoy hash, and answers false.
 */
export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const hash = stored ?? (await (decoy ??= hashPassword(randomBytes(16).toString('hex'))));
  const [scheme, n, rr, pp, salt, key] = hash.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(rr), p: Number(pp) });
  return actual.length === expected.length && timingSafeEqual(actual, expected) && stored != null;
}
