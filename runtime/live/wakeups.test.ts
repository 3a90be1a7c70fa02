import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestPostgresDatabase, testDatabaseUrl } from '../../e2e/support/postgres.ts';
import { until as untilShared } from '../../e2e/support/until.ts';
import { createDatabase, type FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import type { Invalidation } from './log.ts';
import { createInvalidationReader, type InvalidationReader, type ReaderOptions } from './reader.ts';
import { createWakeups, type WakeReason } from './wakeups.ts';

if (!testDatabaseUrl) console.warn('wakeups.test.ts: FW_TEST_DATABASE_URL is not set, so the PostgreSQL suite is skipped (PGlite runs).');

const T1 = '11111111-1111-4111-8111-111111111111';
const HOUR = 3_600_000;
const schema = defineSchema({ notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text() }) });
const insertNote = (db: FwDatabase, title: string) =>
  db.transaction({ readOnly: false, auth: { kind: 'user', userId: 'u', tenantId: T1, role: 'r' } }, (trx) => trx.insertInto('notes').values({ title }).execute());

/** A reader whose batches can be awaited. */
function openReader(db: FwDatabase, options: Omit<ReaderOptions, 'onInvalidations'>) {
  const rows: Invalidation[] = [];
  const waiters: Array<() => void> = [];
  const reader = createInvalidationReader(db, {
    ...options,
    onInvalidations(batch) {
      rows.push(...batch.rows);
      for (const waiter of waiters.splice(0)) waiter();
    },
  });
  return {
    reader,
    rows,
    /** Resolves once `count` rows arrived in all. */
    async received(count: number): Promise<Invalidation[]> {
      while (rows.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
      return rows;
    },
  };
}

const until = (condition: () => boolean, what: string) => untilShared(async () => condition(), what, { intervalMs: 20 });

describe.skipIf(!testDatabaseUrl)('wakeups on PostgreSQL', () => {
  let db: FwDatabase;
  let drop: (() => Promise<void>) | undefined;
  const readers: InvalidationReader[] = [];

  beforeAll(async () => {
    const pg = await createTestPostgresDatabase();
    drop = pg.drop;
    db = await createDatabase({ url: pg.url });
    expect((await applyMigration(db, schema)).blocked).toEqual([]);
    vi.spyOn(console, 'error').mockImplementation(() => undefined); // the lost-listener reports
  });

  afterAll(async () => {
    vi.restoreAllMocks();
    try {
      for (const reader of readers) await reader.close();
      await db?.close();
    } finally {
      await drop?.();
    }
  });

  const start = async (options: Omit<ReaderOptions, 'onInvalidations'>) => {
    const opened = openReader(db, options);
    readers.push(opened.reader);
    await opened.reader.start();
    // start() begins a first read without awaiting it; a late one would deliver the rows a test writes
    // next, and the test could not tell which wakeup brought them.
    await until(() => opened.reader.status().reads >= 1 && !opened.reader.status().reading, 'the first read');
    return opened;
  };

  /** Ends the listener's backend from another connection, as a failover or an idle-killer would. */
  const killListener = async () => {
    // Materialized first: a volatile call in the same WHERE could be evaluated before the filter.
    const killed = await sql<{ ok: boolean }>`
      with listener as materialized (
        select pid from pg_stat_activity where application_name = 'fw-live-listener' and datname = current_database()
      )
      select pg_terminate_backend(pid) as ok from listener`.execute(db.admin);
    expect(killed.rows).toEqual([{ ok: true }]);
  };

  it('wakes the reader by NOTIFY alone', async () => {
    const { reader, received } = await start({ pollIntervalMs: HOUR, safetyPollIntervalMs: HOUR });
    expect(reader.status().wakeups).toMatchObject({ mode: 'listen', listener: 'connected' });
    await insertNote(db, 'notified');
    expect((await received(1)).map((r) => [r.table, r.tenantId])).toEqual([['notes', T1]]);
    expect(reader.status().wakeups).toMatchObject({ polls: 0, reconnects: 0 });
    expect(reader.status().wakeups.notifications).toBeGreaterThan(0);
    await reader.close();
    expect(reader.status().wakeups.listener).toBe('off');
  });

  it('polls while the listener is lost and reconnection is held off', async () => {
    const { reader, received } = await start({ pollIntervalMs: 50, safetyPollIntervalMs: HOUR, reconnectMinMs: HOUR });
    await killListener();
    await until(() => reader.status().wakeups.listener === 'reconnecting', 'the listener to be seen lost');
    await insertNote(db, 'polled');
    expect((await received(1)).map((r) => r.table)).toEqual(['notes']);
    expect(reader.status().wakeups.polls).toBeGreaterThan(0);
    expect(reader.status().wakeups.reconnects).toBe(0);
    await reader.close();
  });

  it('re-establishes a lost listener, which delivers notifications again', async () => {
    const { reader, received } = await start({ pollIntervalMs: HOUR, safetyPollIntervalMs: HOUR, reconnectMinMs: 20, reconnectMaxMs: 100 });
    await killListener();
    await until(() => reader.status().wakeups.reconnects >= 1 && reader.status().wakeups.listener === 'connected', 'the listener to reconnect');
    await insertNote(db, 'after reconnect');
    expect((await received(1)).map((r) => r.table)).toEqual(['notes']);
    expect(reader.status().wakeups.polls).toBe(0);
    await reader.close();
  });

  it('keeps retrying a listener that cannot connect, polling meanwhile, without crashing', async () => {
    const url = new URL(testDatabaseUrl!);
    url.pathname = '/fw_t_does_not_exist';
    const reasons: WakeReason[] = [];
    const wakeups = createWakeups(
      { ...db, driver: { kind: 'postgres', url: url.toString() } },
      { onWake: (reason) => reasons.push(reason), pollIntervalMs: 20, reconnectMinMs: 20, reconnectMaxMs: 40 },
    );
    await wakeups.start();
    await until(() => reasons.filter((r) => r === 'poll').length >= 3, 'polls');
    expect(wakeups.status()).toMatchObject({ mode: 'listen', listener: 'reconnecting', reconnects: 0 });
    await wakeups.close();
    expect(wakeups.status().listener).toBe('off');
  });
});

describe('wakeups on PGlite', () => {
  let db: FwDatabase;

  beforeAll(async () => {
    db = await createDatabase({ dataDir: 'memory://' });
    expect((await applyMigration(db, schema)).blocked).toEqual([]);
  });

  afterAll(async () => {
    await db?.close();
  });

  it('wakes the reader through PGlite listen', async () => {
    const { reader, received, rows } = openReader(db, { pollIntervalMs: HOUR, safetyPollIntervalMs: HOUR });
    try {
      await reader.start();
      expect(reader.status().wakeups).toMatchObject({ mode: 'pglite', listener: 'connected' });
      await insertNote(db, 'one');
      await insertNote(db, 'two');
      expect((await received(2)).map((r) => r.table)).toEqual(['notes', 'notes']);
      expect(reader.status().wakeups.polls).toBe(0);
      expect(reader.status().wakeups.notifications).toBeGreaterThan(0);
    } finally {
      await reader.close();
    }
    // After close nothing listens any more: a write is not delivered. A reader still open hears the
    // write; PGlite calls every listener of the channel in one go, so the closed one would have too.
    const before = reader.status().wakeups.notifications;
    const witness = openReader(db, { pollIntervalMs: HOUR, safetyPollIntervalMs: HOUR });
    try {
      await witness.reader.start();
      await until(() => !witness.reader.status().reading, "the witness's first read");
      await insertNote(db, 'three');
      expect((await witness.received(1)).map((r) => r.table)).toEqual(['notes']);
      expect(witness.reader.status().wakeups.notifications).toBeGreaterThan(0);
    } finally {
      await witness.reader.close();
    }
    expect(reader.status().wakeups.notifications).toBe(before);
    expect(rows).toHaveLength(2);
  });

  it('polls only, when listening is off', async () => {
    const reasons: WakeReason[] = [];
    const wakeups = createWakeups(db, { onWake: (reason) => reasons.push(reason), listen: false, pollIntervalMs: 20 });
    await wakeups.start();
    await until(() => reasons.length >= 2, 'polls');
    expect(new Set(reasons)).toEqual(new Set(['poll']));
    expect(wakeups.status()).toMatchObject({ mode: 'poll', listener: 'off' });
    await wakeups.close();
  });
});
