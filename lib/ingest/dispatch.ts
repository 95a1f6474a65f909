/**
 * Dispatch: which sources to poll this tick, within the request budget (docs/architecture.md, "The request
 * budget").
 * Pure: the state comes from and goes back to a DispatchStore (lib/model/dispatch-store.ts); the clock
 * is passed in. Its parts: what is watched (watchlist.ts), the plan of a tick (plan.ts), a source's
 * state and the fold of poll results into it (source-state.ts), the facts health events are made of
 * (health-facts.ts); this file holds the policy they share.
 *
 * Order of a tick:
 * 1. sources with executions in progress (re-read every tick until terminal);
 * 2. sources the change feed named (hot) and that have not been read since;
 * 3. everything else by weighted staleness (see `weight` in plan.ts): webhooks first in practice, then
 *    the stalest, a round. At least a quarter of the tick's polls go here, so nothing starves.
 * While the change feed's loop beats (lib/ingest/feed-loop.ts), it reads the webhooks every ten seconds
 * and polls what they name at once; the tick leaves the webhooks and the loop's share of the budget to it.
 * No source is polled twice within a tick; failing sources back off exponentially.
 *
 * Writes: dispatch writes its state once per tick. A poll writes only when it learned something
 * (`applyPollResult(...).changed`): a routine poll's success is inferred, not recorded — the last poll
 * of a source counts as successful until a failure is recorded for it (see `lastOkAt`).
 */

export const MINUTE = 60_000;

export const DISPATCH_POLICY = {
  /** Ticks are a minute apart, give or take a few seconds; a source polled less than this ago is not polled again. */
  minIntervalMs: 55_000,
  /** A source named by the change feed stays hot at most this long (until read after the news). */
  hotMs: 10 * MINUTE,
  /** An organization's change feed counts as this many idle sources; its webhooks share the weight. */
  feedWeight: 40,
  /** Share of a tick's polls kept for the staleness queue, however busy the urgent ones are. */
  queueShare: 0.25,
  /** Minutes of refill the staleness queue leaves in the bucket, for bursts of activity. */
  burstKeptMinutes: 1.5,
  /** Ticks come every minute: this long without one means Lookout was not running. */
  outageAfterMs: 5 * MINUTE,
  /**
   * A source deferred this many polls in a row counts the next deferral as a failure, with its backoff
   * (source_failing says so once `failingAfter` failures follow): its poll takes a batch's large-answer
   * room before it reads, so it should not happen.
   */
  deferralsBeforeFailure: 3,
  backoffBaseMs: MINUTE,
  backoffMaxMs: 30 * MINUTE,
} as const;
