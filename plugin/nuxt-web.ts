import { existsSync } from 'node:fs';
import path from 'node:path';

const nuxtConfigFiles = ['nuxt.config.ts', 'nuxt.config.mts', 'nuxt.config.js', 'nuxt.config.mjs'];

/** web/'s nuxt.config, when the app's `web/` is a Nuxt app. */
export function nuxtConfigFile(root: string): string | undefined {
  return nuxtConfigFiles.map((name) => path.join(root, 'web', name)).find((file) => existsSync(file));
}

/** Whether the app's `web/` is a Nuxt app (it has a nuxt.config). */
export function isNuxtWeb(root: string): boolean {
  return nuxtConfigFile(root) !== undefined;
}
