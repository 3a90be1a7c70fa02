import { FwFailure } from './failure.ts';
import { unsupportedNodeMessage } from './node-version.ts';

/**
 * Throws `unsupported_node` with the one line that says what to install, on a Node.js older than fw
 * supports. For the ways into fw that do not start at the CLI (which checks before loading anything):
 * the Vite plugin (and the Nuxt module through it) and `createRuntime`.
 */
export function assertSupportedNode(version: string = process.versions.node): void {
  const unsupported = unsupportedNodeMessage(version);
  if (unsupported) throw new FwFailure('unsupported_node', unsupported, { suggestions: ['nvm install 24'] });
}
