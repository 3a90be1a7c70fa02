import { FwFailure } from '../core/failure.ts';
import { type Environment, readEnvironment } from './environment.ts';
import { VARIABLES, type Variable, type VariableName } from './variables.ts';

type Spec<N extends VariableName> = (typeof VARIABLES)[N];
type Parsed<S> = S extends { type: 'whole' } ? number : S extends { type: 'flag' } ? boolean : string;
/** A variable's value: typed by the table, never undefined when it has a default. */
export type ValueOf<N extends VariableName> = Spec<N> extends { default: unknown } ? Parsed<Spec<N>> : Parsed<Spec<N>> | undefined;

/** fw's configuration as one environment gives it. Values are parsed when first asked for. */
export interface FwConfig {
  /** The value of `name`, or its default; throws FwFailure `bad_config` naming the variable when malformed. */
  get<N extends VariableName>(name: N): ValueOf<N>;
  /** The value as set (trimmed; undefined when unset or empty), without a default or parsing. */
  given(name: VariableName): string | undefined;
  /** A variable the app declares for itself (an aiTool's `secrets`), not one of fw's. */
  appVariable(name: string): string | undefined;
  /** Every malformed variable that is set (for `fw config` and start-up checks). */
  problems(): FwFailure[];
}

/**
 * fw's configuration from `env` (default: the process environment).
 *
 * @example
 *   const config = resolveConfig();
 *   config.get('FW_MAX_CONNECTIONS') // 1024 unless set
 */
export function resolveConfig(env: Environment = readEnvironment()): FwConfig {
  const given = (name: VariableName): string | undefined => {
    const raw = env[name]?.trim();
    if (raw === undefined) return undefined;
    return raw === '' && !(VARIABLES[name] as Variable).emptyIsValue ? undefined : raw;
  };
  const get = <N extends VariableName>(name: N): ValueOf<N> => {
    const spec: Variable = VARIABLES[name];
    const raw = given(name);
    if (raw === undefined) return spec.default as ValueOf<N>;
    return parse(name, spec, raw) as ValueOf<N>;
  };
  return {
    get,
    given,
    appVariable: (name) => env[name],
    problems() {
      const found: FwFailure[] = [];
      for (const name of Object.keys(VARIABLES) as VariableName[]) {
        try {
          get(name);
        } catch (error) {
          if (error instanceof FwFailure) found.push(error);
          else throw error;
        }
      }
      return found;
    },
  };
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off']);

function parse(name: VariableName, spec: Variable, raw: string): string | number | boolean {
  if (spec.type === 'whole') {
    const min = spec.min ?? 1;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min) {
      throw new FwFailure('bad_config', `${name} must be a whole number ≥ ${min}, got "${raw.slice(0, 20)}".`, {
        suggestions: [spec.default === undefined ? `unset ${name}` : `unset ${name} for the default (${spec.default})`],
      });
    }
    return value;
  }
  if (spec.type === 'flag') {
    const lower = raw.toLowerCase();
    if (TRUE.has(lower)) return true;
    if (FALSE.has(lower)) return false;
    throw new FwFailure('bad_config', `${name} must be 1 or 0 (true/false), got "${raw.slice(0, 20)}".`, { suggestions: [`${name}=1`, `unset ${name} for the default (${spec.default ? 'on' : 'off'})`] });
  }
  return raw;
}

/** `source` as a config: a resolved one as is, an environment resolved (default: the process's). */
export function configOf(source?: FwConfig | Environment): FwConfig {
  if (source === undefined) return resolveConfig();
  return typeof source.get === 'function' && typeof source.given === 'function' ? (source as FwConfig) : resolveConfig(source as Environment);
}
