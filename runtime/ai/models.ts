import { createGateway } from 'ai';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { createMockModel } from './mock-model.ts';

/** Which model a run uses, and whether it is the real one. */
export interface ResolvedModel {
  model: LanguageModelV4;
  provider: 'gateway' | 'mock';
  modelId: string;
}

/** Picks the model of a run; tests and the red team pass one to script the mock. */
export type ModelResolver = (request: { provider: 'gateway' | 'mock'; model: string; agent?: string }) => ResolvedModel;

/**
 * The default resolver: the AI Gateway when the agent asks for it and `AI_GATEWAY_API_KEY` is set, and
 * fw's scripted mock otherwise — also whenever `FW_AI=mock`. A model id string is never handed to the
 * AI SDK (it would resolve to the gateway on its own): the gateway model is built here, with the key.
 *
 * @example
 *   defaultModelResolver({})({ provider: 'gateway', model: 'openai/gpt-4o-mini' }).provider // 'mock'
 */
export function defaultModelResolver(env: Readonly<Record<string, string | undefined>> = process.env): ModelResolver {
  const apiKey = env.AI_GATEWAY_API_KEY;
  const forceMock = env.FW_AI === 'mock';
  const gateway = apiKey && !forceMock ? createGateway({ apiKey }) : undefined;
  return ({ provider, model }) => {
    if (provider === 'gateway' && gateway) return { model: gateway(model) as LanguageModelV4, provider: 'gateway', modelId: model };
    return { model: createMockModel({ modelId: model }), provider: 'mock', modelId: model };
  };
}

/** Whether real provider calls are configured (for `fw ai agents` and the red team's report). */
export function liveModelsConfigured(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return Boolean(env.AI_GATEWAY_API_KEY) && env.FW_AI !== 'mock';
}
