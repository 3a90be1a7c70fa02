function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * JSON with object keys sorted at every depth, so equal args give equal cache keys whatever
 * order their keys were written in. Otherwise as `JSON.stringify` (toJSON, undefined members dropped).
 *
 * @example
 *   canonicalJson({ b: 1, a: { d: 2, c: 3 } }) // '{"a":{"c":3,"d":2},"b":1}'
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, member: unknown) =>
    isPlainObject(member) ? Object.fromEntries(Object.keys(member).sort().map((key) => [key, member[key]])) : member,
  );
}
