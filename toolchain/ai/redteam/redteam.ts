import path from 'node:path';
import { fwVersion } from '../../../runtime/version.ts';
import { analyseApp } from '../../../plugin/analyse/app-model.ts';
import { loadAppOnce } from '../../../plugin/load-app-once.ts';
import type { RedteamFinding } from './findings.ts';
import { type ProbeOptions, type ProbeResult, runProbes } from './probes.ts';
import { structuralFindings } from './structural.ts';

export interface RedteamOptions extends ProbeOptions {
  root: string;
  /** Also run the probes against the app's agents (`--model-level`). */
  modelLevel?: boolean;
}

export interface RedteamReport {
  ok: boolean;
  fwVersion: string;
  level: 'structural' | 'model-level';
  /** `mock` (the adversarial scripted model) or the live model id. */
  model: string | null;
  findings: RedteamFinding[];
  probes: ProbeResult[];
  summary: { fail: number; warn: number; probesPassed: number; probesFailed: number; probesSkipped: number };
}

/**
 * `fw ai redteam`: the structural pass, and with `modelLevel` the probes. `ok` is false when any
 * finding fails (critical or high).
 *
 * @example
 *   const report = await redteam({ root: '.', modelLevel: true });
 *   report.findings.filter((f) => f.status === 'fail')
 */
export async function redteam(options: RedteamOptions): Promise<RedteamReport> {
  const root = path.resolve(options.root);
  const app = await loadAppOnce(root);
  const model = await analyseApp(root, app);
  const structural = structuralFindings(model);
  const probed = options.modelLevel ? await runProbes(app, options) : { probes: [], findings: [] };
  const findings = [...structural, ...probed.findings];
  const fail = findings.filter((f) => f.status === 'fail').length;
  return {
    ok: fail === 0,
    fwVersion,
    level: options.modelLevel ? 'model-level' : 'structural',
    model: options.modelLevel ? (options.live ? `${options.live.provider}:${options.live.model}` : 'mock') : null,
    findings,
    probes: probed.probes,
    summary: {
      fail,
      warn: findings.length - fail,
      probesPassed: probed.probes.filter((p) => p.status === 'pass').length,
      probesFailed: probed.probes.filter((p) => p.status === 'fail').length,
      probesSkipped: probed.probes.filter((p) => p.status === 'skipped').length,
    },
  };
}
