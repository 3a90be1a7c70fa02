import { describe, expect, it } from 'vitest';
import type { ApiShape } from './api-types.ts';
import { resolveEntry } from './resolve-entry.ts';

const ref = (kind: 'command' | 'query' | 'liveQuery', name: string) => ({ kind, name, path: `/${kind}/${name}` });
const api = {
  commands: { completeTask: ref('command', 'completeTask'), createTask: ref('command', 'createTask') },
  queries: {},
  liveQueries: { liveTasks: ref('liveQuery', 'liveTasks') },
  external: {},
} as unknown as ApiShape;

describe('resolveEntry', () => {
  // #45.3: what the page's error boundary shows for a typo'd name says the fix, as fw dev's analysis does.
  it('names the nearest entry of a misspelt name', () => {
    expect(() => resolveEntry(api, 'command', 'completeTsk')).toThrow(
      new TypeError(`fw: the api object has no command named "completeTsk". Did you mean 'completeTask'? (known: completeTask, createTask). Check the name, or regenerate the api with \`fw generate\`.`),
    );
  });

  it('names none when nothing is close', () => {
    expect(() => resolveEntry(api, 'liveQuery', 'everything')).toThrow(
      new TypeError(`fw: the api object has no liveQuery named "everything" (known: liveTasks). Check the name, or regenerate the api with \`fw generate\`.`),
    );
  });
});
