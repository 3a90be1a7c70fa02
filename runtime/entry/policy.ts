import type { AppDefinition } from '../core/app-definition.ts';
import type { Auth } from '../core/entry-types.ts';
import { FwError } from '../core/errors.ts';

/**
 * Whether `auth` passes `policy`: `public` always, `system` (an internal entry) for every call the app's
 * server code makes — a scheduled call, a cron's tick, a workflow, an action, `ctx.runAsSystem` — as
 * whoever it runs as, and never for a call over HTTP; `user` for any signed-in caller; a named policy
 * when its check says so. An unknown policy refuses (fail closed). `what` names the thing being called.
 */
export async function authorizePolicy(app: AppDefinition, policy: string, auth: Auth, external: boolean, what: string): Promise<void> {
  if (policy === 'public') return;
  if (policy === 'system') {
    if (external) {
      throw new FwError(
        'forbidden',
        `${capitalise(what)} is internal (policy: 'system'): the app's server code runs it — ctx.scheduler, crons, workflows, actions, ctx.runAsSystem — and no request over HTTP can. To let signed-in callers call it, give it policy: 'user' or a named policy.`,
      );
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
