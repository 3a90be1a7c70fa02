import type { IncomingMessage } from 'node:http';
import { FwError } from '../core/errors.ts';

/** How a body limit reads to a person: `1 MiB`, `512 KiB`, `4096 bytes`. */
export function describeBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * How much of an oversized body is read and thrown away after the 413, so that a client still sending
 * it reads the answer instead of a connection reset (a socket closed with unread data is reset). Past
 * this (or the request timeout, `FW_REQUEST_TIMEOUT_MS`) the connection is cut.
 */
export function discardBudget(limit: number): number {
  return Math.max(limit, 16 * 1024 * 1024);
}

/**
 * Reads a request body up to `limit` bytes. Refuses early (413 `payload_too_large`) on a declared
 * Content-Length over the limit, and as soon as a streamed body passes it. Either way the request is
 * not destroyed: the rest of the body is read and discarded (up to `discardBudget`), so the 413 reaches
 * a client that is still sending and the connection stays usable. `raise` says how to accept more
 * (the runtime's limit is `FW_BODY_LIMIT_BYTES`); a fixed limit passes none.
 */
export async function readBody(req: IncomingMessage, limit: number, options: { raise?: string | false } = {}): Promise<Buffer> {
  const raise = options.raise ?? 'Set FW_BODY_LIMIT_BYTES to accept larger bodies (docs/deploy.md#server-limits).';
  const tooLarge = () => {
    discardRest(req, discardBudget(limit));
    return new FwError('payload_too_large', `The request body is larger than ${limit} bytes (${describeBytes(limit)}).`, {
      diagnostics: [{ path: 'body', code: 'too_large', message: `At most ${limit} bytes are accepted.`, hint: `Send at most ${describeBytes(limit)} in one request.${raise ? ` ${raise}` : ''}` }],
    });
  };
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();

  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      stop();
      chunks.length = 0;
      reject(tooLarge());
    };
    const onEnd = () => {
      stop();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    // The client went away before the body was complete.
    const onClose = () => {
      stop();
      reject(new FwError('bad_request', 'The request body ended early: the client closed the connection.'));
    };
    if (req.readableEnded) return resolve(Buffer.alloc(0));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/**
 * Reads and throws away what is left of a refused body, at most `budget` bytes, and cuts the connection
 * past that. Node's server then answers on a connection it can keep (no reset while the client sends).
 */
function discardRest(req: IncomingMessage, budget: number): void {
  if (req.complete || req.destroyed) return;
  let discarded = 0;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > budget) req.socket.destroy();
  });
  req.resume();
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
