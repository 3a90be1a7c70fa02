/**
 * One rerun per group across the processes that share a PostgreSQL database (hub/cluster.ts), through
 * three real fw processes (e2e/support/live-cluster-process.ts) and subscribers on the SSE wire:
 *
 * - a write reruns the group exactly once cluster-wide — counted by each process's own run counter for
 *   the group — and every process's subscribers get the frame; another tenant's group, same args, never
 *   gets it;
 * - `kill -9` of the owner right after a write: a surviving process takes the group over and both that
 *   write and one made after the kill reach every surviving subscriber;
 * - handler SQL cannot forge a published result: writing `_fw.live_groups` is refused, and notices sent
 *   on the cluster channel deliver nothing that fw did not publish.
 *
 * PostgreSQL only (PGlite is one process, which keeps the single-process path): registered when
 * FW_TEST_DATABASE_URL is set.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readEventStream } from '../../client/sse.ts';
import { canonicalJson } from '../core/canonical-json.ts';
import { createDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { clusterSchema } from '../../e2e/support/live-cluster-app.ts';
import { createTestPostgresDatabase, testDatabaseUrl } from '../../e2e/support/postgres.ts';
import type { LiveStatus } from './hub.ts';
import { groupKey } from './hub/groups.ts';

const processScript = fileURLToPath(new URL('../../e2e/support/live-cluster-process.ts', import.meta.url));
/** Bounds a hang only: every wait polls for its final state. */
const DEADLINE_MS = 60_000;

