/**
 * fw's scripted mock model: a real `LanguageModelV4` that answers without a provider key, so tests and
 * the red team drive the real AI SDK tool loop (tools, tool approval, structured output) offline. It is
 * deterministic: the same prompt always gets the same answer, tool-call ids and usage.
 *
 * What it answers when no script decides (first rule that applies):
 * 1. Structured output requested (`Output.object(...)` and friends): a JSON value built from the schema
 *    by {@link exampleFromSchema}; it validates, so `result.output` parses.
 * 2. The prompt ends with tool results (the loop came back after calling tools): a final text with one
 *    line per result — `listNotes: [{"id":1}]` (JSON cut at 2,000 characters), `createNote: not approved`
 *    when the call was denied, `createNote failed: <message>` when the tool threw.
 * 3. The last user message names tools: each tool named as a whole word is called once, in order of first
 *    mention (longer names win, so `listNotesByTag` is not also `listNotes`). A JSON object right after the
 *    name is the input — `createNote {"title":"Groceries"}` — otherwise the input is an example of the
 *    tool's input schema, so the call validates. Text inside that JSON does not count as a mention.
 * 4. Otherwise the text `Mock answer: no tool was requested.` The prompt is never echoed.
 *
 * `toolChoice: 'none'` hides the tools from rule 3 and from scripts; a specific `toolChoice` offers just
 * that tool. A script (`createMockModel({ script })`) decides any turn it wants and returns `undefined`
 * for the rest. Tool-call ids are `mock-<turn>-<index>`, unique within a conversation; usage counts a
 * token per 4 characters. The response timestamp is left to the AI SDK.
 */
import type {
  JSONSchema7,
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4ToolResultOutput,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';

/** A function tool offered to the model in this call. */
export interface MockToolInfo {
  name: string;
  description?: string;
  inputSchema: JSONSchema7;
}

/** A tool result the prompt carries, unwrapped from the V4 tool-result output. */
export interface MockToolOutcome {
  toolName: string;
  toolCallId: string;
  /** The JSON value or text the tool returned; the error value or text; for `denied`, the denial reason if any. */
  output: unknown;
  status: 'ok' | 'error' | 'denied';
}

/** What a script sees of one model call. */
export interface MockTurnInput {
  /** The raw prompt. */
  prompt: LanguageModelV4Prompt;
  /** Function tools offered this call (after `toolChoice`). */
  tools: MockToolInfo[];
  /** Text of the last user message ('' if none). */
  lastUserText: string;
  /** Tool results that came after the model's last assistant message (i.e. answers to its last tool calls), in order. */
  toolOutcomes: MockToolOutcome[];
  /** All text in the prompt (system, user, assistant text, tool outputs stringified) — adversarial scripts look for injected instructions here. */
  allText: string;
  /** JSON schema when structured output is requested (responseFormat type 'json'; `{}` when it has no schema), else undefined. */
  outputSchema: JSONSchema7 | undefined;
  /** Number of assistant messages already in the prompt (0 on the first step). */
  turn: number;
}

/** One answer of the model: text, tool calls (with optional text before them), or a structured value. */
export type MockTurn =
  | { text: string }
  | { toolCalls: Array<{ toolName: string; input: unknown }>; text?: string }
  | { object: unknown };

/** Return undefined to fall back to the default behaviour. */
export type MockScript = (input: MockTurnInput) => MockTurn | undefined;

export interface MockModelOptions {
  /** Default 'fw-mock'. */
  modelId?: string;
  script?: MockScript;
}

const maxOutputJson = 2_000;

/**
 * A deterministic `LanguageModelV4` (provider `fw-mock`) for `generateText`/`streamText` without a key.
 *
 * @example
 *   const model = createMockModel({
 *     script: ({ turn, allText }) => (turn === 0 && allText.includes('IGNORE PREVIOUS') ? { toolCalls: [{ toolName: 'deleteNote', input: { id: 1 } }] } : undefined),
 *   });
 *   const { text } = await generateText({ model, tools, prompt: 'call listNotes', stopWhen: isStepCount(5) });
 */
export function createMockModel(options: MockModelOptions = {}): LanguageModelV4 {
  const modelId = options.modelId ?? 'fw-mock';
  const script = options.script;

  function answer(call: LanguageModelV4CallOptions) {
    call.abortSignal?.throwIfAborted();
    const { input, promptChars } = readCall(call);
    const chosen = script?.(input) ?? defaultMockTurn(input);
    return { ...wireTurn(chosen, input.turn, promptChars), responseId: `fw-mock-response-${input.turn}` };
  }

  return {
    specificationVersion: 'v4',
    provider: 'fw-mock',
    modelId,
    supportedUrls: {},
    async doGenerate(call): Promise<LanguageModelV4GenerateResult> {
      const { text, toolCalls, usage, finishReason, responseId } = answer(call);
      const content: LanguageModelV4Content[] = [];
      if (text !== '') content.push({ type: 'text', text });
      for (const c of toolCalls) content.push({ type: 'tool-call', ...c });
      return { content, finishReason, usage, warnings: [], response: { id: responseId, modelId } };
    },
    async doStream(call) {
      const { text, toolCalls, usage, finishReason, responseId } = answer(call);
      const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }, { type: 'response-metadata', id: responseId, modelId }];
      if (text !== '') {
        parts.push({ type: 'text-start', id: 'text-0' });
        for (const delta of splitDeltas(text)) parts.push({ type: 'text-delta', id: 'text-0', delta });
        parts.push({ type: 'text-end', id: 'text-0' });
      }
      // Real providers stream tool input before the complete call; UIs show the input-streaming state from it.
      for (const c of toolCalls) {
        parts.push({ type: 'tool-input-start', id: c.toolCallId, toolName: c.toolName });
        parts.push({ type: 'tool-input-delta', id: c.toolCallId, delta: c.input });
        parts.push({ type: 'tool-input-end', id: c.toolCallId });
        parts.push({ type: 'tool-call', ...c });
      }
      parts.push({ type: 'finish', finishReason, usage });
      return { stream: partStream(parts, call.abortSignal) };
    },
  };
}

