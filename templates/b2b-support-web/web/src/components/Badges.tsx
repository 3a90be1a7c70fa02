import type { Ticket } from '../lib/fw.ts';

const statusLabels: Record<Ticket['status'], string> = { open: 'Open', pending: 'Awaiting customer', closed: 'Closed' };

export function StatusBadge({ status }: { status: Ticket['status'] }) {
  return <span className={`badge status-${status}`}>{statusLabels[status]}</span>;
}

/** The priority, marked when the AI triage chose it. */
export function PriorityBadge({ ticket }: { ticket: Pick<Ticket, 'priority' | 'priority_source'> }) {
  const byTriage = ticket.priority_source === 'triage';
  return (
    <span className={`badge priority-${ticket.priority}`} title={byTriage ? 'Priority set by the AI triage' : undefined}>
      {ticket.priority}
      {byTriage && (
        <>
          <span className="triage-mark" aria-hidden="true">
            ✦
          </span>
          <span className="visually-hidden"> (set by triage)</span>
        </>
      )}
    </span>
  );
}

export function SlaBadge() {
  return <span className="badge sla">SLA missed</span>;
}

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const steps: Array<[Intl.RelativeTimeFormatUnit, number]> = [['second', 60], ['minute', 60], ['hour', 24], ['day', 30], ['month', 12], ['year', Infinity]];

/** "5 minutes ago", with the exact time on hover. */
export function Ago({ iso }: { iso: string }) {
  let value = (new Date(iso).getTime() - Date.now()) / 1000;
  let unit: Intl.RelativeTimeFormatUnit = 'second';
  for (const [name, size] of steps) {
    unit = name;
    if (Math.abs(value) < size) break;
    value /= size;
  }
  const text = unit === 'second' ? 'just now' : relative.format(Math.round(value), unit);
  return (
    <time dateTime={iso} title={new Date(iso).toLocaleString()}>
      {text}
    </time>
  );
}
