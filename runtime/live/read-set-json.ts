/**
 * A read set as text and back, for the processes of a cluster (hub/cluster.ts): the owner of a group
 * publishes what its run read with its result, so another process can answer a resume as the owner
 * would (subscriptions.ts matches the log since the client's revision against it). Sets travel as
 * arrays and bigints as decimal strings under a key of their own.
 *
 * @example
 *   const text = readSetToJson(group.readSet);
 *   readSetFromJson(text); // equal to group.readSet
 */
import type { ReadSet } from './read-set.ts';

const BIGINT = '$bigint';
const SET = '$set';

export function readSetToJson(readSet: ReadSet): string {
  return JSON.stringify([...readSet], (_key, value: unknown) => {
    if (typeof value === 'bigint') return { [BIGINT]: value.toString() };
    if (value instanceof Set) return { [SET]: [...(value as Set<unknown>)] };
    return value;
  });
}

export function readSetFromJson(text: string): ReadSet {
  const entries = JSON.parse(text, (_key, value: unknown) => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const tagged = value as Record<string, unknown>;
      if (typeof tagged[BIGINT] === 'string') return BigInt(tagged[BIGINT]);
      if (Array.isArray(tagged[SET])) return new Set(tagged[SET]);
    }
    return value;
  }) as Array<[string, unknown]>;
  return new Map(entries) as ReadSet;
}
