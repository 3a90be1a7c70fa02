/**
 * `fw make ai-chat <agent>`: scaffolds an agent (`src/ai/agents/<agent>.ts`) whose tools are the app's
 * commands, queries and liveQueries, and — for a React + Vite web/ — a chat component on
 * `POST /ai/agents/chat` with Approve / Deny for the tool calls that wait for approval.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { FwFailure } from '../../runtime/core/failure.ts';
import { entryNameFromFile } from '../../runtime/app/check-app.ts';
import { bridgeCandidates, importSpecifier, pascal } from '../../plugin/analyse/frontend/layout.ts';
import { listAiFiles, listEntryFiles } from '../../plugin/load-app.ts';
import { templateFile } from './make-ui.ts';
import { generateArtifacts } from '../../plugin/generate/generate.ts';
import { fwPackageRoot } from '../../plugin/package-root.ts';

export interface MakeAiChatOptions {
  root: string;
  /** The agent's name, or a file-style spelling of it (`support-bot` is `supportBot`). */
  agent: string;
  /** List what would be written; write nothing. */
  dryRun?: boolean;
  /** Replace the agent and component files when they exist. */
  yes?: boolean;
}

export interface MadeAiChat {
  agent: string;
  dryRun: boolean;
  /** Paths relative to the app root: the agent, the chat component, and any file edited (bridge, package.json). */
  files: string[];
  /** What to do next, one step a line. */
  next: string[];
  /** What was left out and why (no web/, a dependency kept at another version); absent when nothing was. */
  notes?: string[];
}

const agentName = /^[a-z][A-Za-z0-9]*$/;
const templateDir = '_ai-chat';
const agentDir = 'src/ai/agents';

/** The agent file, the chat component of the app's web/ and the dependencies it needs. */
export async function makeAiChat(options: MakeAiChatOptions): Promise<MadeAiChat> {
  const root = path.resolve(options.root);
  const name = entryNameFromFile((options.agent ?? '').trim());
  if (name === '') {
    throw new FwFailure('invalid_name', 'fw make ai-chat needs the agent’s name.', { suggestions: ['fw make ai-chat support'] });
  }
  if (!agentName.test(name)) {
    throw new FwFailure('invalid_name', `"${options.agent}" is not an agent name: use letters and digits, starting with a lowercase letter (support, supportBot, support-bot).`, {
      suggestions: ['fw make ai-chat support', 'fw make ai-chat support-bot  (becomes supportBot)'],
    });
  }
  const pkgFile = path.join(root, 'package.json');
  if (!existsSync(pkgFile)) {
    throw new FwFailure('not_an_app', `${root} has no package.json: run fw make ai-chat in an fw app.`, { suggestions: ['fw create my-app', `fw make ai-chat ${name} --root <app>`] });
  }
  const web = webLayout(root);
  if (web === 'nuxt') {
    const { ai } = fwAiVersions();
    throw new FwFailure(
      'unsupported_web',
      `fw make ai-chat makes React chat components only: no @ai-sdk/vue release is built on ai ${ai}, the AI SDK fw runs, and a chat UI on another ai version does not match fw's UI message stream.`,
      {
        suggestions: [
          `Write ${agentDir}/${name}.ts by hand: export default agent({ model, instructions, tools: { …entries }, stopWhen })`,
          'Call POST /ai/agents/run (JSON, resumable with approval decisions) from the Nuxt app',
        ],
      },
    );
  }

  const component = `${pascal(name)}Chat`;
  const agentFile = `${agentDir}/${name}.ts`;
  const componentFile = web === 'vite' ? `web/src/components/${component}.tsx` : undefined;
  const replaced = await refuseExisting(root, name, [agentFile, ...(componentFile ? [componentFile] : [])], options);

  const notes: string[] = [];
  // A dry run is how to see what a refused run would do: it says what the real run needs instead of refusing.
  if (replaced.length > 0 && options.dryRun && !options.yes) notes.push(`${replaced.join(' and ')} already exist${replaced.length === 1 ? 's' : ''}: the real run needs --yes to replace ${replaced.length === 1 ? 'it' : 'them'}.`);
  const files: Record<string, string> = { [agentFile]: await agentSource(root, name) };
  const next: string[] = [];
  let pkg: Record<string, any> | undefined;
  if (componentFile) {
    const bridge = bridgeCandidates.vite.find((file) => existsSync(path.join(root, file))) ?? bridgeCandidates.vite[0]!;
    files[componentFile] = fill(await templateFile(templateDir, 'Chat.tsx'), {
      __AGENT__: name,
      __COMPONENT__: component,
      __TITLE__: humanize(name),
      __BRIDGE__: importSpecifier(componentFile, bridge, true),
    });
    const bridged = await bridgeWithRuntime(root, bridge);
    if (bridged.source !== undefined) files[bridge] = bridged.source;
    if (bridged.note) notes.push(bridged.note);
    pkg = await withChatDependencies(pkgFile, notes);
    next.push('npm install');
    next.push(`Mount it under FwProvider, e.g. in web/src/App.tsx: import { ${component} } from '${importSpecifier('web/src/App.tsx', componentFile, true)}'; and render <${component} />`);
  } else {
    notes.push(
      existsSync(path.join(root, 'web'))
        ? 'web/ is neither a Vite app (web/src/) nor a Nuxt app: wrote the agent only; call POST /ai/agents/chat with { agent } from your UI.'
        : `The app has no web/: wrote the agent only. For a chat UI, add web/ (fw make ui --framework vite), then run fw make ai-chat ${name} --yes (it rewrites the agent too).`,
    );
  }
  next.push(`fw dev, then chat with it at POST /ai/agents/chat (body: { agent: '${name}', messages })`);
  next.push('Set AI_GATEWAY_API_KEY to use the real model; without it (or with FW_AI=mock) fw answers with its scripted mock model');

  const list = [...Object.keys(files).sort(), ...(pkg ? ['package.json'] : [])];
  const made: MadeAiChat = { agent: name, dryRun: Boolean(options.dryRun), files: list, next, ...(notes.length ? { notes } : {}) };
  if (options.dryRun) return made;
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), content);
  }
  if (pkg) await writeFile(pkgFile, `${JSON.stringify(pkg, null, 2)}\n`);
  // The new agent is part of the contract (agentContract.json, capabilityMap.json): regenerate now, so
  // fw check passes right after; when the app cannot load yet, the first next step says what to run.
  try {
    await generateArtifacts({ root });
  } catch (error) {
    made.next.unshift(`fw generate  (src/fw/_generated/ is not up to date yet: ${error instanceof Error ? error.message.split('\n')[0] : String(error)})`);
  }
  return made;
}