interface FwProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function startProcess(databaseUrl: string): Promise<FwProcess> {
  const child = spawn(process.execPath, [processScript], { env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (line) => resolve((JSON.parse(line) as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the fw process exited (${code}) before listening: ${stderr}`)));
  });
  return {
    url,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const hung = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(hung);
    },
  };
}

interface Identity {
  userId: string;
  tenantId: string;
}

const headers = (who: Identity) => ({ 'x-fw-user-id': who.userId, 'x-fw-tenant-id': who.tenantId, 'x-fw-role': 'member' });

/** A subscriber on one process: every snapshot's result it received, in order, and every event's name and id. */
interface Subscriber {
  results: Array<Array<{ topic: string; body: string }>>;
  events: Array<{ event: string | undefined; id: string | undefined }>;
  latest(): string[] | undefined;
  close(): void;
}

function subscribe(url: string, who: Identity, topic: string, lastEventId?: string): Subscriber {
  const results: Subscriber['results'] = [];
  const events: Subscriber['events'] = [];
  const abort = new AbortController();
  void (async () => {
    const response = await fetch(`${url}/live/notesByTopic?args=${encodeURIComponent(JSON.stringify({ topic }))}`, {
      headers: { ...headers(who), ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      signal: abort.signal,
    });
    await readEventStream(response, {
      signal: abort.signal,
      onEvent: (event) => {
        events.push({ event: event.event, id: event.id });
        if (event.event === 'snapshot') results.push((JSON.parse(event.data) as { result: Subscriber['results'][number] }).result);
      },
    });
  })().catch(() => undefined);
  return {
    results,
    events,
    latest: () => results.at(-1)?.map((row) => row.body),
    close: () => abort.abort(),
  };
}

async function call(url: string, who: Identity, name: string, args: unknown): Promise<{ ok: boolean; body: string }> {
  const response = await fetch(`${url}/commands/${name}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers(who) }, body: JSON.stringify({ args }) });
  return { ok: response.ok, body: await response.text() };
}

async function status(url: string): Promise<LiveStatus> {
  const response = await fetch(`${url}/_fw/live/status`);
  return (await response.json()) as LiveStatus;
}

/** The group of `who` and `topic` in a process's status: its runs here, and this process's role. */
async function groupOn(url: string, who: Identity, topic: string) {
  const live = await status(url);
  const groups = live.liveQueries.find((query) => query.name === 'notesByTopic')?.groupList ?? [];
  return groups.find((group) => group.tenantId === who.tenantId && (group.args as { topic: string }).topic === topic);
}

async function until<T>(probe: () => Promise<T | false | undefined> | T | false | undefined, what: string): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const value = await probe();
    if (value !== false && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The hash fw keys a group's published row by (cluster.ts): the group key's SHA-256. */
function groupHash(who: Identity, topic: string): string {
  const key = groupKey('notesByTopic', canonicalJson({ topic }), { kind: 'user', userId: who.userId, tenantId: who.tenantId, role: 'member' });
  return createHash('sha256').update(key).digest('hex');
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** A fresh database with the cluster app's table, and `count` fw processes on it. */
async function cluster(count: number): Promise<FwProcess[]> {
  const database = await createTestPostgresDatabase();
  cleanups.push(() => database.drop());
  const db = await createDatabase({ url: database.url });
  await applyMigration(db, clusterSchema);
  await db.close();
  const processes = await Promise.all(Array.from({ length: count }, () => startProcess(database.url)));
  for (const started of processes) cleanups.push(() => started.stop());
  return processes;
}

function subscribeEverywhere(processes: readonly FwProcess[], who: Identity, topic: string, perProcess: number): Subscriber[][] {
  const subscribers = processes.map((started) => Array.from({ length: perProcess }, () => subscribe(started.url, who, topic)));
  cleanups.push(async () => subscribers.flat().forEach((subscriber) => subscriber.close()));
  return subscribers;
}

const everyHolds = (subscribers: readonly Subscriber[], bodies: readonly string[]) => subscribers.every((subscriber) => JSON.stringify(subscriber.latest()) === JSON.stringify(bodies));

if (testDatabaseUrl) {
  describe('live cluster: processes sharing a PostgreSQL database', () => {
    it('reruns a group once cluster-wide per write and fans the result out on every process; another identity never gets it', async () => {
      const processes = await cluster(3);
      const alice: Identity = { userId: 'alice', tenantId: randomUUID() };
      const other: Identity = { userId: 'alice', tenantId: randomUUID() };
      const subscribers = subscribeEverywhere(processes, alice, 'plans', 2);
      const otherTenant = subscribeEverywhere(processes, other, 'plans', 1).flat();
      await until(() => everyHolds(subscribers.flat(), []) && everyHolds(otherTenant, []), 'every first snapshot');

      // One owner, two followers.
      const roles = await until(async () => {
        const groups = await Promise.all(processes.map((started) => groupOn(started.url, alice, 'plans')));
        const settled = groups.map((group) => group?.role);
        return settled.filter((role) => role === 'owner').length === 1 && settled.filter((role) => role === 'follower').length === 2 && groups;
      }, 'one owner and two followers');
      const runsBefore = roles.reduce((sum, group) => sum + group!.runs, 0);

      // Through a process that does not own the group.
      const writer = processes[roles.findIndex((group) => group!.role === 'follower')]!;
      expect((await call(writer.url, alice, 'addNote', { topic: 'plans', body: 'first' })).ok).toBe(true);
      await until(() => everyHolds(subscribers.flat(), ['first']), 'every subscriber to get the write');

      // A later write to another group is the barrier: reruns the first write caused have run by the time its frames arrive.
      const barrier = subscribeEverywhere(processes, alice, 'barrier', 1).flat();
      await until(() => everyHolds(barrier, []), 'the barrier subscribers');
      expect((await call(writer.url, alice, 'addNote', { topic: 'barrier', body: 'b' })).ok).toBe(true);
      await until(() => everyHolds(barrier, ['b']), 'the barrier write');

      const after = await Promise.all(processes.map((started) => groupOn(started.url, alice, 'plans')));
      expect(after.reduce((sum, group) => sum + group!.runs, 0) - runsBefore).toBe(1);
      expect(after.filter((group) => group!.role === 'follower').every((group) => group!.received >= 1 && group!.runs === 0)).toBe(true);
      // Each subscriber got the empty list, then the note: one frame per change, none repeated.
      for (const subscriber of subscribers.flat()) expect(subscriber.results.map((result) => result.map((row) => row.body))).toEqual([[], ['first']]);
      expect(otherTenant.every((subscriber) => JSON.stringify(subscriber.results) === '[[]]')).toBe(true);
    }, 120_000);

    it('moves a group to a surviving process when its owner is killed (-9) and loses no write', async () => {
      const processes = await cluster(3);
      const bob: Identity = { userId: 'bob', tenantId: randomUUID() };
      const subscribers = subscribeEverywhere(processes, bob, 'ops', 2);
      await until(() => everyHolds(subscribers.flat(), []), 'every first snapshot');
      const ownerIndex = await until(async () => {
        const groups = await Promise.all(processes.map((started) => groupOn(started.url, bob, 'ops')));
        const index = groups.findIndex((group) => group?.role === 'owner');
        return index >= 0 && groups.filter((group) => group?.role === 'follower').length === 2 && index;
      }, 'an owner');
      const survivors = processes.filter((_, index) => index !== ownerIndex);
      const surviving = subscribers.filter((_, index) => index !== ownerIndex).flat();

      // A write the owner is told of, then the owner dies at once — before or during its rerun: the
      // write reaches the survivors (the new owner reruns when it takes over), and so does one after.
      expect((await call(survivors[0]!.url, bob, 'addNote', { topic: 'ops', body: 'before-kill' })).ok).toBe(true);
      const killedAt = Date.now();
      processes[ownerIndex]!.child.kill('SIGKILL');
      await until(() => everyHolds(surviving, ['before-kill']), 'the write before the kill on every surviving subscriber');
      const movedInMs = Date.now() - killedAt;
      expect((await call(survivors[1]!.url, bob, 'addNote', { topic: 'ops', body: 'after-kill' })).ok).toBe(true);
      await until(() => everyHolds(surviving, ['after-kill', 'before-kill']), 'both writes on every surviving subscriber');

      const roles = await until(async () => {
        const groups = await Promise.all(survivors.map((started) => groupOn(started.url, bob, 'ops')));
        return groups.filter((group) => group?.role === 'owner').length === 1 && groups;
      }, 'one new owner');
      expect(roles.map((group) => group!.role).sort()).toEqual(['follower', 'owner']);
      console.log(`live cluster: kill -9 of the owner → its last write on every surviving subscriber in ${movedInMs} ms`);
    }, 120_000);

    it('hands a group over at once when its owner stops cleanly', async () => {
      const processes = await cluster(2);
      const dana: Identity = { userId: 'dana', tenantId: randomUUID() };
      const subscribers = subscribeEverywhere(processes, dana, 'handover', 1);
      await until(() => everyHolds(subscribers.flat(), []), 'every first snapshot');
      const ownerIndex = await until(async () => {
        const groups = await Promise.all(processes.map((started) => groupOn(started.url, dana, 'handover')));
        const index = groups.findIndex((group) => group?.role === 'owner');
        return index >= 0 && groups.some((group) => group?.role === 'follower') && index;
      }, 'an owner');
      const survivor = processes[1 - ownerIndex]!;
      await processes[ownerIndex]!.stop();
      // The stop gave the group up: the survivor owns it without waiting for a lease to run out.
      await until(async () => (await groupOn(survivor.url, dana, 'handover'))?.role === 'owner', 'the survivor to own the group');
      expect((await call(survivor.url, dana, 'addNote', { topic: 'handover', body: 'kept' })).ok).toBe(true);
      await until(() => everyHolds(subscribers[1 - ownerIndex]!, ['kept']), 'the write on the surviving subscriber');
      // Its peers are counted from the leases it reads as it renews its own: the stopped one's is gone by then.
      await until(async () => {
        const cluster = (await status(survivor.url)).cluster;
        return cluster?.peers === 0 && cluster.owned === 1 && cluster.following === 0;
      }, 'the survivor alone, owning the group');
    }, 120_000);

    it('resumes on any process: a revision means the same on every one', async () => {
      const processes = await cluster(2);
      const erin: Identity = { userId: 'erin', tenantId: randomUUID() };
      const first = subscribe(processes[0]!.url, erin, 'resume');
      const second = subscribe(processes[1]!.url, erin, 'resume');
      cleanups.push(async () => [first, second].forEach((subscriber) => subscriber.close()));
      await until(() => everyHolds([first, second], []), 'every first snapshot');
      await until(async () => (await Promise.all(processes.map((started) => groupOn(started.url, erin, 'resume')))).every((group) => group?.role === 'owner' || group?.role === 'follower'), 'settled roles');
      // A token from one process resumes on the other: nothing changed since, so `up-to-date`.
      for (const [from, to] of [[first, processes[1]!], [second, processes[0]!]] as const) {
        const token = from.events.findLast((event) => event.event === 'snapshot')!.id!;
        const resumed = subscribe(to.url, erin, 'resume', token);
        cleanups.push(async () => resumed.close());
        await until(() => resumed.events.length > 0, 'the resume');
        expect(resumed.events[0]!.event).toBe('up-to-date');
      }
      // After a write, the same old token gets the new data on either process.
      const stale = first.events.findLast((event) => event.event === 'snapshot')!.id!;
      expect((await call(processes[0]!.url, erin, 'addNote', { topic: 'resume', body: 'new' })).ok).toBe(true);
      await until(() => everyHolds([first, second], ['new']), 'the write everywhere');
      for (const started of processes) {
        const resumed = subscribe(started.url, erin, 'resume', stale);
        cleanups.push(async () => resumed.close());
        await until(() => resumed.latest(), 'the resumed snapshot');
        expect(resumed.latest()).toEqual(['new']);
      }
    }, 120_000);

    it('delivers nothing that handler SQL forges on the cluster table or channel', async () => {
      const processes = await cluster(2);
      const carol: Identity = { userId: 'carol', tenantId: randomUUID() };
      const subscribers = subscribeEverywhere(processes, carol, 'secrets', 1).flat();
      await until(() => everyHolds(subscribers, []), 'every first snapshot');
      await until(async () => (await Promise.all(processes.map((started) => groupOn(started.url, carol, 'secrets')))).filter((group) => group?.role === 'follower').length === 1, 'a follower');
      const hash = groupHash(carol, 'secrets');
      const forged = JSON.stringify([{ topic: 'secrets', body: 'forged' }]);

      // The request role has no privilege on fw's table: the handler's transaction fails.
      const table = await call(processes[0]!.url, carol, 'forgeResult', { hash, result: forged });
      expect(table.ok).toBe(false);
      // Anyone may NOTIFY: the notices only make a process read the row fw wrote.
      for (const payload of [`r:${hash}`, `f:${hash}`, `w:${hash}`, forged, `r:${forged}`]) {
        expect((await call(processes[1]!.url, carol, 'forgeNotice', { payload })).ok).toBe(true);
      }
      expect((await call(processes[1]!.url, carol, 'addNote', { topic: 'secrets', body: 'real' })).ok).toBe(true);
      await until(() => everyHolds(subscribers, ['real']), 'the real write everywhere');
      for (const subscriber of subscribers) expect(subscriber.results.map((result) => result.map((row) => row.body))).toEqual([[], ['real']]);
    }, 120_000);
  });
}
