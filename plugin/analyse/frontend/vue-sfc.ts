import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** What the analysis needs from a `.vue` file: its script blocks and its template's elements, with offsets into the file. */
export interface VueBlocks {
  scripts: Array<{ content: string; offset: number; lang: 'ts' | 'tsx' | 'js' | 'jsx'; setup: boolean }>;
  elements: VueElement[];
  errors: Array<{ message: string; offset: number }>;
}

export interface VueElement {
  tag: string;
  offset: number;
  isComponent: boolean;
  /** `@submit.prevent="addNote"` → `{ event: 'submit', expression: 'addNote', offset }` (offset of the expression). */
  handlers: Array<{ event: string; expression: string; offset: number }>;
}

/** The part of `@vue/compiler-sfc` fw calls (STYLE 9: outside systems behind small interfaces). */
export interface SfcCompiler {
  parse(source: string, options: { filename: string }): { descriptor: SfcDescriptor; errors: unknown[] };
}
interface SfcBlock {
  content: string;
  lang?: string;
  loc: { start: { offset: number } };
}
interface SfcDescriptor {
  script: SfcBlock | null;
  scriptSetup: SfcBlock | null;
  template: { ast?: { children: TemplateNode[] } } | null;
}
interface TemplateNode {
  type: number;
  tag?: string;
  tagType?: number;
  loc: { start: { offset: number } };
  props?: Array<{ type: number; name: string; arg?: { content: string }; exp?: { content: string; loc: { start: { offset: number } } } }>;
  children?: TemplateNode[];
  branches?: TemplateNode[];
}

const ELEMENT = 1;
const DIRECTIVE = 7;
const COMPONENT = 1;

/**
 * Finds Vue's SFC compiler: the app's own `vue/compiler-sfc` (every Vue app has `vue`), else the one
 * next to fw. Null when neither is installed; `.vue` files then get a parse_error saying so.
 */
export async function loadSfcCompiler(root: string): Promise<SfcCompiler | null> {
  for (const base of [path.join(root, 'web', 'package.json'), path.join(root, 'package.json'), import.meta.filename]) {
    try {
      const resolved = createRequire(base).resolve('vue/compiler-sfc');
      return (await import(pathToFileURL(resolved).href)) as SfcCompiler;
    } catch {
      // Not installed from there: try the next place.
    }
  }
  return null;
}

/** Splits a `.vue` file into its script blocks and template elements with @vue/compiler-sfc. */
export function readVueFile(compiler: SfcCompiler, file: string, source: string): VueBlocks {
  const { descriptor, errors } = compiler.parse(source, { filename: file });
  const scripts: VueBlocks['scripts'] = [];
  for (const [block, setup] of [[descriptor.script, false], [descriptor.scriptSetup, true]] as const) {
    if (block === null) continue;
    scripts.push({ content: block.content, offset: block.loc.start.offset, lang: scriptLang(block.lang), setup });
  }
  const elements: VueElement[] = [];
  const visit = (node: TemplateNode) => {
    if (node.type === ELEMENT && node.tag !== undefined) {
      const handlers: VueElement['handlers'] = [];
      for (const prop of node.props ?? []) {
        if (prop.type !== DIRECTIVE || prop.name !== 'on' || !prop.arg || !prop.exp) continue;
        handlers.push({ event: prop.arg.content, expression: prop.exp.content, offset: prop.exp.loc.start.offset });
      }
      elements.push({ tag: node.tag, offset: node.loc.start.offset, isComponent: node.tagType === COMPONENT, handlers });
    }
    for (const child of node.children ?? []) visit(child);
    for (const branch of node.branches ?? []) visit(branch);
  };
  for (const child of descriptor.template?.ast?.children ?? []) visit(child);
  return {
    scripts,
    elements,
    errors: errors.map((error) => {
      const e = error as { message?: string; loc?: { start?: { offset?: number } } };
      return { message: e.message ?? String(error), offset: e.loc?.start?.offset ?? 0 };
    }),
  };
}

function scriptLang(lang: string | undefined): VueBlocks['scripts'][number]['lang'] {
  return lang === 'ts' || lang === 'tsx' || lang === 'jsx' ? lang : 'js';
}
