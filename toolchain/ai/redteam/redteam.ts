import path from 'node:path';
import { fwVersion } from '../../../runtime/core/version.ts';
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
  summary: { fail: number; warn: number; probesPassed: number; probesFailed: number; probesSkipped: number; probesInconclusive: number };
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
  return {
    ...redteamSummary(findings, probed.probes),
    fwVersion,
    level: options.modelLevel ? 'model-level' : 'structural',
    model: options.modelLevel ? (options.live ? `${options.live.provider}:${options.live.model}` : 'mock') : null,
    findings,
    probes: probed.probes,
  };
}

/**
 * Whether a run is ok, and its counts: no failing finding, and no probe that applied but could not
 * carry out its attack (an inconclusive probe proves nothing, so it never counts as safe).
 */
export function redteamSummary(findings: readonly RedteamFinding[], probes: readonly ProbeResult[]): Pick<RedteamReport, 'ok' | 'summary'> {
  const fail = findings.filter((f) => f.status === 'fail').length;
  const count = (status: ProbeResult['status']) => probes.filter((p) => p.status === status).length;
  return {
    ok: fail === 0 && count('inconclusive') === 0,
    summary: {
      fail,
      warn: findings.length - fail,
      probesPassed: count('pass'),
      probesFailed: count('fail'),
      probesSkipped: count('skipped'),
      probesInconclusive: count('inconclusive'),
    },
  };
}
