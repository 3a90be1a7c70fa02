import { command, z } from 'fwjs';
import { hashPassword } from '../auth/passwords.ts';

/** The people of each demo workspace: `admin@<workspace>.test` and `agent@<workspace>.test`. */
export const demoPeople = [
  { local: 'admin', name: 'Ada Admin', role: 'admin' },
  { local: 'agent', name: 'Sam Agent', role: 'agent' },
] as const;

/**
 * Creates the demo users of the current workspace that do not exist yet, all with `password`; existing
 * ones are left as they are. `system` only: src/endpoints/signIn.ts runs it, in the workspace being
 * signed in to, when the server was started with B2B_DEMO_PASSWORD (never set it in production).
 */
export default command({
  description: 'Creates the demo users of this workspace if missing (system only).',
  policy: 'system',
  args: { workspace: z.string().regex(/^[a-z0-9-]{1,40}$/), password: z.string().min(12).max(1024) },
  handler: async (ctx, args) => {
    const emails = demoPeople.map((person) => `${person.local}@${args.workspace}.test`);
    const existing = new Set((await ctx.db.selectFrom('users').select('email').where('email', 'in', emails).execute()).map((u) => u.email));
    const missing = demoPeople.filter((person) => !existing.has(`${person.local}@${args.workspace}.test`));
    if (missing.length === 0) return { created: 0 };
    const rows = await Promise.all(
      missing.map(async (person) => ({ email: `${person.local}@${args.workspace}.test`, name: person.name, role: person.role, password_hash: await hashPassword(args.password) })),
    );
    // Two first sign-ins at once both find them missing: the unique email (within the workspace) admits one.
    const inserted = await ctx.db.insertInto('users').values(rows).onConflict((oc) => oc.doNothing()).executeTakeFirst();
    return { created: Number(inserted.numInsertedOrUpdatedRows ?? 0n) };
  },
});
