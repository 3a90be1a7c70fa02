#!/usr/bin/env node
import { unsupportedNodeMessage } from '../runtime/core/node-version.ts';

// Checked before fw's other modules load (they are imported below, dynamically): on an older Node
// they might not even parse.
const unsupported = unsupportedNodeMessage(process.versions.node);
if (unsupported) {
  process.stderr.write(`${unsupported}\n`);
  process.exit(1);
}
const { main } = await import('./main.ts');
// Exit explicitly: a stopped server must not linger on a stray handle.
process.exit(await main(process.argv.slice(2)));