function webLayout(root: string): 'vite' | 'nuxt' | 'none' {
  if (['ts', 'js', 'mjs', 'mts'].some((ext) => existsSync(path.join(root, `web/nuxt.config.${ext}`)))) return 'nuxt';
  if (existsSync(path.join(root, 'web/src'))) return 'vite';
  return 'none';
}

/**
 * Refuses, unless `yes` or `dryRun`, when a target file exists, and always when another file already
 * defines an agent of this name. Returns the target files that exist.
 */
async function refuseExisting(root: string, name: string, targets: string[], options: MakeAiChatOptions): Promise<string[]> {
  const sameName = (await listAiFiles(root)).filter((f) => f.kind === 'agent' && f.name === name && f.file !== targets[0]).map((f) => f.file);
  if (sameName.length > 0) {
    // Two files of one agent name never load, so --yes cannot help here.
    throw new FwFailure('file_exists', `${sameName.join(', ')} already defines the agent "${name}".`, {
      suggestions: [`Edit ${sameName[0]}`, `fw make ai-chat ${name}2 --dry-run  (another name)`],
    });
  }
  const existing = targets.filter((file) => existsSync(path.join(root, file)));
  if (existing.length > 0 && !options.yes && !options.dryRun) {
    throw new FwFailure('file_exists', `${existing.join(' and ')} already exist${existing.length === 1 ? 's' : ''}; fw make ai-chat never overwrites files without --yes.`, {
      suggestions: [`fw make ai-chat ${name} --dry-run  (see the files it writes)`, `fw make ai-chat ${name} --yes  (replace them)`],
    });
  }
  return existing;
}

/** Words that cannot name an import binding; an entry with such a name is imported as `<name>Entry`. */
const reserved = new Set(
  (
    'agent await break case catch class const continue debugger default delete do else enum export extends false finally for function if implements ' +
    'import in instanceof interface let new null package private protected public return static super switch this throw true try typeof var void while with yield'
  ).split(' '),
);

/** The agent file: every command, query and liveQuery of the app as a tool, under its entry name. */
async function agentSource(root: string, name: string): Promise<string> {
  const seen = new Set<string>();
  const tools: Array<{ name: string; binding: string; from: string }> = [];
  for (const entry of await listEntryFiles(root)) {
    if (!entry.kinds.some((kind) => kind === 'command' || kind === 'query' || kind === 'liveQuery')) continue;
    // A name that is no identifier or tool name fails to load anyway (fw check names it); leave it out.
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(entry.name) || entry.name.length > 64 || seen.has(entry.name)) continue;
    seen.add(entry.name);
    const from = importSpecifier(`${agentDir}/${name}.ts`, entry.file, true);
    tools.push({ name: entry.name, binding: reserved.has(entry.name) ? `${entry.name}Entry` : entry.name, from });
  }
  const tsExtensions = await importsTsExtensions(root);
  const specifier = (from: string) => (tsExtensions ? from : from.replace(/\.ts$/, '.js').replace(/\.mts$/, '.mjs'));
  const imports = tools.map((t) => `import ${t.binding} from '${specifier(t.from)}';\n`).join('');
  const members = tools.map((t) => (t.binding === t.name ? t.name : `${t.name}: ${t.binding}`));
  const oneLine = `{ ${members.join(', ')} }`;
  const toolsLiteral = members.length === 0 ? '{}' : oneLine.length <= 80 ? oneLine : `{\n${members.map((m) => `    ${m},`).join('\n')}\n  }`;
  const template = await templateFile(templateDir, 'agent.ts');
  return fill(template.replace('__TOOL_IMPORTS__\n', imports), { __AGENT__: name, __TOOLS__: toolsLiteral });
}

