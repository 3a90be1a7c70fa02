import type { FwConfig } from './resolve-config.ts';
import { VARIABLES, type Variable, type VariableName } from './variables.ts';

export interface ConfigRow {
  name: VariableName;
  group: Variable['group'];
  type: Variable['type'];
  /** What fw uses: the value set, else the default; a secret's is masked (`set, 24 characters`). */
  value: string | number | boolean | null;
  source: 'environment' | 'default' | 'unset';
  /** Why a value that is set cannot be used. */
  problem?: string;
  doc: string;
}

/** Every variable with the value `config` resolves it to; never a secret's text. */
export function describeConfig(config: FwConfig): ConfigRow[] {
  return (Object.entries(VARIABLES) as Array<[VariableName, Variable]>).map(([name, spec]) => {
    const given = config.given(name);
    const row: ConfigRow = { name, group: spec.group, type: spec.type, value: null, source: given === undefined ? (spec.default === undefined ? 'unset' : 'default') : 'environment', doc: spec.doc };
    try {
      const value = config.get(name);
      row.value = spec.type === 'secret' && given !== undefined ? masked(given) : (value ?? null);
    } catch (error) {
      row.problem = (error as Error).message;
      row.value = spec.type === 'secret' ? masked(given!) : null;
    }
    return row;
  });
}

/** A secret's value as shown: that it is set and how long it is, nothing of its text. */
function masked(value: string): string {
  return `•••• (set, ${value.length} characters)`;
}

const GROUPS: Record<Variable['group'], string> = {
  server: 'Server',
  database: 'Database',
  auth: 'Authentication',
  ai: 'AI',
  telemetry: 'Telemetry',
  dev: 'Development',
};

/** The table of docs/config.md (between its generated markers), from the same variables. */
export function renderConfigDocs(): string {
  const lines: string[] = [];
  for (const [group, title] of Object.entries(GROUPS)) {
    lines.push(`### ${title}`, '', '| variable | type | default | |', '| --- | --- | --- | --- |');
    for (const [name, spec] of Object.entries(VARIABLES) as Array<[VariableName, Variable]>) {
      if (spec.group !== group) continue;
      const shown = spec.default === undefined ? '' : spec.type === 'flag' ? (spec.default ? 'on' : 'off') : `\`${spec.default}\``;
      const type = spec.type === 'whole' ? `whole ≥ ${spec.min ?? 1}` : spec.type;
      const doc = spec.see ? `${spec.doc} — [more](${spec.see})` : spec.doc;
      lines.push(`| \`${name}\` | ${type} | ${shown} | ${doc.replaceAll('|', '\\|')} |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

/** `fw config`'s text: one line per variable that is set or has a default, grouped; problems marked. */
export function formatConfig(rows: readonly ConfigRow[], options: { all?: boolean } = {}): string {
  const lines: string[] = [];
  for (const [group, title] of Object.entries(GROUPS)) {
    const shown = rows.filter((row) => row.group === group && (options.all || row.source !== 'unset'));
    if (shown.length === 0) continue;
    lines.push(`${title}:`);
    const width = Math.max(...shown.map((row) => row.name.length));
    for (const row of shown) {
      const value = row.value === null ? '(unset)' : String(row.value);
      lines.push(`  ${row.name.padEnd(width)}  ${value}${row.source === 'default' ? '  (default)' : ''}${row.problem ? `  ✖ ${row.problem}` : ''}`);
    }
  }
  return lines.join('\n');
}
