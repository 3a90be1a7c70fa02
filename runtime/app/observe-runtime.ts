import type { FwDatabase } from '../db/database.ts';
import type { LiveHub } from '../live/hub.ts';
import { outboxOverview } from '../outbox/overview.ts';
import { registerRuntimeGauges } from '../telemetry/metrics.ts';

/**
 * Exports the gauges of one runtime — its pools, its live hub, the outbox in its database — with the
 * metrics (when OTEL_* turns them on); returns the function that removes them when the runtime closes.
 */
export function observeRuntime(runtime: { db: FwDatabase; live?: LiveHub }): () => void {
  const { db, live } = runtime;
  return registerRuntimeGauges({
    pools: () => db.pools(),
    ...(live ? { live } : {}),
    outbox: async () => {
      const overview = await outboxOverview(db.admin, { deadLimit: 0 });
      // Due rows only: a call scheduled for next week is not late. How late the oldest is counts from when it fell due.
      return { pending: overview.counts.due, scheduled: overview.counts.scheduled, oldestPendingAt: overview.oldestPending?.availableAt ?? null };
    },
  });
}
