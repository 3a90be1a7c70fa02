/**
 * The import rules of fw's folders (docs/architecture.md), checked by `npm run lint` (run by `npm test`
 * and CI): no cycles, type-only imports included, and nothing imports upward — runtime/ is the floor,
 * client/ stands beside it, plugin/ (the compiler and the Vite plugin) above both, toolchain/ (one folder
 * per fw command with logic) above that, cli/ on top.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle, also through `import type`: move the shared types to a leaf module both can import.',
      from: { path: '^(runtime|client|plugin|toolchain|cli)/' },
      to: { circular: true },
    },
    {
      name: 'runtime-imports-nothing-above',
      severity: 'error',
      comment: 'runtime/ serves apps in production: it may not import the compiler, the toolchain, the client or the CLI.',
      from: { path: '^runtime/' },
      to: { path: '^(plugin|toolchain|client|cli)/' },
    },
    {
      name: 'client-imports-no-toolchain',
      severity: 'error',
      comment: 'client/ runs in browsers: it may not import the compiler, the toolchain or the CLI.',
      from: { path: '^client/' },
      to: { path: '^(plugin|toolchain|cli)/' },
    },
    {
      name: 'plugin-imports-no-toolchain',
      severity: 'error',
      comment: 'plugin/ is the compiler and the Vite plugin; the commands in toolchain/ build on it, never the reverse.',
      from: { path: '^plugin/' },
      to: { path: '^(toolchain|cli)/' },
    },
    {
      name: 'toolchain-imports-no-cli',
      severity: 'error',
      comment: 'The CLI is a thin shell over toolchain/ and plugin/; they never import it.',
      from: { path: '^toolchain/' },
      to: { path: '^cli/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|templates)/|\\.test\\.tsx?$|\\.typetest\\.ts$' },
    // `import type` counts: a cycle of types is still a cycle.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs'] },
  },
};
