/**
 * The process environment, read here and nowhere else in fw (a test keeps it so): everything fw
 * configures goes through `resolveConfig` (variables.ts says what each variable means), and what is
 * handed on as a whole — to a child process, to an app's declared secrets — is taken from here.
 */
export type Environment = Readonly<Record<string, string | undefined>>;

/** The live process environment (not a copy: a variable set later is seen by the next read). */
export function readEnvironment(): Environment {
  return process.env;
}

/** A child process's environment: this one's, with `extra` on top. */
export function childEnvironment(extra: Environment = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...extra };
}

/**
 * Sets `values` in the process environment until the returned function restores what was there —
 * for the red team, whose planted secrets must be reachable the way an app's own code reaches any.
 */
export function plantEnvironment(values: Readonly<Record<string, string>>): () => void {
  const saved = new Map(Object.keys(values).map((name) => [name, process.env[name]]));
  Object.assign(process.env, values);
  return () => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

/**
 * Runs `build` with `NODE_ENV=production` unless the environment asks for `development` on purpose
 * (Vite's documented way to make a development build): another value is only inherited — Vitest's
 * `test` — and would make a bundler ship React's development build. Restored after.
 */
export async function withProductionNodeEnv<T>(build: () => Promise<T>): Promise<T> {
  const current = process.env.NODE_ENV;
  if (current === undefined || current === 'development' || current === 'production') return build();
  const restore = plantEnvironment({ NODE_ENV: 'production' });
  try {
    return await build();
  } finally {
    restore();
  }
}
