import type { LanguageModelV4, LanguageModelV4Usage } from '@ai-sdk/provider';
import { inSpan, SpanKind } from '../telemetry/tracing.ts';
import type { ResolvedModel } from './models.ts';

/**
 * The model with a span per call (OpenTelemetry's GenAI conventions): the provider, the model, the
 * token counts, the finish reason — never the prompt, the messages or the output. A streamed call's
 * span covers opening the stream; its usage arrives with the stream's end and is added then.
 */
export function tracedModel(resolved: ResolvedModel): ResolvedModel {
  const { model } = resolved;
  const attributes = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': resolved.provider, 'gen_ai.request.model': resolved.modelId };
  const name = `chat ${resolved.modelId}`;
  // A plain object over the model (providers' classes keep #private state; their methods stay bound to them).
  const traced: LanguageModelV4 = {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
    get supportedUrls() {
      return model.supportedUrls;
    },
    doGenerate: (options) =>
      inSpan(name, { kind: SpanKind.CLIENT, attributes }, async (span) => {
        const result = await model.doGenerate(options);
        span.setAttributes({ ...usageAttributes(result.usage), 'gen_ai.response.finish_reasons': [String(result.finishReason.unified)] });
        return result;
      }),
    doStream: (options) => inSpan(name, { kind: SpanKind.CLIENT, attributes: { ...attributes, 'gen_ai.request.stream': true } }, async () => model.doStream(options)),
  };
  return { ...resolved, model: traced };
}

function usageAttributes(usage: LanguageModelV4Usage | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  if (typeof usage?.inputTokens?.total === 'number') out['gen_ai.usage.input_tokens'] = usage.inputTokens.total;
  if (typeof usage?.outputTokens?.total === 'number') out['gen_ai.usage.output_tokens'] = usage.outputTokens.total;
  return out;
}
