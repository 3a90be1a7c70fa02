import { defineCommand } from 'citty';
import { parseAuthConfig } from '../../runtime/auth/config.ts';
import { mintToken, signInLink } from '../../runtime/auth/mint-token.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import { resolveConfig } from '../../runtime/config/resolve-config.ts';
import { printJson } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

const token = defineCommand({
  meta: { name: 'token', description: "Sign a token the app accepts (FW_AUTH=jwt with FW_JWT_HS_SECRET, as fw start has them): prints it, or with --link a sign-in link" },
  args: {
    user: { type: 'string', description: 'The user id (the sub claim)', required: true },
    tenant: { type: 'string', description: 'The tenant id, a UUID' },
    role: { type: 'string', description: 'The role, e.g. member' },
    'expires-in': { type: 'string', description: 'Seconds the token lives (default: FW_JWT_MAX_AGE, one day)' },
    link: { type: 'string', description: "The built app's URL, e.g. http://127.0.0.1:3000: print <url>/#token=<token>, which the templates' web apps sign in with" },
    json: { type: 'boolean', description: 'Print {"ok",token,expiresAt,link?}' },
  },
  async run({ args }) {
    const expiresIn = args['expires-in'];
    if (expiresIn !== undefined && !/^\d+$/.test(expiresIn)) throw new FwFailure('invalid_arguments', `--expires-in is whole seconds, not "${expiresIn}".`, { suggestions: ['--expires-in 3600'] });
    const minted = await mintToken(parseAuthConfig(resolveConfig()), {
      userId: args.user,
      ...(args.tenant ? { tenantId: args.tenant } : {}),
      ...(args.role ? { role: args.role } : {}),
      ...(expiresIn ? { expiresInSeconds: Number(expiresIn) } : {}),
    });
    const link = args.link ? signInLink(args.link, minted.token) : undefined;
    if (args.json) return printJson({ ok: true, ...minted, ...(link ? { link } : {}) });
    process.stdout.write(`${link ?? minted.token}\n`);
  },
});

// Not `export default defineCommand(…)`: see cli/commands/ai.ts (TypeScript 6 and rewritten `.ts` imports).
const auth = defineCommand({ meta: commandMeta('auth'), subCommands: { token } });
export default auth;
