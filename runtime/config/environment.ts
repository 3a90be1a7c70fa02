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
