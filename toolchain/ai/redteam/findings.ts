/** What the red team reports: one finding per problem, located to a tool or an agent, with a fix. */
export interface RedteamFinding {
  code: RedteamCode;
  severity: 'critical' | 'high' | 'medium' | 'low';
  /** `fail` makes `fw ai redteam` exit non-zero; `warn` does not. */
  status: 'fail' | 'warn';
  tool: string | null;
  agent: string | null;
  message: string;
  /** What was observed (the effect, never model text judged by a model). */
  evidence?: string;
  hint: string;
}

export type RedteamCode =
  // Structural pass.
  | 'approval_bypass_risk'
  | 'read_write_drift'
  | 'secret_like_surface'
  | 'unbounded_step_loop'
  // Model-level probes.
  | 'prompt_injection_write'
  | 'secret_exfiltration'
  | 'external_approval_bypass'
  | 'cross_tenant_data'
  | 'indirect_injection_write'
  | 'forged_approval_accepted'
  | 'approval_replayed'
  | 'approval_cross_user';

/** Fails make the run fail; critical and high findings are fails, the rest warnings. */
export function statusOf(severity: RedteamFinding['severity']): RedteamFinding['status'] {
  return severity === 'critical' || severity === 'high' ? 'fail' : 'warn';
}
