import { defineCommand } from 'citty';
import type { OutboxOutcome } from '../../runtime/outbox/worker.ts';
import { startWorkerProcess } from '../../toolchain/worker/worker-process.ts';
import { log, printJson, untilSignal } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

// Not `export default defineCommand(…)`: see cli/commands/ai.ts (TypeScript 6 and rewritten `.ts` imports).
const worker = defineCommand({
  meta: commandMeta('worker'),
  args: {
    root: { type: 'string', description: 'The app directory', default: '.' },
    'poll-ms': { type: 'string', description: 'How often to look for due events, in ms', default: '1000' },
    'batch-size': { type: 'string', description: 'Events delivered at once', default: '10' },
    'lease-ms': { type: 'string', description: 'How long a claimed event is held before another worker may take it (renewed while it runs)', default: '30000' },
    json: { type: 'boolean', description: 'Print one JSON line ({"ok":true,"workerId",…}) once running; logs go to stderr' },
  },
  async run({ args }) {
    const session = await startWorkerProcess({
      root: args.root,
      pollMs: wholeNumber(args['poll-ms'], '--poll-ms'),
      batchSize: wholeNumber(args['batch-size'], '--batch-size'),
      leaseMs: wholeNumber(args['lease-ms'], '--lease-ms'),
      onOutcome: (outcome) => log(describe(outcome)),
    });
    const count = (kind: string) => [...session.app.entries.values()].filter((entry) => entry.kind === kind).length;
    const [actions, workflows] = [count('action'), count('workflow')];
    const summary = { ok: true, workerId: session.worker.workerId, database: session.db.dialect, actions, workflows };
    if (args.json) printJson(summary);
    else log(`fw worker ${summary.workerId}: delivering events to ${actions} action(s) and running ${workflows} workflow(s) (${summary.database}). Ctrl-C to stop.`);
    await untilSignal();
    await session.close();
  },
});

export default worker;

function describe(outcome: OutboxOutcome): string {
  const row = `"${outcome.event}" #${outcome.outboxId} (attempt ${outcome.attempt}, trace ${outcome.traceId ?? '–'})`;
  const to = outcome.actions.length > 0 ? ` → ${outcome.actions.join(', ')}` : '';
  switch (outcome.kind) {
    case 'delivered':
      return `fw worker: delivered ${row}${to}${outcome.message ? `: ${outcome.message}` : ''}`;
    case 'retry':
      return `fw worker: failed ${row}${to}, retrying in ${Math.round((outcome.delayMs ?? 0) / 100) / 10} s: ${outcome.message}`;
    case 'wait':
      return `fw worker: ${row}${to} waits until ${outcome.resumeAt}`;
    case 'dead':
      return `fw worker: dead ${row}${to}: ${outcome.message}`;
    case 'lease-lost':
      return `fw worker: ${row} was taken over by another worker (this worker's lease expired); its outcome was dropped`;
  }
}

function wholeNumber(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new TypeError(`${flag} must be a whole number ≥ 1, got "${value}".`);
  return n;
}
