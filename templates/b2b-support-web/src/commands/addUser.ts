import { command, conflict, z } from 'fwjs';
import { userRoles } from '../fw/schema.ts';
import { hashPassword } from '../auth/passwords.ts';

/** Adds a person to the admin's own workspace (row-level security puts the row in the admin's tenant). */
export default command({
  description: 'Add a user who can sign in to this workspace (admins only).',
  policy: 'admin',
  // A password must never pass through a model: agents are not offered this command.
  tool: false,
  args: {
    email: z.email().max(320).transform((email) => email.toLowerCase()),
    name: z.string().trim().min(1).max(200),
    role: z.enum(userRoles).default('agent'),
    password: z.string().min(12).max(1024),
  },
  handler: async (ctx, args) => {
    const taken = await ctx.db.selectFrom('users').select('id').where('email', '=', args.email).executeTakeFirst();
    if (taken) throw conflict(`${args.email} can already sign in to this workspace.`, { reason: 'email_taken' });
    const user = await ctx.db
      .insertInto('users')
      .values({ email: args.email, name: args.name, role: args.role, password_hash: await hashPassword(args.password) })
      .returning(['id', 'email', 'name', 'role', 'created_at'])
      .executeTakeFirstOrThrow();
    return user;
  },
});
