import type { RequestListener } from 'node:http';
import type { LiveCounters, ServerSpec } from '../protocol.ts';

/** One server, ready to serve: a `node:http` listener, its live counters and how to shut it down. */
export interface LiveVariant {
  listener: RequestListener;
  counters(): LiveCounters;
  close(): Promise<void>;
}

export type CreateVariant = (spec: ServerSpec) => Promise<LiveVariant>;
