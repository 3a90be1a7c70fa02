/**
 * A template's `package-lock.json`: the whole dependency tree the suite tested, so that an app made today
 * installs that tree and not whatever its caret ranges resolve to on the day (a transitive release, such
 * as a Vite under Nuxt, can break a new app before anyone changed a line). Its one open entry is `fwjs`:
 * which fw an app gets is decided when it is created (a link to a checkout, a packed tarball, the
 * registry's version), so the shipped lock has no `node_modules/fwjs` and npm resolves that one package
 * at install, keeping every locked package that satisfies fwjs's own ranges. `npm run templates:latest`
 * (e2e/templates-latest/) makes these locks; README's "Template pins" says how.
 */

export const lockFile = 'package-lock.json';

interface Lock {
  name?: string;
  packages?: Record<string, { name?: string; dependencies?: Record<string, string> } & Record<string, unknown>>;
  [key: string]: unknown;
}

type PackageJson = { name: string; dependencies?: Record<string, string>; devDependencies?: Record<string, string> };

/** The template's lock for a new app: its name and fwjs spec, as `fw create` writes them in its package.json. */
export function lockForApp(lock: Lock, app: { name: string; fwSpec: string }): Lock {
  const root = lock.packages?.[''] ?? {};
  return {
    ...lock,
    name: app.name,
    packages: { ...lock.packages, '': { ...root, name: app.name, dependencies: { ...root.dependencies, fwjs: app.fwSpec } } },
  };
}

/**
 * An installed app's lock as its template ships it: without fwjs (its entry and anything nested under
 * it), its root saying what the template's package.json says (name and ranges: the app it was resolved
 * in may have added a package to hold it at a version), so npm takes it as the lock of a new app's
 * package.json.
 */
export function lockForTemplate(lock: Lock, template: PackageJson): Lock {
  const packages = Object.fromEntries(Object.entries(lock.packages ?? {}).filter(([location]) => !/^node_modules\/fwjs(\/|$)/.test(location)));
  // Spread over the lock's own root, so its keys keep npm's order.
  const root: Record<string, unknown> = { ...packages[''], name: template.name, dependencies: template.dependencies, devDependencies: template.devDependencies };
  for (const key of ['dependencies', 'devDependencies']) if (root[key] === undefined) delete root[key];
  return { ...lock, name: template.name, packages: { ...packages, '': root } };
}
