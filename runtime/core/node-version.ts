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
