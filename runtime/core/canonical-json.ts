/**
 * JSON with object keys sorted at every depth, so equal values give equal text whatever order their
 * keys were written in: the key of a cached query or a live group (the browser and the hub), the
 * checksum of a schema (migrations, stored in `_fw_migrations`: this text must not change). Otherwise
 * as `JSON.stringify`: `toJSON` is honoured, `undefined` and function members are dropped, and in
 * arrays they become `null`.
 *
 * @example
 *   canonicalJson({ b: 1, a: { d: 2, c: 3 } }) // '{"a":{"c":3,"d":2},"b":1}'
 */
export function canonicalJson(value: unknown): string {
  return write(value) ?? 'null';
}

function write(value: unknown): string | undefined {
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON(): unknown }).toJSON();
  }
  if (Array.isArray(value)) return `[${value.map((item) => write(item) ?? 'null').join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const members: string[] = [];
    for (const key of Object.keys(value).sort()) {
      const member = write((value as Record<string, unknown>)[key]);
      if (member !== undefined) members.push(`${JSON.stringify(key)}:${member}`);
    }
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}
