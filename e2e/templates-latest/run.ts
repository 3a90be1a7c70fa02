// `npm run templates:latest -- [flags]`: see README.md ("Template pins") and latest.ts.
import { parseArgs } from 'node:util';
import { templateNames } from '../../toolchain/create/create-app.ts';
import { type LatestResult, tryLatest } from './latest.ts';

const usage = `npm run templates:latest -- [--templates ${templateNames.join(',')}] [--write] [--hold <name@version>]… [--keep] [--json]`;

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        templates: { type: 'string' },
        write: { type: 'boolean', default: false },
        hold: { type: 'string', multiple: true },
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
    report = await tryLatest({
      templates: values.templates ? values.templates.split(',').map((t) => t.trim()).filter(Boolean) : [...templateNames],
      write: values.write,
      holds: values.hold ?? [],
      keep: values.keep,
      // Progress on stderr, so stdout stays the table or the one JSON document.
      onStep: (template, step) => void process.stderr.write(`${template ?? 'fwjs'}: ${step.name} ${step.ok ? '✓' : '✗'} ${Math.round(step.durationMs / 1000)} s\n`),
    });
  } catch (error) {
    const message = (error as Error).message;
    if (values.json) process.stdout.write(`${JSON.stringify({ ok: false, kind: 'invalid_arguments', message, suggestions: [usage] })}\n`);
    else process.stderr.write(`${message}\n${usage}\n`);
    return 2;
  }
  if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
  else printTable(report.results, values.write);
  return report.ok ? 0 : 1;
}

const stepNames = ['install', 'hold', 'typecheck', 'build', 'test'];

/** One row per template (✓ passed, ✗ failed, – not reached), then what broke and what changed. */
function printTable(results: LatestResult[], write: boolean): void {
  const width = Math.max(8, ...results.map((r) => r.template.length));
  const row = (cells: string[]) => `${cells[0]!.padEnd(width)}  ${cells.slice(1).map((c) => c.padEnd(9)).join(' ')}`.trimEnd();
  const out: string[] = [row(['template', ...stepNames, 'changed'])];
  for (const r of results) {
    const mark = (name: string) => {
      const step = r.steps.find((s) => s.name === name);
      return step ? (step.ok ? '✓' : '✗') : '–';
    };
    out.push(row([r.template, ...stepNames.map(mark), String(r.changed.length)]));
  }
  for (const r of results) {
    const failed = r.steps.filter((s) => !s.ok).map((s) => s.name);
    out.push('', `${r.template}: ${r.ok ? 'passed with the latest' : `failed at ${failed.join(', ')}`}.`);
    for (const step of r.steps.filter((s) => !s.ok)) out.push(`  $ ${step.command}  (in ${step.cwd})`, ...excerpt(`${step.stdout}\n${step.stderr}`).map((line) => `    ${line}`));
    if (r.changed.length > 0) {
      const shown = r.changed.slice(0, 30).map((p) => `${p.name} ${p.pinned.join('/') || '–'} → ${p.latest.join('/') || '–'}`);
      out.push(`  differs from the pin: ${shown.join(', ')}${r.changed.length > shown.length ? `, and ${r.changed.length - shown.length} more (--json lists them)` : ''}`);
    }
    const lock = `templates/${r.template}/package-lock.json`;
    out.push(
      r.lock === 'written'
        ? `  ${lock}: written (the tree above); run the suite, then commit it.`
        : r.lock === 'unchanged'
          ? `  ${lock}: already the latest.`
          : `  ${lock}: kept${r.ok && !write ? ' (--write pins this tree)' : ''}.`,
    );
    if (r.appDir) out.push(`  app: ${r.appDir}`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

/** A failed step's output: from its first error line (a message sits above its stack) a few lines, then its last lines. */
function excerpt(output: string): string[] {
  const lines = output.split('\n').filter((line) => line.trim() !== '');
  const first = lines.findIndex((line) => /(^|\s)(ERROR|error|[A-Za-z]*Error)(\s|:)|^\s*\[[A-Z_]+\]/.test(line));
  const tailFrom = Math.max(0, lines.length - 12);
  if (first === -1 || first + 4 >= tailFrom) return lines.slice(first === -1 ? tailFrom : Math.min(first, tailFrom));
  return [...lines.slice(first, first + 4), '…', ...lines.slice(tailFrom)];
}

process.exitCode = await main();
