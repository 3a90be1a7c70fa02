import { FwError } from './errors.ts';

/**
 * The JSON text of something fw sends: an HTTP answer, a live query's result, an MCP tool's content.
 * JSON has no BigInt — and Kysely answers one for an update's `numUpdatedRows`, a delete's
 * `numDeletedRows`, an insert's `numInsertedOrUpdatedRows` — so `JSON.stringify` throws
 * `Do not know how to serialize a BigInt`, which says neither where the value is nor what to do.
 * This says both, as the app's own bug (internal: a caller of a production app sees its code and
 * trace id only). The walk that finds the value runs only after a failure.
 *
 * @example
 *   jsonText({ ok: true, result: { closed: 2n } }, 'POST /commands/closeStale')
 *   // FwError internal: POST /commands/closeStale answered a BigInt at result.closed, which JSON cannot carry.
 */
export function jsonText(value: unknown, what: string, root = ''): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    const at = bigintPath(value, root);
    if (at === undefined) throw error;
    throw new FwError('internal', `${what} answered a BigInt at ${at || '(root)'}, which JSON cannot carry.`, {
      cause: error,
      diagnostics: [
        {
          path: at || '(root)',
          code: 'not_json',
          message: 'Return Number(value) when it fits (a row count does: Kysely’s numUpdatedRows and numDeletedRows are BigInt), or String(value).',
        },
      ],
    });
  }
}

/** Where the first BigInt sits in `value` (`result.closed`, `items.0.count`), as `JSON.stringify` would meet it. */
function bigintPath(value: unknown, path: string, seen = new Set<object>()): string | undefined {
  if (typeof value === 'bigint') return path;
  if (typeof value !== 'object' || value === null || seen.has(value)) return undefined;
  seen.add(value);
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return bigintPath((value as { toJSON(): unknown }).toJSON(), path, seen);
  for (const [key, member] of Object.entries(value)) {
    const found = bigintPath(member, path ? `${path}.${key}` : key, seen);
    if (found !== undefined) return found;
  }
  return undefined;
}
