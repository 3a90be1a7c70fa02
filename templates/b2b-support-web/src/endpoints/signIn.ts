import { endpoint, FwError, tooManyRequests, z } from 'fwjs';
import { verifyPassword } from '../auth/passwords.ts';
import { issueToken } from '../auth/tokens.ts';
import { addressKey, MAX_FAILED_SIGN_INS, MAX_FAILED_SIGN_INS_PER_ADDRESS, secondsUntilRetry } from '../auth/sign-in-limits.ts';
import { findWorkspace } from '../auth/workspaces.ts';

interface SignInUser {
  id: string;
  email: string;
  name: string;
  role: string;
  password_hash: string;
}

interface Failures {
  count: number;
  oldest: Date | null;
}

interface SignInLookup {
  user: SignInUser | null;
  /** Wrong passwords in the window for this email, and from this address (any email). */
  failures: Failures;
  addressFailures: Failures;
}

/** One answer for every failure, so a caller learns nothing about which workspaces or emails exist. */
const refused = () =>
  new FwError('unauthenticated', 'Wrong workspace, email or password.', {
    reason: 'invalid_credentials',
    diagnostics: [{ path: 'body', code: 'invalid_credentials', message: 'No user of this workspace has this email and password.' }],
  });

/** 429 until the oldest failure of a full window leaves it. */
function locked(whose: string, failures: Failures, reason: string, now: Date): FwError {
  const retryAfterSeconds = secondsUntilRetry(new Date(failures.oldest!), now);
  const minutes = Math.ceil(retryAfterSeconds / 60);
  return tooManyRequests(`Too many wrong passwords ${whose}. Try again in ${minutes === 1 ? 'a minute' : `${minutes} minutes`}.`, { reason, retryAfterSeconds });
}

/**
 * Sign-in: checks a workspace's user's password and answers a short-lived access token that fw's
 * runtime accepts under FW_AUTH=jwt (HS256, the same secret, issuer and audience; docs/auth.md).
 *
 * Nobody is signed in yet, so the caller is anonymous and `ctx.db` shows no tenant's rows. The lookup
 * runs with `ctx.runAsSystem` inside the one tenant the workspace names — a transaction whose identity
 * fw proves to the database, as for a cron — so row-level security still holds: a user of one workspace
 * can only ever be found, and get a token, in that workspace.
 *
 * An email with ten wrong passwords in fifteen minutes gets 429 `too_many_requests` (with Retry-After)
 * until the oldest is fifteen minutes old, whatever password it brings; so does an address that gave
 * the workspace fifty, whatever email it tries (an IPv6 one by its /64: src/auth/sign-in-limits.ts). Behind a load balancer,
 * FW_TRUST_PROXY makes ctx.clientAddress the client's, not the balancer's.
 */
export default endpoint({
  method: 'POST',
  path: '/api/auth/sign-in',
  policy: 'public',
  description: 'Exchanges a workspace, email and password for an access token.',
  args: {
    workspace: z.string().trim().min(1).max(100),
    email: z.string().trim().min(1).max(320),
    password: z.string().min(1).max(1024),
  },
  handler: async (ctx, args) => {
    const workspace = findWorkspace(args.workspace);
    let user: SignInUser | null = null;
    let failures = 0;
    if (workspace) {
      const demoPassword = process.env.B2B_DEMO_PASSWORD;
      if (demoPassword !== undefined && demoPassword.length < 12) {
        throw new FwError('unavailable', 'B2B_DEMO_PASSWORD must be at least 12 characters long.', { reason: 'sign_in_not_configured' });
      }
      if (demoPassword) await ctx.runAsSystem('seedDemoUsers', { workspace: workspace.slug, password: demoPassword }, { tenantId: workspace.tenantId });
      const found = await ctx.runAsSystem<SignInLookup>('findSignInUser', { email: args.email, address: addressKey(ctx.clientAddress) }, { tenantId: workspace.tenantId });
      if (found.failures.count >= MAX_FAILED_SIGN_INS) throw locked('for this email', found.failures, 'sign_in_locked', ctx.now());
      if (found.addressFailures.count >= MAX_FAILED_SIGN_INS_PER_ADDRESS) throw locked('from this address', found.addressFailures, 'sign_in_address_locked', ctx.now());
      user = found.user;
      failures = found.failures.count;
    }
    // An unknown workspace or email costs the same key derivation as a wrong password.
    const matches = await verifyPassword(args.password, user?.password_hash);
    if (workspace && (!user || !matches || failures > 0)) {
      await ctx.runAsSystem('recordSignIn', { email: args.email, address: addressKey(ctx.clientAddress), succeeded: Boolean(user && matches) }, { tenantId: workspace.tenantId });
    }
    if (!workspace || !user || !matches) throw refused();
    const { token, expiresAt } = await issueToken({ sub: user.id, tenant_id: workspace.tenantId, role: user.role }, ctx.now());
    return {
      token,
      expiresAt,
      user: { id: user.id, email: user.email, name: user.name, role: user.role },
      workspace: { slug: workspace.slug, name: workspace.name },
    };
  },
});
