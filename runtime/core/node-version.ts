/** The oldest Node.js fw runs on (package.json `engines`, the templates' `engines` and `.node-version` agree). */
export const minimumNode = '22.12';

/**
 * One line saying what to install when `version` is older than fw supports, or undefined. Kept free of
 * imports: `bin.ts` calls it before loading anything else, which an older Node may fail to load.
 */
export function unsupportedNodeMessage(version: string): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const [needMajor, needMinor] = minimumNode.split('.').map(Number) as [number, number];
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return undefined;
  return `fw needs Node.js ${minimumNode} or newer, and this is ${version}: install Node.js 24 LTS (nvm install 24, or https://nodejs.org) and run the command again.`;
}

/**
 * `fw postinstall` (an app's npm `postinstall`): one line when npm itself ran on a Node.js older than
 * fw supports, or undefined. npm names its Node in `npm_config_user_agent` (`npm/11.6.2 node/v20.20.2
 * linux x64 …`, pnpm alike); `current` is the Node running the script, which npm takes from the app's
 * node_modules/.bin — the `node` devDependency's Node 24, once installed. The app's .npmrc hides npm's
 * EBADENGINE warnings (a few lines for each of ~30 dependencies), so this line is what says why nothing
 * failed, or, without the pinned Node, what to install.
 */
export function installNote(userAgent: string | undefined, current: string): string | undefined {
  const npmNode = /\bnode\/v?(\d+\.\d+\.\d+)/.exec(userAgent ?? '')?.[1];
  if (!npmNode || unsupportedNodeMessage(npmNode) === undefined) return undefined;
  if (unsupportedNodeMessage(current) !== undefined) {
    return `fw: npm ran on Node.js ${npmNode}, older than fw supports (${minimumNode}), and this app's own Node.js (its "node" devDependency) is not installed: install Node.js 24 LTS (nvm install 24, or https://nodejs.org) and run npm install again.`;
  }
  return `fw: npm ran on Node.js ${npmNode}, older than fw supports (${minimumNode}), and .npmrc hides its engine warnings: nothing failed — this app's npm scripts and npx fw run on Node.js ${current}, its "node" devDependency.`;
}
