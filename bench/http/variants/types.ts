import type { RequestListener } from 'node:http';
import type { DatabaseKind, VariantName } from '../config.ts';
import type { DatabaseCallCounter } from '../instrument.ts';

/** What a server process is asked to serve. */
export interface ServerSpec {
  variant: VariantName;
  database: DatabaseKind;
  /** The prepared benchmark database (PostgreSQL only; PGlite servers prepare their own in memory). */
  url?: string;
  /** For `baseline`: the other checkout whose fw variant serves. */
  baselineDir?: string;
  poolSize: number;
}

/** One variant, ready to serve: a plain `node:http` listener and how to shut it down. */
export interface VariantServer {
  listener: RequestListener;
  close(): Promise<void>;
}

export type CreateVariant = (spec: ServerSpec, counter: DatabaseCallCounter) => Promise<VariantServer>;
