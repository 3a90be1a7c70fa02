import type { LiveStatus } from 'fwjs/react';

const labels: Record<LiveStatus, string> = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…', closed: 'Disconnected' };
const titles: Record<LiveStatus, string> = {
  connecting: 'Opening the live connection',
  live: 'Changes from anywhere appear as they are saved',
  reconnecting: 'The connection dropped; reconnecting (the list shows the last data)',
  closed: 'Live updates stopped: the server ended them',
};

/** The live query's connection state, from useLiveQuery's `status`. */
export function LiveBadge({ status }: { status: LiveStatus }) {
  return (
    <p className="live" data-status={status} role="status" title={titles[status]}>
      {labels[status]}
    </p>
  );
}
