import { createGateway } from 'ai';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { createMockModel } from './mock-model.ts';
import type { Environment } from '../config/environment.ts';
import { configOf, type FwConfig } from '../config/resolve-config.ts';

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
export function defaultModelResolver(source?: FwConfig | Environment): ModelResolver {
  const config = configOf(source);
  const apiKey = config.get('AI_GATEWAY_API_KEY');
  const forceMock = config.get('FW_AI') === 'mock';
  const gateway = apiKey && !forceMock ? createGateway({ apiKey }) : undefined;
  return ({ provider, model }) => {
    if (provider === 'gateway' && gateway) return { model: gateway(model) as LanguageModelV4, provider: 'gateway', modelId: model };
    return { model: createMockModel({ modelId: model }), provider: 'mock', modelId: model };
  };
}

/** Whether real provider calls are configured (for `fw ai agents` and the red team's report). */
export function liveModelsConfigured(source?: FwConfig | Environment): boolean {
  const config = configOf(source);
  return Boolean(config.get('AI_GATEWAY_API_KEY')) && config.get('FW_AI') !== 'mock';
}