/**
 * The mock's answer when no script decides (see the rules at the top of this file).
 *
 * @example
 *   defaultMockTurn({ ...input, lastUserText: 'call listNotes' }) // { toolCalls: [{ toolName: 'listNotes', input: {} }] }
 */
export function defaultMockTurn(input: MockTurnInput): MockTurn {
  if (input.outputSchema !== undefined) return { object: exampleFromSchema(input.outputSchema) };
  if (input.toolOutcomes.length > 0) return { text: input.toolOutcomes.map(describeOutcome).join('\n') };
  const toolCalls = requestedToolCalls(input.lastUserText, input.tools);
  if (toolCalls.length > 0) return { toolCalls };
  return { text: 'Mock answer: no tool was requested.' };
}

function describeOutcome({ toolName, output, status }: MockToolOutcome): string {
  if (status === 'denied') return `${toolName}: not approved`;
  if (status === 'error') return `${toolName} failed: ${clip(typeof output === 'string' ? output : JSON.stringify(output) ?? 'null')}`;
  return `${toolName}: ${clip(JSON.stringify(output) ?? 'null')}`;
}

function clip(text: string): string {
  return text.length > maxOutputJson ? `${text.slice(0, maxOutputJson)}…` : text;
}

// ——— Reading the call ———

function readCall(call: LanguageModelV4CallOptions): { input: MockTurnInput; promptChars: number } {
  const { prompt } = call;
  const texts: string[] = [];
  let callChars = 0;
  let lastAssistant = -1;
  let lastUserText = '';
  prompt.forEach((message, index) => {
    switch (message.role) {
      case 'system':
        texts.push(message.content);
        break;
      case 'user': {
        const own = message.content.flatMap((p) => (p.type === 'text' ? [p.text] : []));
        lastUserText = own.join('\n');
        texts.push(...own);
        for (const p of message.content) if (p.type === 'file' && p.data.type === 'text') texts.push(p.data.text);
        break;
      }
      case 'assistant':
        lastAssistant = index;
        for (const p of message.content) {
          if (p.type === 'text' || p.type === 'reasoning') texts.push(p.text);
          else if (p.type === 'tool-call') callChars += (JSON.stringify(p.input) ?? '').length;
          else if (p.type === 'tool-result') texts.push(outputText(p.output));
        }
        break;
      case 'tool':
        for (const p of message.content) if (p.type === 'tool-result') texts.push(outputText(p.output));
        break;
    }
  });
  const toolOutcomes = prompt.slice(lastAssistant + 1).flatMap((m) =>
    m.role !== 'tool' ? [] : m.content.flatMap((p) => (p.type === 'tool-result' ? [{ toolName: p.toolName, toolCallId: p.toolCallId, ...unwrapOutput(p.output) }] : [])),
  );
  const allText = texts.join('\n');
  const input: MockTurnInput = {
    prompt,
    tools: offeredTools(call),
    lastUserText,
    toolOutcomes,
    allText,
    outputSchema: call.responseFormat?.type === 'json' ? (call.responseFormat.schema ?? {}) : undefined,
    turn: prompt.filter((m) => m.role === 'assistant').length,
  };
  return { input, promptChars: texts.reduce((n, t) => n + t.length, callChars) };
}

