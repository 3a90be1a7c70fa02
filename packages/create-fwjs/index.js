#!/usr/bin/env node
// `npm create fwjs my-app` runs this. It is `fw create` of the fwjs it depends on (the same release),
// which installs the new app's dependencies unless told --no-install; every other flag is fw create's
// (--template, --fw-spec, --json). Plain JavaScript, so it runs as published, without a build.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const args = process.argv.slice(2);
if (args.length === 0 || args.includes('--help') || args.includes('-h')) {
  process.stderr.write(
    [
      'Usage: npm create fwjs <dir> [-- --template minimal-web|nuxt-web|b2b-support-web] [--no-install]',
      '',
      'Creates an fw app in <dir> (fw create) and installs its dependencies. Then: cd <dir> && npm run dev',
      '',
    ].join('\n'),
  );
  process.exit(args.length === 0 ? 1 : 0);
}

const manifest = createRequire(import.meta.url).resolve('fwjs/package.json');
const bin = path.join(path.dirname(manifest), JSON.parse(readFileSync(manifest, 'utf8')).bin.fw);
const install = args.includes('--no-install') ? [] : ['--install'];
const forwarded = args.filter((arg) => arg !== '--no-install' && arg !== '--install');

// fw's own CLI checks the Node version and says what to install on an older one.
const child = spawn(process.execPath, [bin, 'create', ...forwarded, ...install], { stdio: 'inherit' });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
