/**
 * One rerun of a group: its liveQuery through the entry pipeline (admitted at subscribe, so straight to
 * the handler), what it read installed as the group's read set, and a changed result fanned out to
 * every started subscriber — or the failure, to them and to `onError`.
 */
import type { Kysely } from 'kysely';
import { failSpan, inSpan, type Span } from '../../telemetry/tracing.ts';
import { recordRerun } from '../../telemetry/metrics.ts';
import type { EntryDefinition } from '../../core/entry-types.ts';
import { jsonText } from '../../core/json-text.ts';
import type { Schema } from '../../core/schema.ts';
import { FwError, toFwError } from '../../core/errors.ts';
import { resolveTraceId } from '../../core/trace.ts';
import { invokeEntry } from '../../entry/pipeline.ts';
import { clockReads, unprovenFunctions } from '../function-reads.ts';
import { createReadRecorder, type ReadRecorder } from '../read-recorder.ts';
import type { ReadSet } from '../read-set.ts';
import type { HubContext } from './context.ts';
import type { FanOut } from './fan-out.ts';
import { MAX_COVERS, refreshOf, wholeTables, type Group, type Groups } from './groups.ts';
import type { Scheduler } from './scheduling.ts';

/** One run of the group: alone in its own transaction, or in `shared` (then a failure is thrown, not reported). */
export type RunGroup = (group: Group, shared?: Kysely<any>, revision?: number) => Promise<void>;

export interface RerunOptions {
  groups: Groups;
  fanOut: FanOut;
  scheduler: Pick<Scheduler, 'committedRevision' | 'missedDuringRun'>;
}

