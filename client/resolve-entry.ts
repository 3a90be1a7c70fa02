import { closestName } from '../runtime/core/closest-name.ts';
import type { ApiShape, EntryRef } from './api-types.ts';

/** The api's groups of EntryRefs (external entries are resolved by resolve-external.ts). */
type EntryGroup = Exclude<keyof ApiShape, 'external'>;

const groupsByCall = {
  command: ['commands'],
  query: ['queries', 'liveQueries'],
  liveQuery: ['liveQueries'],
} as const satisfies Record<string, readonly EntryGroup[]>;

const kindOfGroup = { commands: 'command', queries: 'query', liveQueries: 'liveQuery' } as const;

type CallKind = keyof typeof groupsByCall;
/** The entry kinds a call reaches: commands; queries and liveQueries (read once); liveQueries (subscribed). */
type KindsOf<C extends CallKind> = (typeof kindOfGroup)[(typeof groupsByCall)[C][number]];

/**
 * The EntryRef for a call target: refs pass through, names are looked up in the api object.
 * Throws a TypeError naming the fix for a name the api does not have (the nearest name it has, when one
 * is close), or a ref of the wrong kind.
 */
export function resolveEntry<C extends CallKind>(api: ApiShape, call: C, target: string | EntryRef): EntryRef<KindsOf<C>> {
  const groups: readonly EntryGroup[] = groupsByCall[call];
  if (typeof target !== 'string') {
    if (groups.some((group) => kindOfGroup[group] === target.kind)) return target as EntryRef<KindsOf<C>>;
    throw new TypeError(`fw: ${target.kind} "${target.name}" cannot be called as a ${call}; pass an entry of api.${groups.join(' or api.')}.`);
  }
  for (const group of groups) {
    if (Object.hasOwn(api[group], target)) return api[group][target] as EntryRef<KindsOf<C>>;
  }
  const known = groups.flatMap((group) => Object.keys(api[group])).sort();
  // The same suggestion fw dev's analysis prints for the call (orphan_ui_action), where the page shows it.
  const near = closestName(target, known, 2);
  throw new TypeError(
    `fw: the api object has no ${call} named "${target}"${near ? `. Did you mean '${near}'?` : ''} (known: ${known.join(', ') || 'none'}). Check the name, or regenerate the api with \`fw generate\`.`,
  );
}
