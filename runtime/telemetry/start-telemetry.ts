/**
 * Registers OpenTelemetry's SDK for fw's spans when the environment asks for it, with the variables
 * every OpenTelemetry SDK reads: `OTEL_TRACES_EXPORTER` (`otlp`, `console` or `none`; `otlp` by default
 * once `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set), the endpoint and
 * headers the OTLP/HTTP exporter reads itself, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
 * `OTEL_BSP_*` for batching, `OTEL_SDK_DISABLED`. The SDK is imported only then: without those
 * variables nothing of it is loaded and tracing.ts stays the API's no-op.
 *
 * W3C `traceparent` is the propagation format: an inbound one continues the caller's trace, and
 * external service calls carry one out.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { context, propagation, trace } from '@opentelemetry/api';
import { FwFailure } from '../failure.ts';
import { fwVersion } from '../version.ts';
import { setTracingActive } from './tracing.ts';

export interface Telemetry {
  /** The exporter in use. */
  exporter: 'otlp' | 'console';
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

// One SDK per process (OpenTelemetry's globals take one provider): later starts share it, the last
// shutdown ends it.
let shared: { telemetry: Promise<Telemetry | undefined>; users: number } | undefined;

/** Starts tracing when the environment configures it; undefined when it does not. */
export async function startTelemetry(options: { serviceName: string; env?: NodeJS.ProcessEnv }): Promise<Telemetry | undefined> {
  if (!shared) shared = { telemetry: registerSdk(options), users: 0 };
  const current = shared;
  current.users++;
  const telemetry = await current.telemetry.catch((error: unknown) => {
    if (shared === current) shared = undefined;
    throw error;
  });
  if (!telemetry) {
    if (shared === current) shared = undefined;
    return undefined;
  }
  let released = false;
  return {
    exporter: telemetry.exporter,
    async shutdown() {
      if (released) return;
      released = true;
      if (--current.users > 0) return;
      if (shared === current) shared = undefined;
      await telemetry.shutdown();
    },
  };
}

async function registerSdk(options: { serviceName: string; env?: NodeJS.ProcessEnv }): Promise<Telemetry | undefined> {
  const env = options.env ?? process.env;
  if (env.OTEL_SDK_DISABLED === 'true') return undefined;
  const configured = env.OTEL_TRACES_EXPORTER?.split(',')[0]?.trim().toLowerCase();
  const exporter = configured || (env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? 'otlp' : 'none');
  if (exporter === 'none') return undefined;
  if (exporter !== 'otlp' && exporter !== 'console') {
    throw new FwFailure('bad_config', `OTEL_TRACES_EXPORTER=${exporter.slice(0, 40)} is not one fw can export to.`, {
      suggestions: ['OTEL_TRACES_EXPORTER=otlp (with OTEL_EXPORTER_OTLP_ENDPOINT, e.g. http://127.0.0.1:4318)', 'OTEL_TRACES_EXPORTER=console', 'OTEL_TRACES_EXPORTER=none'],
    });
  }
  const [{ TracerProvider, BatchSpanProcessor, ConsoleSpanExporter }, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, resources] = await Promise.all([
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
  ]);
  const spanExporter = exporter === 'console' ? new ConsoleSpanExporter() : new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  const resource = resources
    .resourceFromAttributes({ 'service.name': options.serviceName, 'service.version': env.npm_package_version ?? 'unknown', 'telemetry.sdk.name': 'fw', 'fw.version': fwVersion })
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over fw's defaults.
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const batching = {
    scheduledDelayMillis: envNumber(env, 'OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: envNumber(env, 'OTEL_BSP_EXPORT_TIMEOUT'),
    maxQueueSize: envNumber(env, 'OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: envNumber(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  };
  const processor = new BatchSpanProcessor({ exporter: spanExporter, ...Object.fromEntries(Object.entries(batching).filter(([, value]) => value !== undefined)) });
  const provider = new TracerProvider({ resource, spanProcessors: [processor] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracingActive(true);
  return {
    exporter,
    async shutdown() {
      setTracingActive(false);
      await provider.shutdown().catch((error: unknown) => console.error(`fw: exporting the last spans failed: ${(error as Error).message}`));
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

function envNumber(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new FwFailure('bad_config', `${name} must be a whole number ≥ 0, got "${raw.slice(0, 20)}".`, { suggestions: [`unset ${name}`] });
  return value;
}

/** The app's name for `service.name`: its package.json name, else its folder's (OTEL_SERVICE_NAME overrides either). */
export function serviceNameOf(root: string): string {
  try {
    const name = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { name?: unknown }).name;
    if (typeof name === 'string' && name !== '') return name;
  } catch {}
  return path.basename(path.resolve(root));
}
