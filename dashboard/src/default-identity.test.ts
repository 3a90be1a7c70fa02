import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fwPackageRoot } from '../../plugin/package-root.ts';
import { defaultIdentity } from './default-identity.ts';

/** A template's dev identity, as its source writes its devAuth. */
function devAuthOf(file: string): { userId: string; tenantId: string } {
  const source = readFileSync(path.join(fwPackageRoot(), 'templates', file), 'utf8');
  const found = /userId: '([^']+)', tenantId: '([^']+)'/.exec(source);
  if (!found) throw new Error(`${file} has no devAuth`);
  return { userId: found[1]!, tenantId: found[2]! };
}

describe("the dashboard's default identity", () => {
  it.each(['minimal-web/web/src/main.tsx', 'nuxt-web/web/composables/fw.ts'])('is the dev user and tenant of %s', (file) => {
    expect(defaultIdentity).toEqual(devAuthOf(file));
  });
});
