import path from 'node:path';
import type { AdminTarget } from '../toolchain/admin/admin-client.ts';

/** The flags of every command that asks a running runtime's admin routes (`fw live …`, `fw workflows …`). */
export const adminArgs = {
  root: { type: 'string', description: 'The app directory (its running fw dev is found in .fw/runtime.json)', default: '.' },
  url: { type: 'string', description: 'The runtime address (default: the running fw dev, else http://127.0.0.1:3100)' },
  'admin-token': { type: 'string', description: 'Admin token for a runtime outside dev mode (default: FW_ADMIN_TOKEN)' },
  json: { type: 'boolean', description: 'Print one JSON document' },
} as const;

export function adminTarget(args: { root: string; url?: string; 'admin-token'?: string }): AdminTarget {
  return { root: path.resolve(args.root), ...(args.url ? { url: args.url } : {}), ...(args['admin-token'] ? { token: args['admin-token'] } : {}) };
}
