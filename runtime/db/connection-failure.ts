import { FwFailure } from '../core/failure.ts';

/**
 * Connection failures said in one line, with the fix: a server or pooler that refuses fw's sign-in
 * (`database_auth`), or nothing answering at the address (`database_unreachable`). Everything else
 * (and anything already an FwFailure) is left as it is.
 *
 * Two connections can be refused. The owner's (migrations, fw's bookkeeping, LISTEN) goes to
 * `FW_DIRECT_DATABASE_URL` when set, else `DATABASE_URL`; the request login's (`fw_login_…`, every
 * request transaction) always goes to `DATABASE_URL`, so behind PgBouncer the pooler must know that role
 * too. The URLs are named without their passwords.
 */

const passwordLike = /password authentication failed|authentication failed|no such user|server login|SASL|SCRAM|pg_hba\.conf|role "[^"]*" does not exist|client password must be a string|password is required/i;
const authCodes = new Set(['28P01', '28000']);
const unreachableCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT']);
/** What PgBouncer (not PostgreSQL) says when it refuses a client or cannot sign in to the server itself. */
const poolerSays = /no such user|"[a-z-]+" authentication failed|server login has been failing|server login failed|pgbouncer/i;

export interface ConnectionTarget {
  /** The variable the URL came from. */
  variable: 'DATABASE_URL' | 'FW_DIRECT_DATABASE_URL';
  url: string;
  /** The request login role when it is that login that connected (its user is not the URL's). */
  requestLogin?: string;
  /** Whether a direct URL is set beside `DATABASE_URL`. */
  direct: boolean;
}

/** `user@host:port/database` of a URL, never its password. */
export function describeUrl(url: string, user?: string): string {
  try {
    const parsed = new URL(url);
    const who = user ?? (decodeURIComponent(parsed.username) || parsed.searchParams.get('user') || 'the default user');
    const host = parsed.host || parsed.searchParams.get('host') || 'localhost';
    return `${who}@${host}${parsed.pathname || '/'}`;
  } catch {
    return 'an unparsable URL';
  }
}

export function connectionFailure(error: unknown, target: ConnectionTarget): FwFailure | undefined {
  if (error instanceof FwFailure || !(error instanceof Error)) return undefined;
  const code = (error as { code?: string }).code ?? '';
  const reason = error.message.replace(/\s+/g, ' ').trim() || code;
  const where = describeUrl(target.url, target.requestLogin);
  const pooler = poolerSays.test(reason);
  const seeDocs = 'docs/deploy.md#behind-a-connection-pooler';

  if (unreachableCodes.has(code)) {
    return new FwFailure('database_unreachable', `Nothing answers at ${target.variable} (${where}): ${reason}.`, {
      cause: error,
      suggestions: [`Check the host and port in ${target.variable}, and that PostgreSQL (or the pooler) is running and reachable from here.`],
    });
  }
  if (!authCodes.has(code) && !passwordLike.test(reason)) return undefined;

  if (target.requestLogin) {
    return new FwFailure(
      'database_auth',
      `${pooler ? 'The pooler' : 'The database'} at DATABASE_URL refused fw's request login ${target.requestLogin} (${where}): ${reason}.`,
      {
        cause: error,
        suggestions: [
          pooler
            ? `PgBouncer must know ${target.requestLogin}: set auth_user (with auth_query) so it looks logins up in PostgreSQL, or add "${target.requestLogin}" with its password to its auth_file (${seeDocs}).`
            : `Let ${target.requestLogin} sign in from here (pg_hba.conf allows it with a password; fw set that password itself) (${seeDocs}).`,
          ...(target.direct ? [] : ['Behind a transaction pooler, also set FW_DIRECT_DATABASE_URL to PostgreSQL itself: migrations and LISTEN need a session of their own.']),
        ],
      },
    );
  }
  return new FwFailure('database_auth', `${pooler ? 'The pooler' : 'The database'} at ${target.variable} refused fw's sign-in (${where}): ${reason}.`, {
    cause: error,
    suggestions: [
      `Check the user and password in ${target.variable}${pooler ? "; through PgBouncer, that user must also be in its auth_file (or found by auth_query), and PgBouncer's own login to PostgreSQL must work" : ''}.`,
      ...(target.variable === 'DATABASE_URL' && !target.direct && pooler
        ? [`Set FW_DIRECT_DATABASE_URL to PostgreSQL itself (not the pooler): migrations and LISTEN need a session of their own (${seeDocs}).`]
        : target.variable === 'FW_DIRECT_DATABASE_URL'
          ? [`FW_DIRECT_DATABASE_URL must point at PostgreSQL itself (or a session-mode pooler), for migrations and LISTEN (${seeDocs}).`]
          : []),
    ],
  });
}
