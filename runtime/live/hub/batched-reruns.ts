/**
 * Reruns of groups of one identity woken in the same turn of the event loop go together: in one
 * read-only transaction, and the statements of groups of one query shape as one (multiplex.ts).
 */
import type { Kysely } from 'kysely';
import { resolveTraceId } from '../../core/trace.ts';
import { compiledText, prefetchingKysely, prefetchStatements, withRowPosition, type Prefetched } from '../multiplex.ts';
import type { HubContext } from './context.ts';
import { identityKey, type Group } from './groups.ts';
import type { RunGroup } from './reruns.ts';

export interface BatchedReruns {
  /** Runs the group with the other groups of its identity woken in the same turn (runBatch). Never rejects. */
  rerun(group: Group): Promise<void>;
}

export interface BatchedRerunsOptions {
  runGroup: RunGroup;
  /** The revision to label a run that starts now with (scheduling.ts). */
  committedRevision(): number;
}

export function createBatchedReruns(context: HubContext, { runGroup, committedRevision }: BatchedRerunsOptions): BatchedReruns {
  const { db, counters } = context;
  /** Groups due to run, by identity, gathered until the current turn of the event loop ends. */
  const queued = new Map<string, Array<{ group: Group; done: () => void }>>();
  let flushQueued = false;
  /** liveQueries whose statements failed as one multiplexed statement: not tried again in this process. */
  const notMultiplexed = new Set<string>();

  function rerun(group: Group): Promise<void> {
    return new Promise((resolve) => {
      const key = identityKey(group.auth);
      let list = queued.get(key);
      if (!list) queued.set(key, (list = []));
      list.push({ group, done: resolve });
      if (!flushQueued) {
        flushQueued = true;
        queueMicrotask(flush);
      }
    });
  }

  function flush(): void {
    flushQueued = false;
    for (const [key, list] of queued) {
      queued.delete(key);
      for (let i = 0; i < list.length; i += MAX_BATCH) {
        const chunk = list.slice(i, i + MAX_BATCH);
        const run = chunk.length === 1 ? runGroup(chunk[0]!.group) : runBatch(chunk.map((item) => item.group));
        void run.catch(() => undefined).finally(() => {
          for (const item of chunk) item.done();
        });
      }
    }
  }

  /**
   * Reruns groups of one identity in ONE read-only transaction (one BEGIN, identity proof and COMMIT
   * instead of one each), one handler after the other; each fans out as soon as its handler returns.
   * When one fails, the transaction is given up and that group and the ones after it run alone, so
   * every group ends exactly as its solo run would (a failure then is its own).
   */
  async function runBatch(batch: Group[]): Promise<void> {
    let done = 0;
    counters.batches++;
    // Read before the transaction's first statement (the multiplexed one): every run's snapshot then
    // reflects at least the changes up to this revision.
    const revision = committedRevision();
    try {
      const label = `liveQuery ${[...new Set(batch.map((group) => group.name))].join(', ')} (batched reruns)`;
      await db.transaction({ readOnly: true, auth: batch[0]!.auth, traceId: resolveTraceId(undefined), label }, async (trx) => {
        const prefetched = await multiplex(trx, batch);
        for (const group of batch) {
          if (!group.disposed && !context.closed) {
            try {
              const mine = prefetched.get(group);
              const before = mine?.size ?? 0;
              await runGroup(group, mine ? prefetchingKysely(trx, mine) : trx, revision);
              if (mine && mine.size < before) counters.multiplexedRuns++;
              counters.batchedRuns++;
            } catch {
              return; // COMMIT then answers ROLLBACK; the rest run alone below
            }
          }
          done++;
        }
      });
    } catch {
      // BEGIN failed, or the transaction was given up: what did not run goes alone.
    }
    counters.batchFallbacks += batch.length - done;
    await Promise.all(batch.slice(done).map((group) => runGroup(group)));
  }

  /**
   * Sends the statements of groups of one query shape as one (multiplex.ts): groups of the same
   * liveQuery whose last run issued exactly one SELECT, with the same SQL text. A failure leaves the
   * transaction aborted: `runBatch` then runs the groups alone, and the liveQuery is not multiplexed again.
   */
  async function multiplex(trx: Kysely<any>, batch: Group[]): Promise<Map<Group, Prefetched>> {
    const shapes = new Map<string, Group[]>();
    for (const group of batch) {
      const statement = group.lastStatement;
      if (!statement || notMultiplexed.has(group.name)) continue;
      statement.multiplexable ??= withRowPosition(statement.node) !== undefined;
      if (!statement.multiplexable) continue;
      statement.sql ??= compiledText(statement.node);
      const key = JSON.stringify([group.name, statement.sql]);
      const same = shapes.get(key) ?? [];
      same.push(group);
      shapes.set(key, same);
    }
    const prefetched = new Map<Group, Prefetched>();
    for (const groups of shapes.values()) {
      if (groups.length < 2) continue;
      try {
        const results = await prefetchStatements(trx, groups.map((group) => group.lastStatement!.node));
        counters.multiplexed++;
        groups.forEach((group, index) => prefetched.set(group, results[index]!));
      } catch (thrown) {
        counters.multiplexFailures++;
        notMultiplexed.add(groups[0]!.name);
        throw thrown;
      }
    }
    return prefetched;
  }

  return { rerun };
}

/** Groups of one identity rerun in one transaction at most (more go in parallel transactions). */
const MAX_BATCH = 32;
