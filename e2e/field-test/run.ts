// `npm run field:test -- [flags]`: see README.md ("Field test") and harness.ts.
import { parseArgs } from 'node:util';
import { fieldTemplates, packageManagers, runFieldTest, writeReport } from './harness.ts';

const usage = `npm run field:test -- [--templates ${fieldTemplates.join(',')}] [--package-managers ${packageManagers.join(',')}]
  [--fw-spec <npm spec>] [--install] [--runtime-probes] [--write-report <file>] [--dry-run] [--keep] [--json]`;

const list = (value: string | undefined, fallback: string[]) => (value ? value.split(',').map((v) => v.trim()).filter(Boolean) : fallback);

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        templates: { type: 'string' },
        'package-managers': { type: 'string' },
        'fw-spec': { type: 'string' },
        install: { type: 'boolean', default: false },
        'runtime-probes': { type: 'boolean', default: false },
        'write-report': { type: 'string' },
        'dry-run': { type: 'boolean', default: false },
        keep: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${usage}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  let report;
  try {
    report = await runFieldTest({
      templates: list(values.templates, ['minimal-web']),
      packageManagers: list(values['package-managers'], ['npm']),
      ...(values['fw-spec'] ? { fwSpec: values['fw-spec'] } : {}),
      install: values.install,
      runtimeProbes: values['runtime-probes'],
      keep: values.keep,
      dryRun: values['dry-run'],
    });
  } catch (error) {
    const message = (error as Error).message;
    if (values.json) process.stdout.write(`${JSON.stringify({ ok: false, kind: 'invalid_arguments', message, suggestions: [usage] })}\n`);
    else process.stderr.write(`${message}\n${usage}\n`);
    return 2;
  }
  if (values['write-report']) await writeReport(values['write-report'], report);
  if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
  else if (report.plan) {
    for (const p of report.plan) process.stdout.write(`${p.template} × ${p.packageManager}: ${p.steps.join(' → ')}\n`);
  } else {
    for (const r of report.results) {
      process.stdout.write(`${r.ok ? 'PASS' : 'FAIL'} ${r.template} × ${r.packageManager}${r.failedStep ? ` (failed at ${r.failedStep})` : ''}\n`);
      for (const s of r.steps) process.stdout.write(`  ${s.ok ? '✓' : '✗'} ${s.name} ${s.durationMs} ms${s.timedOut ? ' (timed out)' : ''}${s.ok ? '' : `\n    ${s.command}\n    ${(s.stderr || s.stdout).trim().split('\n').slice(-8).join('\n    ')}`}\n`);
      for (const p of r.probes) process.stdout.write(`  ${p.ok ? '✓' : '✗'} ${p.method} ${p.path} → ${p.status ?? '–'} trace ${p.traceId ?? '–'}${p.error ? ` ${p.error}` : ''}\n`);
    }
  }
  return report.ok ? 0 : 1;
}

process.exitCode = await main();
