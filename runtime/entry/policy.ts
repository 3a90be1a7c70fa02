import type { AppDefinition } from '../core/app-definition.ts';
import type { Auth } from '../core/entry-types.ts';
import { FwError } from '../core/errors.ts';

/**
 * Whether `auth` passes `policy`: `public` always, `system` only for internal calls with system auth,
 * `user` for any signed-in caller, a named policy when its check says so. An unknown policy refuses
 * (fail closed). `what` names the thing being called in the messages.
 */
export async function authorizePolicy(app: AppDefinition, policy: string, auth: Auth, external: boolean, what: string): Promise<void> {
  if (policy === 'public') return;
  if (policy === 'system') {
    if (external || auth.kind !== 'system') {
      throw new FwError('forbidden', `${capitalise(what)} is for the system only and cannot be called over HTTP.`);
    }
    return;
  }
  if (auth.kind === 'anonymous') {
    throw new FwError('unauthenticated', `Sign in to call ${what} (in dev, send x-fw-user-id and x-fw-tenant-id).`);
  }
  if (policy === 'user') return;
  const check = app.policies[policy];
  if (!check) throw new FwError('internal', `Policy "${policy}" is not defined.`);
  if (!(await check({ auth }))) {
    throw new FwError('forbidden', `Policy "${policy}" does not allow this caller.`);
  }
}

/** Whether `auth` passes `policy`, as a boolean (for listing what a caller may call). */
export function allowedBy(app: AppDefinition, policy: string, auth: Auth, external: boolean): Promise<boolean> {
  return authorizePolicy(app, policy, auth, external, 'this').then(
    () => true,
    () => false,
  );
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
