import { defineCommand } from 'citty';
import { redteam } from '../../toolchain/ai/redteam/redteam.ts';
import { liveModel } from '../../toolchain/ai/redteam/live-model.ts';
import { log, printJson } from '../output.ts';

export default defineCommand({
  meta: { name: 'redteam', description: 'Find unsafe AI tools and agents; --model-level also attacks them (effects decide, not text)' },
  args: {
    root: { type: 'string', description: 'The app directory', default: '.' },
    'model-level': { type: 'boolean', description: 'Run the probes (prompt injection, secret exfiltration, external approval bypass, cross-tenant, indirect injection, forged approval)' },
    live: { type: 'boolean', description: 'Probe with a real model instead of the adversarial mock (needs --model; AI_GATEWAY_API_KEY)' },
    provider: { type: 'string', description: 'With --live: gateway (default) or a vendor (openai, anthropic, google, …), reached through the AI Gateway' },
    model: { type: 'string', description: 'With --live: a gateway id such as openai/gpt-4o-mini, or the model of --provider' },
    role: { type: 'string', description: 'Role of the probing callers (default admin)' },
    json: { type: 'boolean', description: 'Print one JSON document' },
  },
  async run({ args }) {
    const report = await redteam({
      root: args.root,
      modelLevel: Boolean(args['model-level'] || args.live),
      ...(args.live ? { live: liveModel(args.provider, args.model) } : {}),
      ...(args.role ? { role: args.role } : {}),
    });
    if (args.json) printJson(report);
    else {
      for (const f of report.findings) log(`${f.status.toUpperCase()} ${f.severity} ${f.code} ${f.tool ?? f.agent ?? ''}: ${f.message}${f.evidence ? ` [${f.evidence}]` : ''}\n  fix: ${f.hint}`);
      for (const p of report.probes) log(`probe ${p.probe} (${p.agent}): ${p.status} — ${p.evidence}`);
      log(`fw ai redteam: ${report.summary.fail} failing, ${report.summary.warn} warning finding(s)${report.level === 'model-level' ? `; probes ${report.summary.probesPassed} passed, ${report.summary.probesFailed} failed, ${report.summary.probesSkipped} skipped, ${report.summary.probesInconclusive} inconclusive` : ''}.`);
    }
    return { exitCode: report.ok ? 0 : 1 };
  },
});
