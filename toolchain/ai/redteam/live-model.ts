import { FwFailure } from '../../../runtime/core/failure.ts';

/** A real model for the probes: fw's agents reach every vendor through the AI Gateway. */
export interface LiveModel {
  provider: 'gateway';
  /** A gateway model id, `<vendor>/<model>` (e.g. `anthropic/claude-sonnet-4`). */
  model: string;
}

const example = 'fw ai redteam --live --model openai/gpt-4o-mini';

/**
 * `--live [--provider <p>] --model <m>`: `gateway` (the default) takes a gateway id as it is; a vendor
 * name (`openai`, `anthropic`, `google`, …) is the same call routed through the gateway
 * (`--provider anthropic --model claude-sonnet-4` → `anthropic/claude-sonnet-4`), the way fw's agents
 * reach it at run time with AI_GATEWAY_API_KEY.
 */
export function liveModel(provider: string | undefined, model: string | undefined): LiveModel {
  if (!model) throw new FwFailure('invalid_arguments', '--live needs --model <id>.', { suggestions: [example] });
  const vendor = (provider ?? 'gateway').trim().toLowerCase();
  if (vendor === 'mock') {
    throw new FwFailure('invalid_arguments', '--live probes with a real model; the adversarial mock is what runs without --live.', { suggestions: ['fw ai redteam --model-level', example] });
  }
  if (!/^[a-z0-9][a-z0-9-]*$/.test(vendor)) {
    throw new FwFailure('invalid_arguments', `--provider must be gateway or a vendor name such as openai or anthropic, got "${vendor.slice(0, 40)}".`, { suggestions: [example] });
  }
  const id = vendor === 'gateway' || model.startsWith(`${vendor}/`) ? model : `${vendor}/${model}`;
  if (!/^[^/\s]+\/\S+$/.test(id)) {
    throw new FwFailure('invalid_arguments', `A gateway model id names its vendor: <vendor>/<model>, got "${id.slice(0, 80)}".`, {
      suggestions: [example, `fw ai redteam --live --provider openai --model ${id.slice(0, 40)}`],
    });
  }
  return { provider: 'gateway', model: id };
}