function offeredTools({ tools = [], toolChoice }: LanguageModelV4CallOptions): MockToolInfo[] {
  if (toolChoice?.type === 'none') return [];
  const offered = tools.flatMap((t) => (t.type === 'function' ? [{ name: t.name, inputSchema: t.inputSchema, ...(t.description === undefined ? {} : { description: t.description }) }] : []));
  return toolChoice?.type === 'tool' ? offered.filter((t) => t.name === toolChoice.toolName) : offered;
}

function unwrapOutput(output: LanguageModelV4ToolResultOutput): Pick<MockToolOutcome, 'output' | 'status'> {
  switch (output.type) {
    case 'text':
    case 'json':
      return { output: output.value, status: 'ok' };
    case 'error-text':
    case 'error-json':
      return { output: output.value, status: 'error' };
    case 'execution-denied':
      return { output: output.reason, status: 'denied' };
    case 'content':
      // Files stand in by their media type: their bytes are no use to a script and would bloat the text.
      return { output: output.value.map((p) => (p.type === 'text' ? p.text : p.type === 'file' ? { type: 'file', mediaType: p.mediaType } : { type: p.type })), status: 'ok' };
  }
}

function outputText(output: LanguageModelV4ToolResultOutput): string {
  const { output: value } = unwrapOutput(output);
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

// ——— Rule 3: tools named in the user's text ———

function requestedToolCalls(text: string, tools: readonly MockToolInfo[]): Array<{ toolName: string; input: unknown }> {
  if (tools.length === 0 || text === '') return [];
  const byName = new Map(tools.map((t) => [t.name, t]));
  // Alternation tries the longest name first at each position; lookarounds are `\b` that also works for names ending in `-` or `.`.
  const names = [...byName.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
  const mention = new RegExp(`(?<![\\w$])(?:${names.join('|')})(?![\\w$])`, 'g');
  const inputs = new Map<string, unknown>();
  for (let m = mention.exec(text); m !== null; m = mention.exec(text)) {
    const literal = jsonObjectAt(text, m.index + m[0].length);
    if (!inputs.has(m[0]) || (inputs.get(m[0]) === undefined && literal)) inputs.set(m[0], literal?.value);
    if (literal) mention.lastIndex = literal.end;
  }
  return [...inputs].map(([toolName, given]) => ({ toolName, input: given ?? exampleFromSchema(byName.get(toolName)!.inputSchema) }));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The JSON object literal starting at `from` (after optional whitespace), if it parses. */
function jsonObjectAt(text: string, from: number): { value: object; end: number } | undefined {
  const start = text.slice(from).search(/\S/);
  if (start === -1 || text[from + start] !== '{') return undefined;
  let depth = 0;
  let inString = false;
  for (let i = from + start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) {
      try {
        return { value: JSON.parse(text.slice(from + start, i + 1)) as object, end: i + 1 };
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

// ——— Wire format ———

interface WireTurn {
  text: string;
  toolCalls: Array<{ toolCallId: string; toolName: string; input: string }>;
  finishReason: LanguageModelV4GenerateResult['finishReason'];
  usage: LanguageModelV4Usage;
}

function wireTurn(turn: MockTurn, index: number, promptChars: number): WireTurn {
  const text = 'object' in turn ? (JSON.stringify(turn.object) ?? 'null') : (turn.text ?? '');
  const calls = 'toolCalls' in turn ? turn.toolCalls : [];
  const toolCalls = calls.map((c, i) => ({ toolCallId: `mock-${index}-${i}`, toolName: c.toolName, input: JSON.stringify(c.input) ?? '{}' }));
  const outputChars = text.length + toolCalls.reduce((n, c) => n + c.input.length, 0);
  const unified = toolCalls.length > 0 ? 'tool-calls' : 'stop';
  return { text, toolCalls, finishReason: { unified, raw: unified }, usage: mockUsage(Math.ceil(promptChars / 4), Math.ceil(outputChars / 4)) };
}

function mockUsage(input: number, output: number): LanguageModelV4Usage {
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  };
}

/** Up to three deltas, split on code points so surrogate pairs stay whole. */
function splitDeltas(text: string): string[] {
  const chars = Array.from(text);
  const size = Math.ceil(chars.length / 3);
  const deltas: string[] = [];
  for (let i = 0; i < chars.length; i += size) deltas.push(chars.slice(i, i + size).join(''));
  return deltas;
}

function partStream(parts: LanguageModelV4StreamPart[], signal: AbortSignal | undefined): ReadableStream<LanguageModelV4StreamPart> {
  let next = 0;
  // Pull-based, so an abort between parts errors the stream like a cut connection would.
  return new ReadableStream({
    pull(controller) {
      if (signal?.aborted) return controller.error(signal.reason);
      const part = parts[next++];
      if (part === undefined) controller.close();
      else controller.enqueue(part);
    },
  });
}

// ——— Example values from JSON Schema ———

interface SchemaNode {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number | boolean;
  exclusiveMaximum?: number | boolean;
  multipleOf?: number;
  items?: SchemaDef | SchemaDef[];
  prefixItems?: SchemaDef[];
  additionalItems?: SchemaDef;
  minItems?: number;
  properties?: Record<string, SchemaDef>;
  required?: string[];
  additionalProperties?: SchemaDef;
  anyOf?: SchemaDef[];
  oneOf?: SchemaDef[];
  allOf?: SchemaDef[];
  $ref?: string;
}
type SchemaDef = SchemaNode | boolean;

const formatExamples: Record<string, string> = {
  uuid: '00000000-0000-4000-8000-000000000000',
  email: 'mock@example.com',
  'date-time': '2026-01-01T00:00:00.000Z',
  date: '2026-01-01',
  time: '00:00:00',
  duration: 'P1D',
  uri: 'https://example.com',
  url: 'https://example.com',
  'uri-reference': 'https://example.com',
  iri: 'https://example.com',
  hostname: 'example.com',
  ipv4: '127.0.0.1',
  ipv6: '::1',
};

/** Deep enough for any real schema; stops a required recursive `$ref` from looping. */
const maxDepth = 32;

/**
 * A value that validates against `schema` (draft 7 and the JSON Schema zod 4 emits): `const`, the first
 * `enum` value, `default`, then a minimal value of the type — required properties only, `minItems` items,
 * the first `anyOf`/`oneOf` branch, known string formats. A `pattern` is met only when one of the
 * format examples happens to match it (`00:00:00` for a time).
 *
 * @example
 *   exampleFromSchema({ type: 'object', properties: { id: { type: 'string', format: 'uuid' }, n: { type: 'integer', minimum: 3 } }, required: ['id', 'n'] })
 *   // { id: '00000000-0000-4000-8000-000000000000', n: 3 }
 */
export function exampleFromSchema(schema: JSONSchema7): unknown {
  const root = schema as SchemaNode;
  return example(root, root, 0);
}

function example(def: SchemaDef | undefined, root: SchemaNode, depth: number): unknown {
  if (def === undefined || def === true) return {};
  if (def === false || depth > maxDepth) return null;
  const node = def;
  if ('const' in node) return node.const;
  if (node.enum && node.enum.length > 0) return node.enum[0];
  if (node.default !== undefined) return node.default;
  if (node.$ref !== undefined) return example(resolveRef(root, node.$ref), root, depth + 1);
  const branch = node.anyOf?.[0] ?? node.oneOf?.[0];
  if (branch !== undefined) return example(branch, root, depth + 1);
  if (node.allOf) return example(mergeAllOf(node, root), root, depth + 1);
  switch (typeOf(node)) {
    case 'null':
      return null;
    case 'boolean':
      return false;
    case 'integer':
      return exampleNumber(node, true);
    case 'number':
      return exampleNumber(node, false);
    case 'string':
      return exampleString(node);
    case 'array':
      return exampleArray(node, root, depth);
    case 'object':
      // fromEntries defines own properties, so a required `__proto__` stays data.
      return Object.fromEntries((node.required ?? []).map((key) => [key, example(node.properties?.[key] ?? propertyFallback(node), root, depth + 1)]));
    default:
      return {};
  }
}

function typeOf(node: SchemaNode): string | undefined {
  if (Array.isArray(node.type)) return node.type.find((t) => t !== 'null') ?? node.type[0];
  if (node.type !== undefined) return node.type;
  if (node.properties || node.required || node.additionalProperties !== undefined) return 'object';
  if (node.items || node.prefixItems) return 'array';
  return undefined;
}

function propertyFallback(node: SchemaNode): SchemaDef {
  return typeof node.additionalProperties === 'object' ? node.additionalProperties : true;
}

function resolveRef(root: SchemaNode, ref: string): SchemaDef | undefined {
  if (!ref.startsWith('#')) return undefined;
  let at: unknown = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined;
  }
  return at as SchemaDef | undefined;
}

/** allOf as one schema: properties and `required` united, other keywords from the later branch. */
function mergeAllOf(node: SchemaNode, root: SchemaNode): SchemaNode {
  const { allOf = [], ...own } = node;
  let merged: SchemaNode = {};
  for (const entry of [...allOf, own]) {
    let part: SchemaDef | undefined = entry;
    for (let hops = 0; typeof part === 'object' && part.$ref !== undefined; hops++) part = hops > maxDepth ? undefined : resolveRef(root, part.$ref);
    if (typeof part !== 'object') continue;
    const flat = part.allOf ? mergeAllOf(part, root) : part;
    merged = {
      ...merged,
      ...flat,
      properties: { ...merged.properties, ...flat.properties },
      required: [...new Set([...(merged.required ?? []), ...(flat.required ?? [])])],
    };
  }
  return merged;
}

function exampleString(node: SchemaNode): string {
  const formatted = node.format === undefined ? undefined : formatExamples[node.format];
  if (formatted !== undefined) return formatted;
  const length = Math.min(Math.max(4, node.minLength ?? 0), node.maxLength ?? Infinity);
  const plain = 'mock'.repeat(Math.ceil(length / 4)).slice(0, length);
  // Some formats come as a bare pattern (zod's `z.iso.time()`), so a known example that matches wins.
  if (node.pattern === undefined || matches(node.pattern, plain)) return plain;
  return Object.values(formatExamples).find((example) => matches(node.pattern!, example)) ?? plain;
}

function matches(pattern: string, text: string): boolean {
  try {
    return new RegExp(pattern).test(text);
  } catch {
    return false;
  }
}

function exampleNumber(node: SchemaNode, integer: boolean): number {
  let low = node.minimum;
  let lowExclusive = node.exclusiveMinimum === true; // draft 4 form: a flag on `minimum`
  if (typeof node.exclusiveMinimum === 'number' && (low === undefined || node.exclusiveMinimum >= low)) [low, lowExclusive] = [node.exclusiveMinimum, true];
  let high = node.maximum;
  let highExclusive = node.exclusiveMaximum === true;
  if (typeof node.exclusiveMaximum === 'number' && (high === undefined || node.exclusiveMaximum <= high)) [high, highExclusive] = [node.exclusiveMaximum, true];

  let value = 0;
  if (low !== undefined && (lowExclusive ? value <= low : value < low)) value = lowExclusive ? (integer ? Math.floor(low) + 1 : low + 1) : integer ? Math.ceil(low) : low;
  if (high !== undefined && (highExclusive ? value >= high : value > high)) {
    if (integer) value = highExclusive ? Math.ceil(high) - 1 : Math.floor(high);
    else value = highExclusive ? (low !== undefined ? (low + high) / 2 : high - 1) : high;
  }
  const step = node.multipleOf;
  if (step !== undefined && step > 0 && value % step !== 0) value = Math.ceil(value / step) * step;
  return value;
}

function exampleArray(node: SchemaNode, root: SchemaNode, depth: number): unknown[] {
  const tuple = node.prefixItems ?? (Array.isArray(node.items) ? node.items : undefined);
  const rest = node.prefixItems ? node.items : Array.isArray(node.items) ? node.additionalItems : node.items;
  const values = (tuple ?? []).map((item) => example(item, root, depth + 1));
  while (values.length < (node.minItems ?? 0)) values.push(example(Array.isArray(rest) ? undefined : rest, root, depth + 1));
  return values;
}
