import { defineCommand } from 'citty';
import { type GateName, type GateResult, resolveVerifyLevel, verify, type VerifyLevel } from '../../toolchain/verify/verify.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import { formatFix } from '../../plugin/analyse/check-diagnostic.ts';
import { log, printJson } from '../output.ts';
import { createProgress } from '../progress.ts';
import { commandMeta } from '../command-meta.ts';

export default defineCommand({
  meta: commandMeta('verify'),
  args: {
    preset: { type: 'positional', required: false, description: 'A level or alias: smoke|quick, standard|agent, strict|release' },
    level: { type: 'string', description: 'The same as the positional: smoke|quick, standard|agent, strict|release' },
    smoke: { type: 'boolean', description: 'Generation drift, fw check, typecheck, runtime boot probe' },
    standard: { type: 'boolean', description: 'smoke plus the app’s tests (recorded for fw repair diagnose)' },
    strict: { type: 'boolean', description: 'standard plus migrations, the AI red team’s structural pass and the production build' },
    root: { type: 'string', description: 'The app directory', default: '.' },
    json: { type: 'boolean', description: 'Print one JSON document { ok, level, gates, durationMs }' },
  },
  async run({ args }) {
    const level = chooseLevel([args.preset, args.level, args.smoke ? 'smoke' : undefined, args.standard ? 'standard' : undefined, args.strict ? 'strict' : undefined]);
    // Each gate prints as it finishes (the slow ones show a progress line on a terminal meanwhile).
    const progress = createProgress();
    const report = await verify({
      root: args.root,
      level,
      ...(args.json ? {} : {
        onGateStart: (name: GateName) => progress.start(`${name}…`),
        onGate: (gate: GateResult) => {
          progress.stop();
          printGate(gate);
        },
      }),
    });
    if (args.json) printJson(report);
    else {
      const count = (s: GateResult['status']) => report.gates.filter((g) => g.status === s).length;
      log(`fw verify (${report.level}): ${count('passed')} passed, ${count('failed')} failed, ${count('skipped')} skipped in ${report.durationMs} ms`);
    }
    return { exitCode: report.ok ? 0 : 1 };
  },
});

/** One level from the positional, --level and the flags; naming two different ones is an error. */
function chooseLevel(named: Array<string | undefined>): VerifyLevel {
  const chosen = [...new Set(named.filter((n): n is string => Boolean(n)).map(resolveVerifyLevel))];
  if (chosen.length > 1) {
    throw new FwFailure('invalid_arguments', `Choose one verify level, not ${chosen.join(' and ')}.`, { suggestions: ['fw verify --smoke', 'fw verify agent', 'fw verify --level release'] });
  }
  return chosen[0] ?? 'standard';
}

function printGate(gate: GateResult): void {
  const mark = gate.status === 'passed' ? '✔' : gate.status === 'failed' ? '✖' : '–';
  log(`${mark} ${gate.name} ${gate.status === 'skipped' ? `skipped: ${gate.reason}` : `(${gate.durationMs} ms)`}`);
  for (const command of gate.ran) log(`    ran: ${command}`);
  for (const d of gate.diagnostics) {
    if (d.severity === 'info') continue;
    log(`    ${d.path ? `${d.path} ` : ''}${d.severity} ${d.code} ${d.message.split('\n')[0]}`);
    for (const line of formatFix(d, '      ')) log(line);
  }
}
