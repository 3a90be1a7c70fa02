import { describe, expect, it } from 'vitest';
import { FwFailure } from '../../../runtime/core/failure.ts';
import { liveModel } from './live-model.ts';

const failureOf = (fn: () => unknown): FwFailure => {
  try {
    fn();
  } catch (error) {
    if (error instanceof FwFailure) return error;
    throw error;
  }
  throw new Error('expected a failure');
};

describe('fw ai redteam --live: the model', () => {
  it('takes a gateway id as it is, with or without --provider gateway', () => {
    expect(liveModel(undefined, 'openai/gpt-4o-mini')).toEqual({ provider: 'gateway', model: 'openai/gpt-4o-mini' });
    expect(liveModel('gateway', 'anthropic/claude-sonnet-4')).toEqual({ provider: 'gateway', model: 'anthropic/claude-sonnet-4' });
  });

  it('routes a vendor provider through the gateway', () => {
    expect(liveModel('anthropic', 'claude-sonnet-4')).toEqual({ provider: 'gateway', model: 'anthropic/claude-sonnet-4' });
    expect(liveModel('OpenAI', 'gpt-4o-mini')).toEqual({ provider: 'gateway', model: 'openai/gpt-4o-mini' });
    expect(liveModel('openai', 'openai/gpt-4o-mini')).toEqual({ provider: 'gateway', model: 'openai/gpt-4o-mini' });
  });

  it('refuses what it cannot call, saying what to write', () => {
    expect(failureOf(() => liveModel('openai', undefined))).toMatchObject({ kind: 'invalid_arguments', message: '--live needs --model <id>.' });
    expect(failureOf(() => liveModel('mock', 'x'))).toMatchObject({ kind: 'invalid_arguments', suggestions: ['fw ai redteam --model-level', 'fw ai redteam --live --model openai/gpt-4o-mini'] });
    expect(failureOf(() => liveModel('gateway', 'gpt-4o-mini'))).toMatchObject({ kind: 'invalid_arguments', message: 'A gateway model id names its vendor: <vendor>/<model>, got "gpt-4o-mini".' });
    expect(failureOf(() => liveModel('../x', 'm')).kind).toBe('invalid_arguments');
  });
});
