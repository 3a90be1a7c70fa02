/**
 * Registers OpenTelemetry's SDK for fw's spans and metrics when the environment asks for it, with the
 * variables every OpenTelemetry SDK reads: `OTEL_TRACES_EXPORTER` and `OTEL_METRICS_EXPORTER` (`otlp`,
 * `console` or `none`; `otlp` by default once `OTEL_EXPORTER_OTLP_ENDPOINT` or the signal's own
 * endpoint is set), the endpoints and headers the OTLP/HTTP exporters read themselves,
 * `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*` (span batching),
 * `OTEL_METRIC_EXPORT_INTERVAL`, `OTEL_SDK_DISABLED`. The SDK is imported only then: without those
 * variables nothing of it is loaded and tracing.ts / metrics.ts stay a flag check.
 *
 * W3C `traceparent` is the propagation format: an inbound one continues the caller's trace, and
 * external service calls carry one out.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { FwFailure } from '../core/failure.ts';
import type { Environment } from '../config/environment.ts';
import { configOf, type FwConfig } from '../config/resolve-config.ts';
import { fwVersion } from '../core/version.ts';
import { setMetricsActive } from './metrics.ts';
import { setTracingActive } from './tracing.ts';
import { recentSpanProcessor, setKeepingRecentSpans } from './recent-spans.ts';

export interface Telemetry {
  /** Where spans and metrics go (`none`: that signal is off). */
  traces: 'otlp' | 'console' | 'memory' | 'none';
  metrics: 'otlp' | 'console' | 'none';
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

// One SDK per process (OpenTelemetry's globals take one provider): later starts share it, the last
// shutdown ends it.
let shared: { telemetry: Promise<Telemetry | undefined>; users: number } | undefined;

/** Starts tracing when the environment configures it; undefined when it does not. */
export async function startTelemetry(options: TelemetryOptions): Promise<Telemetry | undefined> {
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
    traces: telemetry.traces,
    metrics: telemetry.metrics,
    async shutdown() {
      if (released) return;
      released = true;
      if (--current.users > 0) return;
      if (shared === current) shared = undefined;
      await telemetry.shutdown();
    },
  };
}

type Exporter = 'otlp' | 'console' | 'none';

interface TelemetryOptions {
  serviceName: string;
  env?: FwConfig | Environment;
  /** Keep the last traces in memory for the dashboard (recent-spans.ts), exporter or not: `fw dev` asks for it. */
  recent?: boolean;
}

/** `OTEL_<SIGNAL>_EXPORTER`, defaulting to `otlp` once an OTLP endpoint (general or for the signal) is set. */
function exporterFor(config: FwConfig, signal: 'TRACES' | 'METRICS'): Exporter {
  const configured = config.given(`OTEL_${signal}_EXPORTER`)?.split(',')[0]?.trim().toLowerCase();
  const exporter = configured || (config.given('OTEL_EXPORTER_OTLP_ENDPOINT') || config.given(`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`) ? 'otlp' : 'none');
  if (exporter !== 'otlp' && exporter !== 'console' && exporter !== 'none') {
    throw new FwFailure('bad_config', `OTEL_${signal}_EXPORTER=${exporter.slice(0, 40)} is not one fw can export to.`, {
      suggestions: [`OTEL_${signal}_EXPORTER=otlp (with OTEL_EXPORTER_OTLP_ENDPOINT, e.g. http://127.0.0.1:4318)`, `OTEL_${signal}_EXPORTER=console`, `OTEL_${signal}_EXPORTER=none`],
    });
  }
  return exporter;
}

async function registerSdk(options: TelemetryOptions): Promise<Telemetry | undefined> {
  const config = configOf(options.env);
  if (config.given('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const exported = exporterFor(config, 'TRACES');
  const traces = exported === 'none' && options.recent ? 'memory' : exported;
  const metricsExporter = exporterFor(config, 'METRICS');
  if (traces === 'none' && metricsExporter === 'none') return undefined;
  const resources = await import('@opentelemetry/resources');
  const resource = resources
    .resourceFromAttributes({ 'service.name': options.serviceName, 'telemetry.sdk.name': 'fw', 'fw.version': fwVersion })
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over fw's defaults.
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const stops: Array<() => Promise<void>> = [];

  if (traces !== 'none') {
    const [{ TracerProvider, BatchSpanProcessor, ConsoleSpanExporter }, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }] = await Promise.all([
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
    ]);
    const exporter =
      traces === 'memory' ? undefined : traces === 'console' ? new ConsoleSpanExporter() : new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
    const batching = {
      scheduledDelayMillis: config.get('OTEL_BSP_SCHEDULE_DELAY'),
      exportTimeoutMillis: config.get('OTEL_BSP_EXPORT_TIMEOUT'),
      maxQueueSize: config.get('OTEL_BSP_MAX_QUEUE_SIZE'),
      maxExportBatchSize: config.get('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
    };
    const spanProcessors = [...(exporter ? [new BatchSpanProcessor({ exporter, ...defined(batching) })] : []), ...(options.recent ? [recentSpanProcessor] : [])];
    const provider = new TracerProvider({ resource, spanProcessors });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(provider);
    setTracingActive(true);
    if (options.recent) setKeepingRecentSpans(true);
    stops.push(async () => {
      setTracingActive(false);
      setKeepingRecentSpans(false);
      await provider.shutdown().catch((error: unknown) => console.error(`fw: exporting the last spans failed: ${(error as Error).message}`));
      trace.disable();
      propagation.disable();
      context.disable();
    });
  }

  if (metricsExporter !== 'none') {
    const { MeterProvider, PeriodicExportingMetricReader, ConsoleMetricExporter } = await import('@opentelemetry/sdk-metrics');
    const exporter = metricsExporter === 'console' ? new ConsoleMetricExporter() : new (await import('@opentelemetry/exporter-metrics-otlp-http')).OTLPMetricExporter();
    const reading = { exportIntervalMillis: config.get('OTEL_METRIC_EXPORT_INTERVAL'), exportTimeoutMillis: config.get('OTEL_METRIC_EXPORT_TIMEOUT') };
    const provider = new MeterProvider({ resource, readers: [new PeriodicExportingMetricReader({ exporter, ...defined(reading) })] });
    metrics.setGlobalMeterProvider(provider);
    setMetricsActive(true);
    stops.push(async () => {
      setMetricsActive(false);
      await provider.shutdown().catch((error: unknown) => console.error(`fw: exporting the last metrics failed: ${(error as Error).message}`));
      metrics.disable();
    });
  }

  return {
    traces,
    metrics: metricsExporter,
    async shutdown() {
      for (const stop of stops) await stop();
    },
  };
}

function defined<T extends Record<string, number | undefined>>(values: T): { [K in keyof T]?: number } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as { [K in keyof T]?: number };
}

/** The app's name for `service.name`: its package.json name, else its folder's (OTEL_SERVICE_NAME overrides either). */
export function serviceNameOf(root: string): string {
  try {
    const name = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { name?: unknown }).name;
    if (typeof name === 'string' && name !== '') return name;
  } catch {}
  return path.basename(path.resolve(root));
}
