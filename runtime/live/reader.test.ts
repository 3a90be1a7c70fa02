import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { until as untilShared } from '../../e2e/support/until.ts';
import { createDatabase, type FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { createInvalidationReader, type InvalidationBatch, type InvalidationReader, type ReaderOptions } from './reader.ts';

const T1 = '11111111-1111-4111-8111-111111111111';
const HOUR = 3_600_000;
const schema = defineSchema({ notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text() }) });

const until = (condition: () => boolean, what: string) => untilShared(async () => condition(), what, { intervalMs: 10 });

/**
 * Holds PGlite's only connection until `release()`: a read started meanwhile stays in flight (it waits
 * for the connection), exactly like a slow read.
 */
async function holdConnection(db: FwDatabase): Promise<{ release(): Promise<void> }> {
  let release!: () => void;
  let held!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const acquired = new Promise<void>((resolve) => (held = resolve));
  const done = db.admin.connection().execute(async () => {
    held();
    await gate;
  });
  await acquired;
  return {
    async release() {
      release();
      await done;
    },
  };
}

describe('the invalidation reader (PGlite)', () => {
  let db: FwDatabase;
  let reader: InvalidationReader | undefined;
  const batches: InvalidationBatch[] = [];

  beforeAll(async () => {
    db = await createDatabase({ dataDir: 'memory://' });
    expect((await applyMigration(db, schema)).blocked).toEqual([]);
  });

  afterEach(async () => {
    await reader?.close();
    reader = undefined;
    batches.length = 0;
    vi.restoreAllMocks();
  });

  afterAll(async () => {
    await db?.close();
  });

  const open = async (options: Partial<Pick<ReaderOptions, 'pageSize' | 'listen' | 'onNotice' | 'noticeReadDelayMs'>> = {}) => {
    reader = createInvalidationReader(db, {
      pollIntervalMs: HOUR,
      safetyPollIntervalMs: HOUR,
      ...options,
      onInvalidations: (batch) => batches.push(batch),
    });
    await reader.start();
    await until(() => !reader!.status().reading, 'the start-up read');
    return reader;
  };
  const insertNote = (title: string) =>
    db.transaction({ readOnly: false, auth: { kind: 'user', userId: 'u', tenantId: T1, role: 'r' } }, (trx) => trx.insertInto('notes').values({ title }).execute());

  it('folds the wakeups that arrive during a read into exactly one follow-up read', async () => {
    const live = await open();
    const before = live.status().reads;
    const hold = await holdConnection(db);
    live.wake(); // starts a read, which now waits for the connection
    expect(live.status().reading).toBe(true);
    for (let i = 0; i < 25; i++) live.wake();
    await hold.release();
    await until(() => !live.status().reading, 'the reads to finish');
    expect(live.status().reads - before).toBe(2);
    expect(batches).toEqual([]); // nothing was written, so nothing was delivered

    // When idle, a wakeup reads at once, and a write is delivered with the new revision.
    await insertNote('a');
    await until(() => batches.length === 1, 'the write');
    expect(batches[0]!.rows.map((r) => [r.table, r.tenantId])).toEqual([['notes', T1]]);
    expect(batches[0]!.revision).toBe(live.revision());
    expect(batches[0]!.expired).toBe(false);
  });

  it("defers the read a notice triggers until the notice's work is done (it only confirms the notice)", async () => {
    let finish!: () => void;
    const work = new Promise<void>((resolve) => (finish = resolve));
    const noticed: number[] = [];
    const live = await open({
      noticeReadDelayMs: HOUR,
      onNotice: (row) => {
        noticed.push(row.revision);
        return work;
      },
    });
    await insertNote('noticed');
    await until(() => live.status().waitingForNotice, "the read to wait for the notice's work");
    expect(noticed).toHaveLength(1);
    expect(batches).toEqual([]);
    finish();
    await until(() => batches.length === 1, 'the read after the work');
    expect(batches[0]!.rows.map((r) => r.revision)).toEqual(noticed);
    expect(live.status()).toMatchObject({ readsAfterNotice: 1, waitingForNotice: false, notices: 1 });
  });

  it('delivers every row exactly once when reading page by page', async () => {
    const live = await open({ pageSize: 2 });
    const hold = await holdConnection(db);
    live.wake();
    await hold.release();
    for (let i = 0; i < 5; i++) await insertNote(`n${i}`);
    await until(() => batches.flatMap((b) => b.rows).length >= 5 && !live.status().reading, 'five rows');
    const revisions = batches.flatMap((b) => b.rows.map((r) => r.revision));
    expect(revisions).toHaveLength(5);
    expect(new Set(revisions).size).toBe(5);
    expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
    expect(live.revision()).toBe(revisions.at(-1));
  });

  it('reports a failing read once, keeps running and recovers on a later wakeup', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const live = await open();
    await sql`alter table _fw_live_invalidations rename to _fw_live_gone`.execute(db.admin);
    try {
      for (let i = 0; i < 3; i++) {
        live.wake();
        await until(() => !live.status().reading, 'a failed read');
      }
      expect(live.status()).toMatchObject({ failing: true, failedReads: 3 });
      expect(live.status().lastError).toMatch(/_fw_live_invalidations/);
      expect(errors).toHaveBeenCalledTimes(1);
    } finally {
      await sql`alter table _fw_live_gone rename to _fw_live_invalidations`.execute(db.admin);
    }
    await insertNote('after the outage'); // its notification wakes the reader
    await until(() => batches.length === 1, 'the write after recovery');
    expect(live.status()).toMatchObject({ failing: false, lastError: null });
    expect(batches[0]!.rows.map((r) => r.table)).toEqual(['notes']);
  });

  it('waits for the read in flight when closing', async () => {
    // Polling only: closing PGlite's listener needs the held connection too, which would hide whether
    // close() waits for the read itself.
    const live = await open({ listen: false });
    const hold = await holdConnection(db);
    live.wake();
    expect(live.status().reading).toBe(true);
    // What close() leaves behind when it resolves: a read still in flight there would be a close that did not wait.
    let readingWhenClosed: boolean | undefined;
    const closing = live.close().then(() => (readingWhenClosed = live.status().reading));
    await hold.release();
    await closing;
    expect(readingWhenClosed).toBe(false);
    reader = undefined;
  });
});
