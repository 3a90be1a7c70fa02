import type { IncomingHttpHeaders } from 'node:http';
import type { Auth } from '../core/entry-types.ts';
import { FwError } from '../core/errors.ts';

export const ANONYMOUS: Auth = Object.freeze({ kind: 'anonymous', userId: null, tenantId: null, role: null });

export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Identity values end up in SQL settings and logs: keep them printable and bounded.
const identityPattern = /^[\x21-\x7e][\x20-\x7e]{0,199}$/;

function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Dev-headers auth (development only): `x-fw-user-id`, `x-fw-tenant-id` (a UUID) and `x-fw-role`.
 * No user id means anonymous. Malformed values are refused rather than ignored, so a typo never
 * silently turns into another identity.
 */
export function authFromDevHeaders(headers: IncomingHttpHeaders): Auth {
  const userId = single(headers, 'x-fw-user-id');
  const tenantId = single(headers, 'x-fw-tenant-id');
  const role = single(headers, 'x-fw-role');
  if (userId === undefined) {
    if (tenantId !== undefined || role !== undefined) {
      throw new FwError('unauthenticated', 'x-fw-tenant-id and x-fw-role need x-fw-user-id as well.', {
        diagnostics: [{ path: 'headers.x-fw-user-id', code: 'missing', message: 'Send x-fw-user-id with the other dev auth headers.' }],
      });
    }
    return ANONYMOUS;
  }
  const problems = [];
  if (!identityPattern.test(userId)) {
    problems.push({ path: 'headers.x-fw-user-id', code: 'invalid', message: 'Must be 1–200 printable ASCII characters.' });
  }
  if (tenantId !== undefined && !uuidPattern.test(tenantId)) {
    problems.push({ path: 'headers.x-fw-tenant-id', code: 'invalid_uuid', message: 'Must be a UUID, e.g. 00000000-0000-4000-8000-000000000001.' });
  }
  if (role !== undefined && !identityPattern.test(role)) {
    problems.push({ path: 'headers.x-fw-role', code: 'invalid', message: 'Must be 1–200 printable ASCII characters.' });
  }
  if (problems.length > 0) {
    throw new FwError('unauthenticated', 'Malformed dev auth headers.', { diagnostics: problems });
  }
  return { kind: 'user', userId, tenantId: tenantId?.toLowerCase() ?? null, role: role ?? null };
}