/**
 * Whether the app's backend tsconfig lets imports name `.ts` files (as fw's templates do). Without it
 * the agent imports `.js`, which `nodenext` typechecks against the `.ts` file and Vite and rolldown
 * resolve to it.
 */
async function importsTsExtensions(root: string): Promise<boolean> {
  const file = path.join(root, 'tsconfig.json');
  if (!existsSync(file)) return false;
  return /"(?:allowImportingTsExtensions|rewriteRelativeImportExtensions)"\s*:\s*true/.test(await readFile(file, 'utf8'));
}

/**
 * The bridge with `useFwRuntime` among the hooks it exports from `createFwReact(api)`: unchanged
 * (source undefined) when it has it, rewritten when it has the template's one destructuring line,
 * otherwise left alone with a note saying what to add.
 */
async function bridgeWithRuntime(root: string, bridge: string): Promise<{ source?: string; note?: string }> {
  const file = path.join(root, bridge);
  const add = `export useFwRuntime from ${bridge}: export const { …, useFwRuntime } = createFwReact(api);`;
  if (!existsSync(file)) return { note: `${bridge} is missing; the chat component imports useFwRuntime from it. Run fw do connect-ui, then ${add}` };
  const source = await readFile(file, 'utf8');
  if (/\buseFwRuntime\b/.test(source)) return {};
  const destructuring = /export const \{([^}]*)\} = createFwReact\(/;
  const match = destructuring.exec(source);
  if (!match) return { note: `${bridge} does not export its hooks as \`export const { … } = createFwReact(api)\`; ${add}` };
  const names = match[1]!.trim().replace(/,$/, '');
  return { source: source.replace(destructuring, `export const { ${names}, useFwRuntime } = createFwReact(`) };
}

/** The app's package.json with `ai` and `@ai-sdk/react` at the versions fw runs; existing entries are kept (and noted when they differ). */
async function withChatDependencies(pkgFile: string, notes: string[]): Promise<Record<string, any>> {
  const pkg = JSON.parse(await readFile(pkgFile, 'utf8')) as Record<string, any>;
  const dependencies = { ...(pkg.dependencies as Record<string, string> | undefined) };
  const versions = fwAiVersions();
  for (const [dep, version] of [['ai', versions.ai], ['@ai-sdk/react', versions.react]] as const) {
    const current = dependencies[dep] ?? (pkg.devDependencies as Record<string, string> | undefined)?.[dep];
    if (current === undefined) dependencies[dep] = version;
    else if (current !== version) notes.push(`package.json keeps ${dep} ${current}; fw runs ${dep} ${version}, and a chat UI on another AI SDK version may not match fw's message stream.`);
  }
  return { ...pkg, dependencies: Object.fromEntries(Object.entries(dependencies).sort(([a], [b]) => a.localeCompare(b))) };
}

/**
 * The exact versions of `ai` and `@ai-sdk/react` that fw itself uses: the installed ones as resolved
 * from fw's package root, else the lowest version of the range fw's package.json declares (its
 * devDependency `@ai-sdk/react` is not installed with fw). An installed `@ai-sdk/react` counts only
 * when it is built on that same `ai`.
 */
function fwAiVersions(): { ai: string; react: string } {
  const manifestFile = path.join(fwPackageRoot(), 'package.json');
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Record<string, Record<string, string> | undefined>;
  const installed = (dep: string): { version: string; dependencies?: Record<string, string> } | undefined => {
    try {
      return JSON.parse(readFileSync(createRequire(manifestFile).resolve(`${dep}/package.json`), 'utf8'));
    } catch {
      return undefined;
    }
  };
  const declared = (dep: string): string => {
    const range = manifest.dependencies?.[dep] ?? manifest.devDependencies?.[dep];
    const lowest = range === undefined ? undefined : /\d+\.\d+\.\d+[^\s|]*/.exec(range)?.[0];
    if (lowest === undefined) throw new FwFailure('internal', `fw cannot tell which ${dep} version it uses: it is neither installed nor in fw's package.json.`);
    return lowest;
  };
  const ai = installed('ai')?.version ?? declared('ai');
  const react = installed('@ai-sdk/react');
  return { ai, react: react?.dependencies?.ai === ai ? react.version : declared('@ai-sdk/react') };
}

/** Replaces each `__TOKEN__` of a template; a token left over means the template and this code disagree. */
function fill(template: string, values: Record<string, string>): string {
  let out = template;
  for (const [token, value] of Object.entries(values)) out = out.split(token).join(value);
  const left = /__[A-Z_]+__/.exec(out);
  if (left) throw new Error(`fw: template placeholder ${left[0]} was not filled.`);
  return out;
}

function humanize(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
