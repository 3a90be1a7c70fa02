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

/** Which models serve the app's agents in this environment, and why (what `fw start` says when it starts). */
export interface AiSetup {
  /** `gateway`: real models through the AI Gateway; `mock`: fw's scripted mock answers every agent. */
  models: 'gateway' | 'mock';
  /** Why: `AI_GATEWAY_API_KEY is set`, `FW_AI=mock`, or `no AI_GATEWAY_API_KEY`. */
  reason: string;
  /** The app's agents, by name. */
  agents: string[];
}

export function aiSetup(agents: Iterable<string>, source?: FwConfig | Environment): AiSetup {
  const config = configOf(source);
  const names = [...agents].sort();
  if (config.get('FW_AI') === 'mock') return { models: 'mock', reason: 'FW_AI=mock', agents: names };
  return config.get('AI_GATEWAY_API_KEY') ? { models: 'gateway', reason: 'AI_GATEWAY_API_KEY is set', agents: names } : { models: 'mock', reason: 'no AI_GATEWAY_API_KEY', agents: names };
}

/**
 * The line `fw start` prints about AI: which models serve, and — when an app with agents would answer
 * real users with the mock without anyone having said so — a warning that says what to set.
 */
export function aiSetupLine(setup: AiSetup): { level: 'info' | 'warning'; text: string } {
  const agents = `${setup.agents.length} agent${setup.agents.length === 1 ? '' : 's'}${setup.agents.length ? ` (${setup.agents.join(', ')})` : ''}`;
  if (setup.models === 'gateway') return { level: 'info', text: `AI: ${agents} answer through the AI Gateway (${setup.reason}).` };
  if (setup.reason === 'FW_AI=mock' || setup.agents.length === 0) return { level: 'info', text: `AI: ${agents} answer with fw's scripted mock model (${setup.reason}).` };
  return {
    level: 'warning',
    text: `WARNING — AI: no AI_GATEWAY_API_KEY is set, so the app's ${agents} answer real users with fw's scripted mock model ("Mock answer: …"), not a language model. Set AI_GATEWAY_API_KEY for real models, or FW_AI=mock to serve the mock on purpose.`,
  };
}

/** Whether real provider calls are configured (for `fw ai agents` and the red team's report). */
export function liveModelsConfigured(source?: FwConfig | Environment): boolean {
  const config = configOf(source);
  return Boolean(config.get('AI_GATEWAY_API_KEY')) && config.get('FW_AI') !== 'mock';
}
