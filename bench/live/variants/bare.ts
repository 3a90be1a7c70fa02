/**
 * bare: the least a LISTEN → SSE fan-out server can do. node:http and pg; one LISTEN connection; on
 * each notification (payload `tenant|group`) it runs the snapshot statement of each subscribed query
 * (`benchItems`, `benchJoined`) once for that group with a plain `pool.query` and writes the same frame
 * to every subscriber of the group. No framework, no log, no auth, no row-level security, no
 * backpressure handling. Not a safe server: the floor fw is measured against.
 */
import type { ServerResponse } from 'node:http';
import pg from 'pg';
import { BARE_CHANNEL, BARE_SNAPSHOT_SQL, LIVE_QUERIES, type LiveQueryName } from '../app.ts';
import type { CreateVariant } from './types.ts';

const QUERY_NAMES = Object.values(LIVE_QUERIES);

interface BareGroup {
  sql: string;
  tenant: string;
  group: number;
  subscribers: Set<ServerResponse>;
  /** The last snapshot frame, sent to each new subscriber. */
  frame: string | undefined;
  /** Runs of this group, chained so frames go out in commit order. */
  chain: Promise<void>;
}

export const createBareVariant: CreateVariant = async (spec) => {
  const pool = new pg.Pool({ connectionString: spec.url, max: spec.poolSize });
  pool.on('error', () => undefined);
  const listener = new pg.Client({ connectionString: spec.url });
  await listener.connect();
  const groups = new Map<string, BareGroup>();
  const counters = { snapshotQueries: 0, notifications: 0, framesSent: 0, connections: 0 };
  let revision = 0;

  const run = (group: BareGroup): Promise<void> =>
    (group.chain = group.chain.then(async () => {
      counters.snapshotQueries++;
      const { rows } = await pool.query(group.sql, [group.tenant, group.group]);
      revision++;
      group.frame = `event: snapshot\nid: ${revision}\ndata: {"revision":${revision},"result":${JSON.stringify(rows)}}\n\n`;
      for (const res of group.subscribers) {
        res.write(group.frame);
        counters.framesSent++;
      }
    }).catch((error: Error) => console.error(`bare: snapshot failed: ${error.message}`)));

  listener.on('notification', (message) => {
    counters.notifications++;
    // Payload `tenant|group`; a group is keyed `query|tenant|group`.
    for (const query of QUERY_NAMES) {
      const group = groups.get(`${query}|${message.payload ?? ''}`);
      if (group) void run(group);
    }
  });
  await listener.query(`listen ${BARE_CHANNEL}`);

  return {
    listener(req, res) {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const tenant = req.headers['x-fw-tenant-id'];
      let groupNumber: number | undefined;
      try {
        groupNumber = (JSON.parse(url.searchParams.get('args') ?? '{}') as { group?: number }).group;
      } catch {
        // answered below
      }
      const query = url.pathname.startsWith('/live/') ? (url.pathname.slice('/live/'.length) as LiveQueryName) : undefined;
      if (req.method !== 'GET' || query === undefined || !QUERY_NAMES.includes(query) || typeof tenant !== 'string' || !Number.isInteger(groupNumber)) {
        res.writeHead(400).end();
        return;
      }
      const key = `${query}|${tenant}|${groupNumber}`;
      let group = groups.get(key);
      if (!group) {
        group = { sql: BARE_SNAPSHOT_SQL[query], tenant, group: groupNumber!, subscribers: new Set(), frame: undefined, chain: Promise.resolve() };
        groups.set(key, group);
        void run(group);
      }
      const own = group;
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform' });
      res.write(': bare\nretry: 1000\n\n');
      counters.connections++;
      res.on('close', () => {
        counters.connections--;
        own.subscribers.delete(res);
      });
      // Joins after the first run (queued on the chain) or at once with the last frame.
      if (own.frame === undefined) {
        void own.chain.then(() => {
          if (res.destroyed) return;
          own.subscribers.add(res);
          if (own.frame !== undefined) {
            res.write(own.frame);
            counters.framesSent++;
          }
        });
      } else {
        own.subscribers.add(res);
        res.write(own.frame);
        counters.framesSent++;
      }
    },
    counters() {
      let subscriptions = 0;
      for (const group of groups.values()) subscriptions += group.subscribers.size;
      return { ...counters, unchangedRuns: 0, logReads: 0, notices: 0, subscriptions, groups: groups.size };
    },
    async close() {
      await listener.end().catch(() => undefined);
      await pool.end().catch(() => undefined);
    },
  };
};
