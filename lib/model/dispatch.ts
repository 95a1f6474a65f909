/**
 * Dispatch's state and what it watches: the types the planner (lib/dispatch) and its store
 * (lib/store/dispatch-store.ts) share.
 */
import type { SourceRef } from "./source.js";

/** The request budget's state (lib/dispatch/budget.ts), kept by dispatch between invocations. */
export interface BudgetState {
  /** Requests per hour from configuration. */
  configured: number;
  /** The platform's `X-RateLimit-Limit`, kept while it is lower than `configured`. */
  platform_limit?: number;
  /** Bucket level at `at`; negative when polls cost more than planned (a debt paid by waiting). */
  tokens: number;
  /** Epoch ms the bucket level was computed at. */
  at: number;
  /** Requests spent per minute, `[epoch minute, count]`, for the current minute and the 60 before. */
  minutes: Array<[number, number]>;
  /** The platform's own count while it is lower than ours: requests left until `reset_at` (epoch ms). */
  platform?: { remaining: number; reset_at: number };
  /** After a 429: no request before this (epoch ms). */
  throttled_until?: number;
  /** 429s in a row, for the backoff when no Retry-After came. */
  throttles?: number;
}

/** One watched source's polling state. */
export interface SourceState {
  /** When the latest poll was planned (epoch ms). */
  last_polled_at?: number;
  /** When the latest poll known to have succeeded was planned; read it through `lastOkAt`. */
  last_ok_at?: number;
  /** When a poll last found something new (records, alerts). */
  last_activity_at?: number;
  /** Deployments: executions in progress at the last successful poll. */
  in_progress?: number;
  /** Records of a flood left for the next poll at the last successful poll: polled every tick until stored. */
  backlog?: number;
  /** Named by the change feed at `hot_until - hotMs`: urgent until read after that, or until then. */
  hot_until?: number;
  /**
   * When the change feed's tick planned its poll of this hot source, while its result is not recorded: a
   * tick that died with the poll in flight leaves the source hot again `hotClaimMs` later (`isHot`).
   */
  hot_claimed_at?: number;
  consecutive_failures?: number;
  /** Backoff after a failure: not polled before this. */
  next_allowed_at?: number;
  /** The error kind of the last failure (`PlatformErrorKind`), while failing. */
  last_error?: string;
  /**
   * Polls in a row whose answer was deferred (another poll of its batch held the large-answer room,
   * lib/platform/answer-memory.ts): its next poll gets a batch's room to itself.
   */
  deferred?: number;
  /**
   * When dispatch first watched the source, kept until a poll of it is known to have succeeded: a
   * source never read is stalled from then (lib/dispatch/health-facts.ts), as a read one is from its last success.
   */
  watched_since?: number;
}

export interface DispatchState {
  budget: BudgetState;
  /** When dispatch last planned a tick (epoch ms): a long silence since is an outage of Lookout. */
  last_tick_at?: number;
  /** The latest outage (epoch ms); sources not read since it ended are polled with it. */
  outage?: { from: number; to: number };
  /**
   * Lookout's own queues that showed messages at every sample since (epoch ms), by queue: a dead-letter
   * queue since it was first seen holding any, a work queue since it stopped being emptied.
   */
  queues?: Record<string, number>;
  /** The change feed loop's `requests` already counted into the budget. */
  loop_requests?: number;
  /** By source key; only watched sources that were polled at least once. */
  sources: Record<string, SourceState>;
}

/**
 * The change feed's loop (lib/dispatch/feed-loop.ts): a tick every few seconds that reads the feed and at
 * once the services it names. Its own small item, so that a tick that finds nothing writes a few bytes,
 * not dispatch's whole state.
 */
export interface FeedLoopState {
  /** When a tick last claimed the loop (epoch ms): the lease. A tick sooner than the lease's gap after it is another loop's, and ends it. */
  beat_at: number;
  /** Webhook source key → when the loop last read it successfully (epoch ms, the tick's time). */
  reads: Record<string, number>;
  /** Feed reads the loop has claimed since its item was made: dispatch counts them into the budget (`loop_requests`). */
  requests?: number;
}

/** What dispatch watches, from the configuration. */
export interface Watchlist {
  sources: SourceRef[];
  /** Their source keys. */
  keys: ReadonlySet<string>;
  /** Application id → its deployment source key: the change feed names services by id. */
  byApplication: Map<string, string>;
  /** Webhooks per organization: they share the organization's change feed weight. */
  webhooksPerOrg: Map<string, number>;
  requestsPerHour: number;
}
