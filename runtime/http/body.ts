import type { IncomingMessage } from 'node:http';
import { FwError } from '../core/errors.ts';

/**
 * Reads a request body up to `limit` bytes. Refuses early on a declared Content-Length over the limit,
 * and stops reading (413) as soon as a streamed body passes it.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const tooLarge = () =>
    new FwError('payload_too_large', `The request body is larger than ${limit} bytes.`, {
      diagnostics: [{ path: 'body', code: 'too_large', message: `At most ${limit} bytes are accepted.` }],
    });
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();

  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

/**
 * How deeply a request body may nest arrays and objects. Far beyond any real argument, and far below
 * what recursive code on the way (validation, serialisation) can take without running out of stack.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The offset where `text` first nests deeper than `max` arrays/objects, or undefined. Brackets inside
 * strings do not count. One pass, no recursion: it must hold for any input.
 */
function nestingBeyond(text: string, max: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return undefined;
}

const jsonType = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Parses a JSON request body, which must come with a JSON content type (415 otherwise, 400 `bad_json`
 * when it does not parse).
 */
export function parseJsonBody(body: Buffer, contentType: string | undefined): unknown {
  if (contentType === undefined || !jsonType.test(contentType)) {
    throw new FwError('unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.', {
      diagnostics: [{ path: 'headers.content-type', code: 'unsupported', message: `Got ${contentType ?? 'no content type'}.` }],
    });
  }
  return parseJsonText(body.toString('utf8'), 'body');
}

/** JSON text from a caller (`where` names it in diagnostics): nesting capped, 400 `bad_json` when it does not parse. */
export function parseJsonText(text: string, where: string): unknown {
  const depth = nestingBeyond(text, MAX_JSON_DEPTH);
  if (depth !== undefined) {
    throw new FwError('bad_json', `The JSON in ${where} nests deeper than ${MAX_JSON_DEPTH} levels.`, {
      diagnostics: [{ path: where, code: 'too_deep', message: `Nesting passes ${MAX_JSON_DEPTH} levels at character ${depth}.`, hint: 'Send flatter JSON; no fw argument needs this depth.' }],
    });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new FwError('bad_json', `The JSON in ${where} is not valid: ${(error as Error).message}`, {
      diagnostics: [{ path: where, code: 'bad_json', message: (error as Error).message }],
    });
  }
}

/**
 * Parses the `{ "args": { … } }` envelope. An absent body means `{}` args; anything else must be
 * JSON with a JSON content type.
 */
export function parseArgsEnvelope(body: Buffer, contentType: string | undefined): unknown {
  if (body.length === 0) return {};
  const parsed = parseJsonBody(body, contentType);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new FwError('bad_request', 'The body must be a JSON object of the form {"args": {…}}.', {
      diagnostics: [{ path: 'body', code: 'invalid_envelope', message: 'Expected an object with an "args" member.' }],
    });
  }
  const envelope = parsed as Record<string, unknown>;
  const unknownKeys = Object.keys(envelope).filter((k) => k !== 'args');
  if (unknownKeys.length > 0) {
    throw new FwError('bad_request', `Unknown body member(s): ${unknownKeys.join(', ')}. The body is {"args": {…}}.`, {
      diagnostics: unknownKeys.map((k) => ({ path: `body.${k}`, code: 'unknown_member', message: 'Put call arguments inside "args".' })),
    });
  }
  return envelope.args === undefined ? {} : envelope.args;
}
