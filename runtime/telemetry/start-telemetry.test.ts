import { describe, expect, it } from 'vitest';
import { FwFailure } from '../core/failure.ts';
import { startTelemetry } from './start-telemetry.ts';

describe('startTelemetry', () => {
  it('starts nothing without OpenTelemetry variables, or when the SDK is disabled', async () => {
    expect(await startTelemetry({ serviceName: 'x', env: {} })).toBeUndefined();
    expect(await startTelemetry({ serviceName: 'x', env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' } })).toBeUndefined();
    expect(await startTelemetry({ serviceName: 'x', env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' } })).toBeUndefined();
  });

  it('refuses an exporter it cannot use and a malformed batching setting, saying what to set', async () => {
    const unknown = await startTelemetry({ serviceName: 'x', env: { OTEL_TRACES_EXPORTER: 'zipkin' } }).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(FwFailure);
    expect(unknown).toMatchObject({ kind: 'bad_config', message: 'OTEL_TRACES_EXPORTER=zipkin is not one fw can export to.', suggestions: expect.arrayContaining(['OTEL_TRACES_EXPORTER=console']) });
    const metricsExporter = await startTelemetry({ serviceName: 'x', env: { OTEL_METRICS_EXPORTER: 'prometheus' } }).catch((error: unknown) => error);
    expect(metricsExporter).toMatchObject({ kind: 'bad_config', message: 'OTEL_METRICS_EXPORTER=prometheus is not one fw can export to.' });
    const batching = await startTelemetry({ serviceName: 'x', env: { OTEL_TRACES_EXPORTER: 'console', OTEL_BSP_SCHEDULE_DELAY: 'soon' } }).catch((error: unknown) => error);
    expect(batching).toMatchObject({ kind: 'bad_config', message: 'OTEL_BSP_SCHEDULE_DELAY must be a whole number ≥ 0, got "soon".' });
  });
});
