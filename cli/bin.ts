#!/usr/bin/env node
import { main } from './main.ts';

const [major] = process.versions.node.split('.').map(Number);
if ((major ?? 0) < 22) {
  process.stderr.write(`fw needs Node.js 22.12 or newer (this is ${process.versions.node}).\n`);
  process.exit(1);
}
// Exit explicitly: a stopped server must not linger on a stray handle.
process.exit(await main(process.argv.slice(2)));
