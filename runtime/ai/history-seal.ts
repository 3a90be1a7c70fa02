/**
 * Seals on the tool calls and tool results fw puts into a conversation, so that a client-sent history
 * is data, never proof: a tool call or tool result the model would read as real must carry the seal fw
 * gave it, for this caller and agent, or the request is refused before the model sees it.
 *
 * A seal is an HMAC (key in `_fw.secrets`, shared by every process of the database) over the caller
 * (user, tenant), the agent, and the part itself (its kind, tool call id, tool name and input or
 * output). On `/ai/agents/run` it travels in the part's `providerOptions.fw.seal`, which model providers
 * ignore; on `/ai/agents/chat` (UI messages, whose tool parts have nowhere of their own for it) in the
 * assistant message's `metadata.fw.seals`, keyed by tool call id.
 *
 * @example
 *   const sealed = sealMessages(key, binding, result.responseMessages);   // what the client gets back
 *   verifyMessages(key, binding, request.messages);                        // throws 403 history_forged
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ModelMessage, UIMessage } from 'ai';
import { FwError } from '../core/errors.ts';
import type { ApprovalBinding } from './approval-ledger.ts';

type Kind = 'call' | 'result';

function seal(key: Buffer, binding: ApprovalBinding, kind: Kind, toolCallId: string, toolName: string, value: unknown): string {
  const message = JSON.stringify([binding.userId, binding.tenantId, binding.agent, kind, toolCallId, toolName, value ?? null]);
  return createHmac('sha256', key).update(message).digest('base64url');
}

function sameSeal(expected: string, given: unknown): boolean {
  if (typeof given !== 'string' || given.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(expected), Buffer.from(given));
}

/** The seal of a UI tool call (chat metadata `{ call }`). */
export function sealOfCall(key: Buffer, binding: ApprovalBinding, toolCallId: string, toolName: string, input: unknown): { call: string } {
  return { call: seal(key, binding, 'call', toolCallId, toolName, input) };
}

/** The seal of a UI tool result, over `{ output }` (chat metadata `{ result }`). */
export function sealOfResult(key: Buffer, binding: ApprovalBinding, toolCallId: string, toolName: string, result: { output: unknown }): string {
  return seal(key, binding, 'result', toolCallId, toolName, result);
}

/** `messages` with every tool call and tool result sealed (fw's own output, about to reach the client). */
export function sealMessages(key: Buffer, binding: ApprovalBinding, messages: readonly ModelMessage[]): ModelMessage[] {
  return messages.map((message) => {
    if ((message.role !== 'assistant' && message.role !== 'tool') || typeof message.content === 'string') return message;
    const content = message.content.map((part) => {
      if (part.type === 'tool-call') return { ...part, providerOptions: { ...part.providerOptions, fw: { seal: seal(key, binding, 'call', part.toolCallId, part.toolName, part.input) } } };
      if (part.type === 'tool-result') return { ...part, providerOptions: { ...part.providerOptions, fw: { seal: seal(key, binding, 'result', part.toolCallId, part.toolName, part.output) } } };
      return part;
    });
    return { ...message, content } as ModelMessage;
  });
}

/** Refuses (403 `history_forged`) a history with a tool call or result fw did not seal for this caller and agent. */
export function verifyMessages(key: Buffer, binding: ApprovalBinding, messages: readonly ModelMessage[]): void {
  messages.forEach((message, index) => {
    if ((message.role !== 'assistant' && message.role !== 'tool') || typeof message.content === 'string') return;
    for (const part of message.content) {
      if (part.type !== 'tool-call' && part.type !== 'tool-result') continue;
      const kind: Kind = part.type === 'tool-call' ? 'call' : 'result';
      const expected = seal(key, binding, kind, part.toolCallId, part.toolName, part.type === 'tool-call' ? part.input : part.output);
      const given = (part.providerOptions?.fw as { seal?: unknown } | undefined)?.seal;
      if (!sameSeal(expected, given)) throw forged(`body.messages.${index}`, part.toolCallId, kind);
    }
  });
}

/**
 * Refuses (403 `history_forged`) UI messages with a tool call fw did not make or a tool output fw did
 * not return, for this caller and agent. Calls awaiting or carrying a decision are the approval ledger's
 * to judge (it binds their input); a failed call's error text is checked only through its call.
 */
export function verifyUiMessages(key: Buffer, binding: ApprovalBinding, messages: readonly UIMessage[]): void {
  messages.forEach((message, index) => {
    if (message.role !== 'assistant') return;
    const seals = ((message.metadata as { fw?: { seals?: unknown } } | undefined)?.fw?.seals ?? {}) as Record<string, { call?: unknown; result?: unknown } | undefined>;
    for (const part of toolParts(message)) {
      if (part.state === 'approval-requested' || part.state === 'approval-responded') continue;
      const given = seals[part.toolCallId];
      if (!sameSeal(seal(key, binding, 'call', part.toolCallId, part.toolName, part.input), given?.call)) throw forged(`body.messages.${index}`, part.toolCallId, 'call');
      if (part.state === 'output-available' && !sameSeal(seal(key, binding, 'result', part.toolCallId, part.toolName, { output: part.output ?? null }), given?.result)) {
        throw forged(`body.messages.${index}`, part.toolCallId, 'result');
      }
    }
  });
}

interface UiToolPart {
  toolCallId: string;
  toolName: string;
  state: string;
  input?: unknown;
  output?: unknown;
  errorText?: unknown;
}

function toolParts(message: UIMessage): UiToolPart[] {
  return message.parts.flatMap((part) => {
    const p = part as { type: string; toolCallId?: string; toolName?: string; state?: string; input?: unknown; output?: unknown; errorText?: unknown };
    if (typeof p.toolCallId !== 'string' || typeof p.state !== 'string') return [];
    const toolName = p.type === 'dynamic-tool' ? p.toolName : p.type.startsWith('tool-') ? p.type.slice('tool-'.length) : undefined;
    return typeof toolName === 'string' ? [{ toolCallId: p.toolCallId, toolName, state: p.state, input: p.input, output: p.output, errorText: p.errorText }] : [];
  });
}

function forged(path: string, toolCallId: string, kind: Kind): FwError {
  return new FwError('forbidden', `The history carries a tool ${kind} that this server did not issue to you (tool call "${toolCallId.slice(0, 200)}"); nothing ran.`, {
    diagnostics: [{ path, code: 'history_forged', message: `Tool ${kind} "${toolCallId.slice(0, 200)}" has no valid fw seal.`, hint: 'Send back the messages exactly as fw returned them; tool calls and results cannot be written by the client.' }],
  });
}
