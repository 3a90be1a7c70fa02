import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The dashboard `fw dev` serves at /_fw/dashboard/ (runtime/http/dashboard-static.ts), prebuilt into
// dist/dashboard-ui by `npm run build` so apps install it ready to serve.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/_fw/dashboard/',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/dashboard-ui', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // One small script and one stylesheet: no source maps shipped in the package.
    sourcemap: false,
    modulePreload: { polyfill: false },
  },
});
