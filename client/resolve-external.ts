import type { ApiShape, ExternalRef, ExternalRefKind } from './api-types.ts';

const groupOf = { command: 'commands', query: 'queries' } as const;

// What the manifest schema allows in service and entry names, and all that may reach a URL path.
const namePart = /^[A-Za-z0-9_-]+$/;

/**
 * The ExternalRef for an external call target: refs are checked and pass through, qualified names
 * (`tickets.createTicket`) are looked up in `api.external`. Throws a TypeError naming the fix for a
 * malformed name, a name the api does not have, or a ref of the wrong kind.
 */
export function resolveExternal<K extends ExternalRefKind>(api: ApiShape, kind: K, target: string | ExternalRef): ExternalRef<K> {
  const group = groupOf[kind];
  if (typeof target !== 'string') {
    if (target.kind !== kind) {
      throw new TypeError(`fw: external ${target.kind} "${target.qualifiedName}" cannot be called as an external ${kind}; pass an entry of api.external.<service>.${group}.`);
    }
    if (!namePart.test(target.service) || !namePart.test(target.name)) throw malformed(target.qualifiedName);
    return target as ExternalRef<K>;
  }
  const dot = target.indexOf('.');
  const service = target.slice(0, dot);
  const name = target.slice(dot + 1);
  if (dot < 0 || !namePart.test(service) || !namePart.test(name)) throw malformed(target);
  const refs = api.external !== undefined && Object.hasOwn(api.external, service) ? api.external[service]![group] : undefined;
  if (refs !== undefined && Object.hasOwn(refs, name)) return refs[name] as ExternalRef<K>;
  const known = Object.values(api.external ?? {})
    .flatMap((s) => Object.values(s[group]).map((ref) => ref.qualifiedName))
    .sort();
  throw new TypeError(
    `fw: the api object has no external ${kind} named "${target}" (known: ${known.join(', ') || 'none'}). Check the name, or import the service's manifest and regenerate the api with \`fw generate\`.`,
  );
}

function malformed(qualifiedName: string): TypeError {
  return new TypeError(`fw: "${qualifiedName}" is not a qualified external name; use "<service>.<entry>" with letters, digits, "_" and "-" in each part, e.g. "tickets.createTicket".`);
}
