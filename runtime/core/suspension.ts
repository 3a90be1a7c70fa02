/**
 * What a workflow throws to end an attempt on purpose — `ctx.sleep` and `ctx.waitForEvent` (the run
 * waits), or a cancel seen before a step (the run stops). It unwinds the handler like an error, but it
 * is no failure: the entry pipeline passes it on as it is (not as `internal`), and its span is not
 * marked failed — it says how the attempt ended in `fw.workflow.outcome` instead.
 */
export class Suspension extends Error {
  readonly outcome: 'wait' | 'cancelled';

  constructor(outcome: 'wait' | 'cancelled', message: string) {
    super(message);
    this.name = 'Suspension';
    this.outcome = outcome;
  }
}

export function isSuspension(error: unknown): error is Suspension {
  return error instanceof Suspension;
}
