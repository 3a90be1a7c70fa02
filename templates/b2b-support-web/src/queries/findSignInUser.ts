import { query, z } from 'fwjs';
import { FAILED_SIGN_IN_WINDOW_MS } from '../auth/sign-in-limits.ts';

/**
 * The user signing in, with their password hash (or null), and the wrong passwords given in the last
 * window for this email and from this address (src/auth/sign-in-limits.ts). `system` only: never reachable over HTTP;
 * src/endpoints/signIn.ts runs it with `ctx.runAsSystem` inside the one workspace the sign-in names, so
 * row-level security keeps the lookup (and any SQL in it) to that tenant's users.
 */
export default query({
  description: 'Looks up a user by email in the current tenant for sign-in, with its recent failures (system only).',
  policy: 'system',
  args: { email: z.string().trim().toLowerCase().min(1).max(320), address: z.string().min(1).max(100) },
  handler: async (ctx, args) => {
    const user =
      (await ctx.db.selectFrom('users').select(['id', 'email', 'name', 'role', 'password_hash']).where('email', '=', args.email).orderBy('created_at').limit(1).executeTakeFirst()) ?? null;
    const since = new Date(ctx.now().getTime() - FAILED_SIGN_IN_WINDOW_MS);
    const failuresWhere = (column: 'email' | 'address', value: string) =>
      ctx.db
        .selectFrom('sign_in_failures')
        .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.min('failed_at').as('oldest')])
        .where(column, '=', value)
        .where('failed_at', '>', since)
        .executeTakeFirstOrThrow()
        .then((found) => ({ count: found.count, oldest: found.oldest === null ? null : new Date(found.oldest) }));
    return { user, failures: await failuresWhere('email', args.email), addressFailures: await failuresWhere('address', args.address) };
  },
});
