import type { AgentDefinition, AiToolDefinition } from './ai-definitions.ts';
import type { EntryDefinition, PolicyCheck } from './entry-types.ts';
import type { Manifest } from './external-manifest.ts';
import type { Schema } from './schema.ts';
import type { CronDefinition } from './crons.ts';

// The shape of a loaded app, below every module that serves one (registry, execute, ai, external),
// so they can all name it without importing each other.

/** A loaded app: its entries by kind and name, its named policies and its schema. */
export interface AppDefinition {
  entries: Map<string, EntryDefinition>;
  policies: Record<string, PolicyCheck>;
  schema: Schema;
  /** Agents by name (`src/ai/agents/`); absent means none. */
  agents?: Map<string, AgentDefinition>;
  /** aiTools by name (`src/ai/tools/`); absent means none. */
  tools?: Map<string, AiToolDefinition<any, any>>;
  /** External services (`fw.manifest.json`, `.fw/external-manifests.json`); absent means none. */
  external?: ExternalService[];
  /**
   * Where the entries were loaded from (the app root, and each entry's file relative to it), so a
   * failure can point at its handler's source; absent for apps assembled in code.
   */
  sources?: { root: string; files: Map<string, string> };
  /** Crons by name (`src/crons.ts`); absent means none. */
  crons?: Map<string, CronDefinition>;
}

/** An external service the app uses: its validated manifest, where it came from, and how to run it. */
export interface ExternalService {
  manifest: Manifest;
  /** `fw.manifest.json` or `.fw/external-manifests.json`, relative to the app root. */
  source: string;
  /** The directory a stdio service starts in (the app root), so relative commandArgs resolve there. */
  cwd: string;
}
