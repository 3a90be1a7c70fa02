/**
 * What the rooms of one live hub share: the database, the settings resolved once from LiveOptions,
 * the app liveQueries run from, whether the hub closed, and its counters (status()).
 */
import type { Clock } from '../../core/clock.ts';
import type { FwDatabase } from '../../db/database.ts';
import type { AppDefinition } from '../../core/app-definition.ts';
import type { FwError } from '../../core/errors.ts';
import { printable } from '../../core/printable.ts';
import { EMPTY_FUNCTION_CATALOG, type FunctionCatalog } from '../function-reads.ts';
import { UNKNOWN_TEXT_SEMANTICS, type TextSemantics } from '../text-semantics.ts';
import type { HubCounters, LiveOptions } from './api.ts';

export interface HubLimits {
  heartbeatMs: number;
  maxSubscriptionsPerConnection: number;
  maxSubscriptionsPerTenant: number;
  maxSubscriptionsPerCaller: number;
  maxGroupsPerCaller: number;
}

export interface HubContext {
  readonly db: FwDatabase;
  /** Dev mode: internal error messages reach subscribers. */
  readonly dev: boolean;
  readonly limits: HubLimits;
  readonly retentionMs: number;
  readonly pruneIntervalMs: number;
  /** Where failures of re-runs are reported. */
  readonly onError: (error: FwError, traceId: string) => void;
  /** The app to run liveQueries from (setApp). */
  app: AppDefinition | undefined;
  /** The runtime's time, for a liveQuery's `ctx.now()`. */
  readonly clock: Clock | undefined;
  /** The database's functions by identity (function-reads.ts), read at start and again on the safety poll; none known before. */
  functionCatalog: FunctionCatalog;
  /** How text orders and folds in this database (text-semantics.ts), read at start; nothing assumed before. */
  textSemantics: TextSemantics;
  closed: boolean;
  readonly counters: HubCounters;
}

export function createHubContext(db: FwDatabase, options: LiveOptions): HubContext {
  return {
    db,
    dev: options.dev === true,
    limits: {
      heartbeatMs: options.heartbeatMs ?? 15_000,
      maxSubscriptionsPerConnection: options.maxSubscriptionsPerConnection ?? 64,
      maxSubscriptionsPerTenant: options.maxSubscriptionsPerTenant ?? 10_000,
      maxSubscriptionsPerCaller: options.maxSubscriptionsPerCaller ?? 1_000,
      maxGroupsPerCaller: options.maxGroupsPerCaller ?? 200,
    },
    retentionMs: options.retentionMs ?? 60 * 60_000,
    pruneIntervalMs: options.pruneIntervalMs ?? 60_000,
    functionCatalog: EMPTY_FUNCTION_CATALOG,
    textSemantics: UNKNOWN_TEXT_SEMANTICS,
    onError:
      options.onError ??
      ((error: FwError, traceId: string) => console.error(`fw live: ${error.code} [trace ${traceId}] ${printable(error.message)}${error.diagnostics.length ? ` diagnostics=${printable(JSON.stringify(error.diagnostics))}` : ''}`)),
    app: undefined,
    clock: options.clock,
    closed: false,
    counters: { runs: 0, unchangedRuns: 0, snapshotsSent: 0, batches: 0, batchedRuns: 0, batchFallbacks: 0, multiplexed: 0, multiplexedRuns: 0, multiplexFailures: 0, noticeWakeups: 0, coveredByNotice: 0 },
  };
}