export function createRunGroup(context: HubContext, { groups, fanOut, scheduler }: RerunOptions): RunGroup {
  const { db, counters, onError } = context;

  function runGroup(group: Group, shared?: Kysely<any>, revision?: number): Promise<void> {
    return inSpan(`fw.live.rerun ${group.name}`, { attributes: { 'fw.live.query': group.name, 'fw.live.batched': shared !== undefined } }, (span) =>
      runGroupTraced(group, span, shared, revision),
    );
  }

  async function runGroupTraced(group: Group, span: Span, shared?: Kysely<any>, sharedRevision?: number): Promise<void> {
    // Read before the query (in a shared transaction: before its first statement): the snapshot then
    // reflects at least every change up to this revision.
    const revision = sharedRevision ?? scheduler.committedRevision();
    const traceId = span.isRecording() ? span.spanContext().traceId : resolveTraceId(undefined);
    // Writes that arrive during this run wake the next one, and count from their own time.
    const wokenByWriteAtMs = group.wokenByWriteAtMs;
    group.wokenByWriteAtMs = undefined;
    const covers = group.wokenByRevisions;
    group.wokenByRevisions = [];
    const recorder = createReadRecorder(context.app?.schema, context.textSemantics);
    const started = performance.now();
    let delivered = false;
    /** Installs what the run read and fans its result out; runs before the read-only COMMIT. */
    const deliver = (result: unknown) => {
      const declared = declaredReads(group.entry);
      if (recorder.rawStatements > 0 && declared.length === 0) {
        throw new FwError(
          'internal',
          `liveQuery "${group.name}" runs raw SQL, so fw cannot see which tables it reads. Declare them: liveQuery({ reads: ['table', …], … }).`,
        );
      }
      // A view, another schema's table, a table the schema does not declare, a function that may read
      // any of those: no capture trigger logs what they read, so the group would never rerun for it.
      // Refused unless the liveQuery says what it reads.
      const unknown = declared.length === 0 ? unmanagedReads(recorder) : [];
      const functions = declared.length === 0 ? unprovenFunctions(recorder.functions, context.functionCatalog).map((name) => `${name}()`) : [];
      if (unknown.length + functions.length > 0) {
        throw new FwError(
          'internal',
          `liveQuery "${group.name}" reads ${[...unknown, ...functions].map((name) => `"${name}"`).join(', ')}, which fw does not capture writes to (not a table of the app's schema: a view, another schema's table, or a function that may read tables), so it would never update. Declare the tables it depends on: liveQuery({ reads: ['table', …], … }).`,
          {
            diagnostics: [
              ...unknown.map((name) => ({ path: `liveQuery.${group.name}`, code: 'unmanaged_read', message: `"${name}" is not a table fw captures writes to.` })),
              ...functions.map((name) => ({ path: `liveQuery.${group.name}`, code: 'unmanaged_read', message: `"${name}" is a function fw cannot prove reads no table.` })),
            ],
          },
        );
      }
      // An answer that changes with time alone is rerun on the schedule the liveQuery declares.
      // So does one whose values read it when parsed ('now', 'today', age(ts): clock-inputs.ts).
      const clock = clockReads(recorder.functions);
      if (clock.length + recorder.clockInputs.size > 0 && refreshOf(group.entry) === undefined) {
        const shown = [...clock.map((name) => (name.startsWith('current_') || name.startsWith('local') ? name : `${name}()`)), ...recorder.clockInputs];
        throw new FwError(
          'internal',
          `liveQuery "${group.name}" reads the clock (${shown.join(', ')}), so its answer changes as time passes with no write to rerun it. Declare how often to rerun it: liveQuery({ refreshMs: 60_000, … }).`,
          { diagnostics: [{ path: `liveQuery.${group.name}`, code: 'clock_read', message: `reads the clock (${shown.join(', ')}) without refreshMs.` }] },
        );
      }
      // A result no subscriber can be sent fails the run (before it counts as delivered).
      const json = jsonText(result === undefined ? null : result, `liveQuery "${group.name}"`, 'result');
      delivered = true;
      group.lastRunMs = performance.now() - started;
      group.lastRunAt = Date.now();
      counters.runs++;
      group.runCount++;
      if (group.disposed) return;
      groups.indexReads(group, runReadSet(recorder, context.app?.schema, declared));
      const [only, ...more] = recorder.statements;
      group.lastStatement = only && more.length === 0 && only.kind === 'SelectQueryNode' ? { node: only } : undefined;
      // A follow-up run (the group's single flight is running this one), not a lost write.
      if (scheduler.missedDuringRun(group, group.readSet!)) void group.runs.wake();
      group.lastError = undefined;
      const changed = json !== group.json;
      span.setAttributes({ 'fw.live.rows': Array.isArray(result) ? result.length : result == null ? 0 : 1, 'fw.live.changed': changed, 'fw.live.subscribers': group.subscribers.size });
      if (!changed) {
        counters.unchangedRuns++;
        group.unchangedRuns++;
      } else {
        group.json = json;
        group.seq++;
        group.covers = covers;
      }
      group.revision = Math.max(group.revision, revision);
      for (const subscription of group.subscribers) {
        if (subscription.started && subscription.sentSeq !== group.seq) fanOut.sendSnapshot(subscription);
      }
      recordRerun(group.name, changed, wokenByWriteAtMs);
    };
    try {
      // Admitted at subscribe (and again when the app reloads): a rerun goes straight to the handler.
      const run = { name: group.name, auth: group.auth, traceId, external: true, args: group.args, admitted: true, span: false, plugins: [recorder], onReadResult: deliver, ...(shared ? { within: shared } : {}) };
      const result = await invokeEntry({ app: context.app!, db, ...(context.clock ? { clock: context.clock } : {}) }, group.entry, run);
      if (!delivered) deliver(result);
    } catch (thrown) {
      if (shared && !delivered) throw thrown;
      const error = toFwError(thrown);
      // The result went out before a COMMIT that then failed: what was read stands (nothing was written).
      if (delivered) {
        if (error.status >= 500) onError(error, traceId);
        return;
      }
      group.lastRunMs = performance.now() - started;
      group.lastRunAt = Date.now();
      counters.runs++;
      group.runCount++;
      failSpan(span, error);
      group.lastError = error;
      // The next run that succeeds includes these writes: it says so.
      group.wokenByRevisions = [...new Set([...covers, ...group.wokenByRevisions])].slice(0, MAX_COVERS);
      // What made the run fail may lie in rows its last good read set does not cover (the failing run
      // read other ones): until a run succeeds, the group reruns on any write to a table the liveQuery
      // is known to read, or this run read, besides its last read set.
      if (!group.disposed) {
        const tables = new Set([...(groups.knownReads.get(group.name) ?? []), ...recorder.tables, ...declaredReads(group.entry), ...(group.readSet?.keys() ?? [])]);
        groups.indexReads(group, wholeTables([...tables].filter((table) => !recorder.cteNames.has(table) || context.app?.schema.tables[table] !== undefined)));
        // Writes that landed while this run failed were matched against the read set before it: any of
        // them that concerns the wider one now reruns the group (a run that succeeds clears the error).
        if (scheduler.missedDuringRun(group, group.readSet!)) void group.runs.wake();
      }
      let streamed = false;
      for (const subscription of group.subscribers) {
        if (subscription.started) fanOut.sendError(subscription, error, traceId, false);
        streamed ||= subscription.started;
      }
      // A first run that fails is reported by the request that waits for it (it answers with the error).
      if (error.status >= 500 && streamed) onError(error, traceId);
    }
  }

  /** What the run read that no capture trigger watches (CTE names are the statement's own, not relations). */
  function unmanagedReads(recorder: ReadRecorder): string[] {
    const tables = context.app?.schema.tables;
    if (!tables) return [];
    const unknown = [...recorder.tables].filter((name) => !Object.hasOwn(tables, name) && !recorder.cteNames.has(name));
    return [...unknown, ...recorder.otherSchemaTables].sort();
  }

  return runGroup;
}

/**
 * The read set a run installs: what its statements read (the recorder's read-set builder), CTE names
 * that are no table of the schema dropped, and declared tables read whole. The property tests use it
 * as it is, so that they check what the hub indexes.
 */
export function runReadSet(recorder: ReadRecorder, schema: Schema | undefined, declared: readonly string[]): ReadSet {
  const readSet = recorder.readSet();
  for (const name of recorder.cteNames) if (!schema?.tables[name]) readSet.delete(name);
  for (const table of declared) readSet.set(table, [{ conditions: [] }]);
  return readSet;
}

function declaredReads(entry: EntryDefinition): string[] {
  const reads = entry.options.reads;
  return Array.isArray(reads) ? (reads as string[]) : [];
}
