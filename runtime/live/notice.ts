/**
 * Log rows carried by the capture trigger's notifications ("notices"): the first record of a
 * transaction, table and tenant sends its row — revision, table, tenant, changes — in the NOTIFY
 * payload, signed with the owner-only secret `live.notice` (db/ddl.ts, `_fw_live_record`). A listener
 * can then rerun the groups it concerns without waiting for its read of the log (hub.ts, "early runs").
 *
 * Why a signature: any SQL can send `NOTIFY fw_live`, including a handler's, and the hub trusts a notice
 * to say "revision r is committed" (a run that starts after it need not run again for r). A forged
 * notice for a revision not yet committed would make a group skip the real write. The MAC is
 * `sha256(k2 || sha256(k1 || row))` with two independent 64-byte keys (HMAC's construction with
 * full-block keys), computable with PostgreSQL's built-in `sha256()`.
 *
 * Why a delivered notice means "committed and visible": PostgreSQL delivers a notification only once
 * the sending transaction is no longer in progress in the listener's snapshot (async.c tests
 * `XidInMVCCSnapshot` before `TransactionIdDidCommit`), so every snapshot taken after its arrival sees
 * the transaction's writes.
 *
 * @example
 *   const verify = noticeVerifier(await databaseSecret(db.admin, LIVE_NOTICE_SECRET, LIVE_NOTICE_SECRET_BYTES));
 *   verify(payload); // the Invalidation it carries, or undefined (empty, forged, malformed)
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Invalidation } from './log.ts';
import type { ChangedValues } from './read-set.ts';
import { LIVE_NOTICE_SECRET_BYTES } from '../db/secrets.ts';

const TAG_HEX = 64;

export function noticeVerifier(key: Buffer): (payload: string) => Invalidation | undefined {
  if (key.length !== LIVE_NOTICE_SECRET_BYTES) throw new RangeError(`fw live: the notice key must be ${LIVE_NOTICE_SECRET_BYTES} bytes, got ${key.length}.`);
  const inner = key.subarray(0, LIVE_NOTICE_SECRET_BYTES / 2);
  const outer = key.subarray(LIVE_NOTICE_SECRET_BYTES / 2);
  return (payload) => {
    if (payload.length <= TAG_HEX || payload[TAG_HEX] !== '{') return undefined;
    const row = payload.slice(TAG_HEX);
    const tag = Buffer.from(payload.slice(0, TAG_HEX), 'hex');
    const expected = createHash('sha256').update(outer).update(createHash('sha256').update(inner).update(row, 'utf8').digest()).digest();
    if (tag.length !== expected.length || !timingSafeEqual(tag, expected)) return undefined;
    let parsed: { r?: unknown; t?: unknown; n?: unknown; w?: unknown; c?: unknown };
    try {
      parsed = JSON.parse(row);
    } catch {
      return undefined;
    }
    const revision = Number(parsed.r);
    if (!Number.isSafeInteger(revision) || revision < 1 || typeof parsed.t !== 'string') return undefined;
    if (parsed.n !== null && typeof parsed.n !== 'string') return undefined;
    const writtenAtMs = Number(parsed.w);
    return {
      revision,
      table: parsed.t,
      tenantId: parsed.n,
      ...(Number.isFinite(writtenAtMs) ? { writtenAtMs } : {}),
      changes: (parsed.c ?? null) as ChangedValues | null,
    };
  };
}
