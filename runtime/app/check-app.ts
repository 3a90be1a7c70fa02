import type { AppDefinition } from '../core/app-definition.ts';
import type { Manifest } from '../core/external-manifest.ts';
import type { EntryDefinition } from '../core/entry-types.ts';
import { entryRoute } from '../core/entry-routes.ts';
import { effectProblems } from '../external/effects.ts';
import { cronProblems } from '../schedule/cron-spec.ts';

const namePattern = /^[a-z][A-Za-z0-9]*$/;

/** Names an entry gets from its file name, so `create-note.ts` and `createNote.ts` both become `createNote`. */
export function entryNameFromFile(fileName: string): string {
  const stem = fileName.replace(/\.[cm]?[jt]sx?$/, '');
  return stem.replace(/[-_]+([A-Za-z0-9])/g, (_, c: string) => c.toUpperCase()).replace(/^[A-Z]/, (c) => c.toLowerCase());
}

export interface RegistryProblem {
  file?: string;
  /** The entry the problem is about, so a loader that knows its file can name it. */
  entry?: string;
  code?: 'unknown_policy' | 'duplicate_route' | 'invalid_entry_name' | 'unknown_cron_target' | 'invalid_cron';
  /** The cron of `src/crons.ts` the problem is about, so a loader can point at it. */
  cron?: string;
  /** For an unknown policy: the name to find in the entry's file. */
  policy?: string;
  hint?: string;
  message: string;
}

/**
 * Checks that an app is coherent before it serves anything: valid unique names, every policy an
 * entry names exists, and every table and liveQuery an external command's effects name exists.
 * Returns the problems rather than throwing so callers can report them all.
 */
export function checkApp(app: AppDefinition): RegistryProblem[] {
  const problems: RegistryProblem[] = [];
  for (const service of app.external ?? []) {
    for (const { policy, hint, message } of manifestPolicyProblems(app, service.manifest)) problems.push({ file: service.source, code: 'unknown_policy', policy, hint, message });
    // Effects naming a table or liveQuery the app does not have would invalidate nothing.
    for (const message of effectProblems(app, service)) problems.push({ file: service.source, message });
  }
  const endpointRoutes = new Map<string, string>();
  for (const [name, entry] of app.entries) {
    if (entry.kind === 'endpoint') {
      // `/api/t/:id` and `/api/t/:key` are the same route.
      const key = `${String(entry.options.method)} ${String(entry.options.path).replace(/:[^/]+/g, ':')}`;
      const other = endpointRoutes.get(key);
      if (other !== undefined) {
        problems.push({ entry: name, code: 'duplicate_route', message: `endpoints "${other}" and "${name}" both serve ${entryRoute(name, entry)}. Give one of them another method or path.` });
      } else endpointRoutes.set(key, name);
    }
    if (!namePattern.test(name)) {
      problems.push({ entry: name, code: 'invalid_entry_name', message: `Entry name "${name}" must be camelCase letters and digits (it comes from the file name).` });
    }
    const builtIn = entry.policy === 'public' || entry.policy === 'user' || entry.policy === 'system';
    if (!builtIn && !(entry.policy in app.policies)) {
      const known = ['public', 'user', 'system', ...Object.keys(app.policies)].join(', ');
      problems.push({
        entry: name,
        code: 'unknown_policy',
        policy: entry.policy,
        hint: `Define "${entry.policy}" in src/policies.ts with definePolicies(), or use one of: ${known}.`,
        message: `${entry.kind} "${name}" uses policy "${entry.policy}", which is not defined. Known policies: ${known}. Define it in src/policies.ts with definePolicies().`,
      });
    }
  }
  for (const problem of cronProblems(app)) problems.push({ file: CRONS_FILE, ...problem });
  return problems;
}

/**
 * The entries of a manifest whose policy the app does not define (`fw manifest validate` reports them
 * before an import; the app refuses to load with them).
 */
export function manifestPolicyProblems(app: Pick<AppDefinition, 'policies'>, manifest: Manifest): Array<{ index: number; policy: string; hint: string; message: string }> {
  return manifest.entries.flatMap((entry, index) => {
    const policy = entry.policy ?? 'user';
    if (policy === 'public' || policy === 'user' || policy === 'system' || policy in app.policies) return [];
    return [{
      index,
      policy,
      hint: `Define "${policy}" in src/policies.ts with definePolicies(), or use public, user or system in the manifest.`,
      message: `external ${entry.kind} "${manifest.service.name}.${entry.name}" uses policy "${policy}", which is not defined. Define it in src/policies.ts with definePolicies().`,
    }];
  });
}

/** Where an app declares its crons. */
export const CRONS_FILE = 'src/crons.ts';
