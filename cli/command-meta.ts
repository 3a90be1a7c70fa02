/**
 * What each of fw's commands is called and does, in one leaf module: the root help (`fw --help`) lists
 * them from here without loading a single command (each command module is imported only when it runs),
 * and each command's own `meta` comes from here too, so the two never disagree.
 */
const descriptions = {
  dev: 'Start the API runtime and, if the app has web/, the web dev server',
  create: 'Create a new fw app from a template',
  db: 'Database migrations',
  generate: 'Write src/fw/_generated/ (api.json, api.ts, agentContract.json, agentTools.json, capabilityMap.json, externalServices.json, frontendGraph.json) from the app',
  live: 'Live-query debugging, served by the running runtime',
  inspect: 'Show what fw knows about the app: its client surface, frontend graph, capability map, agent tools or crons',
  check: 'Check the app without changing it: generated files, frontend contract, boundaries, policies, types',
  verify: 'Run the gates of a level and report each: smoke (alias quick), standard (agent, the default), strict (release)',
  test: 'Run the app’s Vitest (vitest run) and record the run for fw repair diagnose; pass Vitest arguments after --',
  repair: 'Diagnose failures of the app in fw’s terms',
  make: 'Scaffold parts of an app',
  do: 'Repair the app',
  ai: 'AI tools, agents, traces and the red team',
  manifest: 'External service manifests (the external runtime protocol)',
  run: 'Call an external command: fw run <service.command> --args <json> (or fw run query <service.query>)',
  query: 'Call an external query: fw query <service.query> --args <json>',
  agent: 'Activity of external coding agents (Claude Code, Codex), redacted',
  worker: 'Run the outbox worker alone: deliver emitted events to actions (no HTTP server)',
  workflows: 'Workflow runs of the running runtime: list, show, cancel',
  schedule: 'Scheduled calls of the running runtime: list, cancel',
  mcp: 'MCP: serve (fw for coding agents on stdio), and the running runtime’s audit, approvals, approve, refuse',
  build: 'Bundle the backend (and web/ with Vite) for production into .fw/build/',
  start: 'Serve a fw build in production: API, live streams and the built web app',
  auth: 'Sign-in for a built app: fw auth token signs a token with the app\'s shared secret (HS256)',
  config: "Show fw's configuration as this environment sets it (secrets masked); exits 1 when a value is malformed",
} as const;

export type CommandName = keyof typeof descriptions;

export function commandMeta(name: CommandName): { name: string; description: string } {
  return { name, description: descriptions[name] };
}

export const commandNames = Object.keys(descriptions) as CommandName[];
