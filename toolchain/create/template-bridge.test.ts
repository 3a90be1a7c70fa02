import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fwPackageRoot } from '../../plugin/package-root.ts';

/** The names a bridge exports from its `export const { … } = createFwReact(api)` (or `= fw`). */
function exported(file: string): string[] {
  const source = readFileSync(path.join(fwPackageRoot(), 'templates', file), 'utf8');
  const found = /export const \{([^}]+)\} = (?:createFwReact\(api\)|fw);/.exec(source);
  if (!found) throw new Error(`${file} has no hook export`);
  return found[1]!.split(',').map((name) => name.trim()).sort();
}

// A template's components import hooks from its bridge only: each offers every hook over the app's own
// entries (the external ones need a manifest, fw do connect-ui adds them).
describe("a template's bridge", () => {
  it.each(['minimal-web/web/src/lib/fw.ts', 'b2b-support-web/web/src/lib/fw.ts'])('%s exports every React hook', (file) => {
    expect(exported(file)).toEqual(['FwProvider', 'useCommand', 'useFwClient', 'useFwRuntime', 'useLiveQuery', 'usePaginatedLiveQuery', 'useQuery']);
  });

  it('nuxt-web/web/composables/fw.ts exports every composable', () => {
    expect(exported('nuxt-web/web/composables/fw.ts')).toEqual(['useFwClient', 'useFwCommand', 'useFwLiveQuery', 'useFwPaginatedLiveQuery', 'useFwQuery']);
  });
});
