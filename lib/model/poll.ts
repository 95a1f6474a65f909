/**
 * A poll of one source as dispatch asks for it and as the poller reports it back: the request and
 * result every stage of ingest shares (dispatch plans requests, the readers fill results, dispatch
 * folds them into its state).
 */
import type { SourceRef } from "./source.js";

/** The rate-limit headers of a platform response (lib/platform/cost.ts reads them). */
export interface RateLimitHeaders {
  limit?: number;
  remaining?: number;
  /** When the window resets, epoch milliseconds. */
  resetAt?: number;
  /** From `Retry-After`, milliseconds. */
  retryAfterMs?: number;
}

/** A time Lookout was not watching at all (dispatch did not tick), ISO from/to. */
export interface Outage {
  from: string;
  to: string;
}

export interface PollRequest {
  source: SourceRef;
  /** When this source was last polled successfully (from dispatch); absent at first sight. */
  previousPollAt?: string;
  /**
   * Set when Lookout was down since this source was last read. Records older than the backfill window
   * stay quiet then (as at first sight) if the outage was longer than the window. A long interval
   * between polls that the request budget chose is not an outage: its failures are alerted.
   */
  outage?: Outage;
  /** Its last answer was deferred for want of room: it gets a batch's large-answer room to itself (`pollBatches`). */
  large?: boolean;
}

export interface PollResult {
  source: string;
  ok: boolean;
  requests: number;
  retries: number;
  newRecords: number;
  alerts: number;
  suppressed: number;
  rejected: number;
  /** Deployments: executions still in progress after this poll (dispatch re-reads these soon). */
  inProgress: number;
  /** Records of the answer left for the next poll (a flood is stored over several): dispatch polls it again at the next tick. */
  backlog?: number;
  /**
   * Run again by Lambda's retry of its invocation, which no plan counted: all of its requests are spent
   * when it is recorded, not all but the one dispatch spent when it planned the poll.
   */
  rerun?: boolean;
  /** The change feed's tick ran it under a claim (SourceState.hot_claimed_at): its result settles the claim, no other's does. */
  settlesClaim?: boolean;
  /** Services named by new webhook deliveries: the change feed (dispatch reads them next). */
  hotServices: string[];
  /**
   * When the newest of those deliveries naming each service was made (epoch ms, the platform's clock):
   * a service read since is not read again for it (every webhook of an organization delivers the same event).
   */
  namedAt?: Record<string, number>;
  gapSuspected: boolean;
  rateLimit?: RateLimitHeaders;
  /** The source had never been stored before: what it found is history, not activity. */
  firstSight: boolean;
  /** Records that could not be stored and were quarantined (absent when none). */
  quarantined?: number;
  error?: { kind: string; status?: number; message: string };
}
