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
    // Floors inside runtime/ (docs/architecture.md), bottom to top: core → config → telemetry → db → entry →
    // the features (auth, live, outbox, workflows, schedule, ai, external) → app → http → the faces at its root
    // (index.ts, server.ts, create-runtime.ts). A folder imports only folders below it, and a feature no
    // other feature: so any cycle between runtime/ folders breaks one of these rules.
    {
      name: 'runtime-core-is-a-leaf',
      severity: 'error',
      comment: 'runtime/core/ (the define API, entry and app types, errors and codes, trace ids) imports nothing else of fw.',
      from: { path: '^runtime/core/' },
      to: { path: '^(runtime|client|plugin|toolchain|cli|testing)/', pathNot: '^runtime/core/' },
    },
    {
      name: 'runtime-config-above-core',
      severity: 'error',
      comment: 'runtime/config/ (the variables, the one reader of the environment) stands on core alone, so every floor may read its configuration.',
      from: { path: '^runtime/config/' },
      to: { path: '^runtime/', pathNot: '^runtime/(core|config)/' },
    },
    {
      name: 'runtime-telemetry-above-core',
      severity: 'error',
      comment: 'runtime/telemetry/ (spans, metrics) stands on core and config alone: what it reports of others is handed to it (registerRuntimeGauges).',
      from: { path: '^runtime/telemetry/' },
      to: { path: '^runtime/', pathNot: '^runtime/(core|config|telemetry)/' },
    },
    {
      name: 'runtime-db-below-features',
      severity: 'error',
      comment: 'runtime/db/ owns every table and its DDL (the live capture, the outbox rows too) and is below every feature.',
      from: { path: '^runtime/db/' },
      to: { path: '^runtime/', pathNot: '^runtime/(core|config|telemetry|db)/' },
    },
    {
      name: 'runtime-entry-below-features',
      severity: 'error',
      comment: 'runtime/entry/ is the one entry pipeline; what it needs of the features (ctx.startWorkflow, ctx.ai) is passed in as EntryServices.',
      from: { path: '^runtime/entry/' },
      to: { path: '^runtime/', pathNot: '^runtime/(core|config|telemetry|db|entry)/' },
    },
    {
      name: 'runtime-features-apart',
      severity: 'error',
      comment: 'The features reach each other only through interfaces passed in by runtime/app/ (e.g. the worker gets a RowDelivery), never by importing each other.',
      from: { path: '^runtime/(auth|live|outbox|workflows|schedule|ai|external)/' },
      to: { path: '^runtime/(auth|live|outbox|workflows|schedule|ai|external|app|http)/', pathNot: '^runtime/$1/' },
    },
    {
      name: 'runtime-app-below-http',
      severity: 'error',
      comment: 'runtime/app/ assembles an app\'s services from the features; http/ serves them and sits above it.',
      from: { path: '^runtime/app/' },
      to: { path: '^runtime/(http/|[^/]+$)' },
    },
    {
      name: 'runtime-http-below-faces',
      severity: 'error',
      comment: 'runtime/http/ is the top floor of the folders; only the faces at runtime/\'s root import it.',
      from: { path: '^runtime/http/' },
      to: { path: '^runtime/[^/]+$' },
    },
    {
      name: 'client-imports-no-toolchain',
      severity: 'error',
      comment: 'client/ runs in browsers: it may not import the compiler, the toolchain or the CLI.',
      from: { path: '^client/' },
      to: { path: '^(plugin|toolchain|cli)/' },
    },
    {
      name: 'client-imports-only-runtime-core',
      severity: 'error',
      comment: 'client/ shares the wire with the runtime through runtime/core/ alone (error codes, the live protocol), which imports nothing of node or of fw.',
      from: { path: '^client/' },
      to: { path: '^runtime/', pathNot: '^runtime/core/' },
    },
    {
      name: 'dashboard-stands-alone',
      severity: 'error',
      comment: 'dashboard/ is the web app fw dev serves prebuilt (dist/dashboard-ui/): it talks to fw over HTTP only, and nothing of fw imports it.',
      from: { path: '^dashboard/' },
      to: { path: '^(runtime|client|plugin|toolchain|cli|testing)/' },
    },
    {
      name: 'nothing-imports-the-dashboard',
      severity: 'error',
      comment: 'The runtime serves the built dashboard as files (runtime/http/dashboard-static.ts), never its sources.',
      from: { path: '^(runtime|client|plugin|toolchain|cli|testing)/' },
      to: { path: '^dashboard/' },
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
