import { existsSync } from 'node:fs';
import module from 'node:module';
import { glob, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type PackageBin, resolvePackageBin, runNodeScript, type NodeScriptOptions } from './app-bin.ts';
import { LAST_TEST_RUN_FILE, type LastTestRun } from './test-reporter.ts';
import { parseTestProgressEvent, type TestProgressEvent } from './test-progress.ts';
import { readEnvironment } from '../../runtime/config/environment.ts';

/** Whether an app's tests can run: they exist and its Vitest is installed. */
export type AppTestsPlan =
  | { run: true; vitest: PackageBin; reason?: undefined }
  | { run: false; kind: 'no_tests' | 'no_vitest'; reason: string };

const testFilePattern = '**/*.{test,spec}.{ts,tsx,mts,cts,js,jsx,mjs,cjs}';
const ignoredDirs = new Set(['node_modules', 'dist', '.fw', '.git', '.nuxt', '.output']);

/**
 * Decides whether to run the app's tests: it has test files (Vitest's default pattern) or a `test`
 * script that runs Vitest, and Vitest is installed in the app (fw does not lend its own: the app's
 * tests are written against the app's Vitest).
 */
export async function planAppTests(root: string): Promise<AppTestsPlan> {
  const script = await testScript(root);
  let hasFiles = false;
  for await (const _ of glob(testFilePattern, { cwd: root, exclude: (entry) => ignoredDirs.has(path.basename(String(entry))) })) {
    hasFiles = true;
    break;
  }
  if (!hasFiles && !script?.includes('vitest')) {
    return { run: false, kind: 'no_tests', reason: `No test files (${testFilePattern}) and no \`test\` script running vitest.` };
  }
  const vitest = resolvePackageBin(root, 'vitest', 'vitest');
  if (!vitest) return { run: false, kind: 'no_vitest', reason: 'The app has tests but Vitest is not installed in it (npm install -D vitest).' };
  return { run: true, vitest };
}

export interface AppTestsResult {
  exitCode: number;
  /** What the fw reporter recorded; undefined when Vitest ended before reporting (e.g. a broken config). */
  run: LastTestRun | undefined;
  /** Vitest's output when captured. */
  stdout: string;
  stderr: string;
}

/**
 * `vitest run` in the app with the default reporter and fw's (which records `.fw/last-test-run.json`),
 * plus `args` (filters, `-t <name>`, …). With `watch`, `vitest watch`: it reruns the affected tests on
 * every change, fw's reporter records each run, and this resolves when Vitest is stopped.
 *
 * @example
 *   const { exitCode, run } = await runAppTests(vitest, { root, args: ['tests/notes.test.ts'], output: 'stderr' });
 */
export async function runAppTests(
  vitest: PackageBin,
  options: {
    root: string;
    args?: readonly string[];
    output?: Exclude<NodeScriptOptions['output'], 'lines'>;
    /** With `output: 'inherit'`: whether Vitest may colour (false: NO_COLOR, as for a pipe; default: its own choice). */
    colour?: boolean;
    watch?: boolean;
    progress?: AppTestsProgress;
  },
): Promise<AppTestsResult> {
  const root = path.resolve(options.root);
  // A stale record must not be read as this run's when Vitest fails before reporting.
  await rm(path.join(root, LAST_TEST_RUN_FILE), { force: true });
  const mode = options.watch ? 'watch' : 'run';
  const { progress } = options;
  const reporters = ['--reporter=default', `--reporter=${reporterFile('test-reporter')}`, ...(progress ? [`--reporter=${reporterFile('test-progress-reporter')}`] : [])];
  const result = await runNodeScript(vitest.file, [mode, ...reporters, ...(options.args ?? [])], {
    cwd: root,
    env: vitestEnv(progress ? (progress.colour ? 'forced' : 'none') : options.output === 'capture' || options.output === undefined || options.colour === false ? 'none' : 'its-own'),
    ...(progress
      ? {
          // Vitest's output comes through fw, line by line, so the status line can stay below it.
          output: 'lines',
          onLine: progress.onLine,
          onFd3Line: (line: string) => {
            const event = parseTestProgressEvent(line);
            if (event) progress.onEvent(event);
          },
        }
      : { output: options.output ?? 'capture' }),
  });
  return { exitCode: result.code, run: await readLastTestRun(root), stdout: result.stdout, stderr: result.stderr };
}

/** Following a run as it goes (fw test on a terminal): Vitest's lines and the progress reporter's events. */
export interface AppTestsProgress {
  onEvent(event: TestProgressEvent): void;
  onLine(line: string, stream: 'stdout' | 'stderr'): void;
  /** Vitest's own output in colour (it writes to a pipe, which it would not colour by itself). */
  colour: boolean;
}

/** The last recorded run of the app, or undefined when there is none. */
export async function readLastTestRun(root: string): Promise<LastTestRun | undefined> {
  const file = path.join(path.resolve(root), LAST_TEST_RUN_FILE);
  if (!existsSync(file)) return undefined;
  return JSON.parse(await readFile(file, 'utf8')) as LastTestRun;
}

/** One of fw's reporters next to this module: `.ts` in a checkout, `.js` when built. */
function reporterFile(name: 'test-reporter' | 'test-progress-reporter'): string {
  const here = fileURLToPath(import.meta.url);
  return path.join(path.dirname(here), `${name}${path.extname(here)}`);
}

/**
 * The environment minus a surrounding Vitest's worker variables (fw run from a test), with colour
 * `none` (captured output), Vitest's `its-own` choice (it writes to fw's stdout or stderr), or `forced`
 * (it writes to a pipe that fw relays to a terminal that takes colour).
 */
function vitestEnv(colour: 'none' | 'its-own' | 'forced'): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(readEnvironment())) if (!key.startsWith('VITEST')) env[key] = value;
  // fw's own compile cache (cli/bin.ts) for Vitest and its workers as well: they load the same modules
  // on every run (~8 % less CPU for a run of the template's test).
  env.NODE_COMPILE_CACHE ??= module.getCompileCacheDir?.();
  if (colour === 'none') return { ...env, NO_COLOR: '1', FORCE_COLOR: undefined };
  return colour === 'forced' ? { ...env, FORCE_COLOR: '1', NO_COLOR: undefined } : env;
}

async function testScript(root: string): Promise<string | undefined> {
  try {
    const json = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
    return json.scripts?.test;
  } catch {
    return undefined;
  }
}
