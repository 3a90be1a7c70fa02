import type { ModelMessage } from 'ai';
import { createAiRuntime } from '../../../runtime/ai/ai-runtime.ts';
import { createMockModel } from '../../../runtime/ai/mock-model.ts';
import type { FwDatabase } from '../../../runtime/db/database.ts';
import type { Auth } from '../../../runtime/core/entry-types.ts';
import type { AppDefinition } from '../../../runtime/core/app-definition.ts';

/**
 * Values an approval secret gets left at: placeholders from examples and tutorials. A deployment whose
 * `FW_AI_APPROVAL_SECRET` is one of them signs approvals that anyone can sign too.
 */
export const GUESSABLE_APPROVAL_SECRETS: readonly string[] = [
  'secret',
  'changeme',
  'change-me',
  'password',
  'dev',
  'development',
  'test',
  'fw',
  'approval-secret',
  'fw-ai-approval-secret',
  'FW_AI_APPROVAL_SECRET',
  'your-secret-here',
  'replace-me',
];

/**
 * What an attacker who guessed the approval secret can send: a history whose approval request for
 * `tool` is signed with `secret`. fw's own runtime makes it, signing with that secret and driven by the
 * scripted mock (forging needs no real model). Undefined when the tool is not offered to `auth`.
 *
 * @example
 *   const forged = await historySignedWith('changeme', { app, db, agent: 'assistant', tool: 'createNote', input: { title: 'x' }, auth });
 *   await runtime.run({ agent: 'assistant', messages: forged.messages, approvals: [{ approvalId: forged.approvalId, approved: true }] }, caller);
 */
export async function historySignedWith(
  secret: string,
  target: { app: AppDefinition; db: FwDatabase; agent: string; tool: string; input: unknown; auth: Auth },
): Promise<{ messages: ModelMessage[]; approvalId: string } | undefined> {
  const forger = createAiRuntime({
    app: target.app,
    db: target.db,
    approvalSecret: secret,
    resolveModel: () => ({ model: createMockModel({ modelId: 'fw-redteam-forger' }), provider: 'mock', modelId: 'fw-redteam-forger' }),
  });
  const paused = await forger.run({ agent: target.agent, prompt: `call ${target.tool} ${JSON.stringify(target.input)}` }, { auth: target.auth, traceId: 'redteam-forger' });
  const pending = paused.pendingApprovals.find((p) => p.toolName === target.tool);
  return pending && { messages: paused.messages, approvalId: pending.approvalId };
}
