import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fwPackageRoot } from '../../plugin/package-root.ts';
import { templateNames } from './create-app.ts';
import { lockFile, lockForApp, lockForTemplate } from './template-lock.ts';

const installed = {
  name: 'nuxt-web',
  lockfileVersion: 3,
  requires: true,
  packages: {
    // Resolved in an app named after the template, with vite held at a version by a dependency of its own.
    '': { name: 'nuxt-web', hasInstallScript: true, dependencies: { fwjs: 'file:/tmp/packs/fwjs-0.1.0.tgz', nuxt: '^4.5.2', vite: '^8.3.8' }, engines: { node: '>=22.12' } },
    'node_modules/fwjs': { version: '0.1.0', resolved: 'file:/tmp/packs/fwjs-0.1.0.tgz', dependencies: { vite: '^8.3.8' } },
    'node_modules/fwjs/node_modules/rolldown': { version: '1.2.19' },
    'node_modules/fwjs-extra': { version: '1.0.0' },
    'node_modules/vite': { version: '8.3.8' },
  },
};

describe('a template lock', () => {
  const template = { name: 'nuxt-web', dependencies: { fwjs: '*', nuxt: '^4.5.2' }, devDependencies: { typescript: '^6.0.3' } };

  it('is an installed app\'s lock without fwjs (nor what is nested under it), named and depending as the template does', () => {
    const lock = lockForTemplate(installed, template);
    expect(lock).toEqual({
      name: 'nuxt-web',
      lockfileVersion: 3,
      requires: true,
      packages: {
        '': { name: 'nuxt-web', hasInstallScript: true, dependencies: { fwjs: '*', nuxt: '^4.5.2' }, engines: { node: '>=22.12' }, devDependencies: { typescript: '^6.0.3' } },
        'node_modules/fwjs-extra': { version: '1.0.0' },
        'node_modules/vite': { version: '8.3.8' },
      },
    });
    // The root's keys stay in npm's order (a refreshed lock diffs as npm would write it).
    expect(Object.keys(lock.packages!['']!)).toEqual(['name', 'hasInstallScript', 'dependencies', 'engines', 'devDependencies']);
  });

  it('becomes a new app\'s lock with that app\'s name and fwjs spec, every locked package kept', () => {
    const shipped = lockForTemplate(installed, template);
    const app = lockForApp(shipped, { name: 'my-app', fwSpec: 'file:../fw' });
    expect(app).toMatchObject({ name: 'my-app', packages: { '': { name: 'my-app', dependencies: { fwjs: 'file:../fw', nuxt: '^4.5.2' } } } });
    expect(Object.keys(app.packages!)).toEqual(Object.keys(shipped.packages!));
  });

  // npm installs a lock's tree only while the lock's root says what package.json says; a range edited
  // in a template without refreshing its lock (README: "Template pins") would be resolved afresh.
  it.each(templateNames)('ships with %s, matching its package.json, with fwjs left to the install', (template) => {
    const dir = path.join(fwPackageRoot(), 'templates', template);
    expect(existsSync(path.join(dir, lockFile))).toBe(true);
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const lock = JSON.parse(readFileSync(path.join(dir, lockFile), 'utf8'));
    expect(lock).toMatchObject({ name: pkg.name, lockfileVersion: 3 });
    expect(lock.packages[''].name).toBe(pkg.name);
    expect(lock.packages[''].dependencies).toEqual(pkg.dependencies);
    expect(lock.packages[''].devDependencies).toEqual(pkg.devDependencies);
    expect(Object.keys(lock.packages).filter((location) => location.startsWith('node_modules/fwjs/') || location === 'node_modules/fwjs')).toEqual([]);
  });
});
