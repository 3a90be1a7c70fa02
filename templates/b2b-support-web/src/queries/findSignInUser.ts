import { query, z } from 'fwjs';

/**
 * The user signing in, with their password hash, or null. `system` only: never reachable over HTTP;
 * src/endpoints/signIn.ts runs it with `ctx.runAsSystem` inside the one workspace the sign-in names, so
 * row-level security keeps the lookup (and any SQL in it) to that tenant's users.
 */
export default query({
  description: 'Looks up a user by email in the current tenant for sign-in (system only).',
  policy: 'system',
  args: { email: z.string().trim().toLowerCase().min(1).max(320) },
  handler: async (ctx, args) =>
    (await ctx.db.selectFrom('users').select(['id', 'email', 'name', 'role', 'password_hash']).where('email', '=', args.email).orderBy('created_at').limit(1).executeTakeFirst()) ?? null,
});
