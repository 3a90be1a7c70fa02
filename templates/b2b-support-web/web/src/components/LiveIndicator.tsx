import type { LiveStatus } from '../lib/fw.ts';

const labels: Record<LiveStatus, string> = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…', closed: 'Disconnected' };

/** Whether the ticket list is receiving updates: the live stream's status as the hooks report it. */
export function LiveIndicator({ status }: { status: LiveStatus }) {
  return (
    <span className="live" data-status={status} role="status" aria-label={`Updates: ${labels[status]}`}>
      <span className="live-dot" aria-hidden="true" />
      {labels[status]}
    </span>
  );
}
