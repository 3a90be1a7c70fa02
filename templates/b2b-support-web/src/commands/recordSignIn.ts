import { command, z } from 'fwjs';
import { FAILED_SIGN_IN_WINDOW_MS } from '../auth/sign-in-limits.ts';

/**
 * What a sign-in came to, for the next one's limits (src/auth/sign-in-limits.ts): a wrong password is
 * counted against the email and the address it came from; a right one clears the email's count. Failures older than the window go too, so
 * the table holds minutes of attempts, never a history. `system` only: src/endpoints/signIn.ts runs it
 * in the workspace being signed in to.
 */
export default command({
  description: 'Records a failed sign-in of an email, or clears its failures after a success (system only).',
  policy: 'system',
  tool: false,
  args: { email: z.string().trim().toLowerCase().min(1).max(320), address: z.string().min(1).max(100), succeeded: z.boolean() },
  handler: async (ctx, args) => {
    const now = ctx.now();
    await ctx.db.deleteFrom('sign_in_failures').where('failed_at', '<=', new Date(now.getTime() - FAILED_SIGN_IN_WINDOW_MS)).execute();
    if (args.succeeded) await ctx.db.deleteFrom('sign_in_failures').where('email', '=', args.email).execute();
    else await ctx.db.insertInto('sign_in_failures').values({ email: args.email, address: args.address, failed_at: now }).execute();
    return null;
  },
});
