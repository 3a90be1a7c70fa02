#!/usr/bin/env node
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { installNote, unsupportedNodeMessage } from '../runtime/core/node-version.ts';
import { findPinnedNode, REEXEC_MARK, runOnPinnedNode } from '../runtime/core/pinned-node.ts';

// `fw postinstall`, an app's npm postinstall: at most one line about the Node npm ran on (an older
// one included, so before the check below), and never a failed install.
if (process.argv[2] === 'postinstall') {
  const { resolveConfig } = await import('../runtime/config/resolve-config.ts');
  const note = installNote(resolveConfig().get('npm_config_user_agent'), process.versions.node);
  if (note) process.stderr.write(`${note}\n`);
  process.exit(0);
}
// Checked before fw's other modules load (they are imported below, dynamically): on an older Node
// they might not even parse. An app that has its pinned Node (the `node` devDependency) runs fw on it;
// `fw create` runs as it is (it copies a template and runs npm install, which brings the app's Node).
const unsupported = unsupportedNodeMessage(process.versions.node);
if (unsupported && process.argv[2] !== 'create') {
  const pinned = process.env[REEXEC_MARK] ? undefined : findPinnedNode([process.cwd(), fileURLToPath(new URL('.', import.meta.url))]);
  if (!pinned) {
    process.stderr.write(`${unsupported}\n`);
    process.exit(1);
  }
  process.exit(await runOnPinnedNode(pinned.path));
}
// Node keeps the bytecode of the modules fw loads (on disk, in its compile cache, checked against each
// file's content), so every later fw process skips compiling them again — as Vite's own CLI does. The
// cache is written when asked: before the explicit exit below, and once a long-running command is up.
module.enableCompileCache?.();
setTimeout(() => module.flushCompileCache?.(), 10_000).unref();
const { main } = await import('./main.ts');
const exitCode = await main(process.argv.slice(2));
module.flushCompileCache?.();
// Exit explicitly: a stopped server must not linger on a stray handle.
process.exit(exitCode);
