/**
 * The change feed's loop (docs/architecture.md, "The change feed's loop"): every `everyMs` a tick reads
 * the feed — an organization's first watched webhook's delivery log, one request — and at once polls the services
 * whose deployments it names (started, failed, ended), so a failure is read seconds after the platform
 * delivered its event, not at the next minute. Dispatch's minute tick plans everything else as before;
 * while the loop beats, it leaves the webhooks and the loop's share of the budget to it, and when the
 * loop is lost it reads the feed itself again.
 *
 * Pure: the loop's lease and reads come from and go back to a FeedLoopStore, dispatch's state from a
 * DispatchStore; the clock is passed in.
 */
import type { DispatchState, FeedLoopState, SourceState, Watchlist } from "../model/dispatch.js";
import type { PollRequest, PollResult } from "../model/poll.js";
import { type SourceRef, sourceKey } from "../model/source.js";
import * as budget from "./budget.js";
import { claimedHot, isHot, polled, pollRequest } from "./source-state.js";

const HOUR = 3_600_000;

export const FEED_LOOP = {
  /** A tick every this long: the feed is read within it of a delivery. */
  everyMs: 10_000,
  /**
   * The lease: a tick less than this after the last claimed one belongs to a second loop, and that loop
   * ends there. Ticks of one loop come at least `everyMs` apart, so two loops never double the reads: of
   * any two, one is refused at its next tick.
   */
  leaseGapMs: 9_500,
  /** No tick for this long: the loop is lost. The minute tick reads the feed again and dispatch starts a new loop. */
  lostAfterMs: 30_000,
  /** The most of the request budget the loop may take. Below one read a tick, there is no loop: the minute tick reads the feed. */
  maxShare: 0.4,
  /**
   * A read's stamp is renewed once it is this old: the minute tick, status and health need the feed's last
   * read to the half-minute, and the item is not written twice every tick (a write a tick is the lease's).
   */
  stampEveryMs: 30_000,
} as const;

/** Reads an hour one feed read a tick can take at most, the lease's gap apart. */
const READS_AN_HOUR_A_SLOT = Math.ceil(HOUR / FEED_LOOP.leaseGapMs);

/**
 * The webhooks the loop reads: an organization's first watched webhook is its change feed (one names
 * every service of the organization its filters let through: put an unfiltered one first). Its other
 * webhooks are read by the minute tick as before: read every ten seconds, each answer would bring a
 * delivery or two, and the writes that go with every answer that has news (its cursor, its seen ids)
 * would be paid per record instead of per batch — three writes a record instead of 1.6 in a simulated day.
 */
export function feedWebhooks(watch: Pick<Watchlist, "sources">): SourceRef[] {
  const first = new Map<string, SourceRef>();
  for (const s of watch.sources) if (s.kind === "webhook" && !first.has(s.organizationId)) first.set(s.organizationId, s);
  return [...first.values()];
}

const feedKeys = new WeakMap<object, ReadonlySet<string>>();

/** Whether the loop reads this source (while it beats, the minute tick leaves it alone). */
export function isFeedWebhook(watch: Pick<Watchlist, "sources">, ref: SourceRef): boolean {
  if (ref.kind !== "webhook") return false;
  let keys = feedKeys.get(watch);
  if (!keys) feedKeys.set(watch, (keys = new Set(feedWebhooks(watch).map(sourceKey))));
  return keys.has(sourceKey(ref));
}

/**
 * Feed reads a tick: the organizations' feeds, within the loop's share of `limit` (the requests an hour
 * in force: the configured figure, or the platform's when it is lower); 0: no loop.
 */
export function feedReadsPerTick(watch: Pick<Watchlist, "sources" | "requestsPerHour">, limit = watch.requestsPerHour): number {
  return Math.min(feedWebhooks(watch).length, Math.floor((limit * FEED_LOOP.maxShare) / READS_AN_HOUR_A_SLOT));
}

/** Feed reads a tick under dispatch's budget as it stands (its limit may be the platform's, lower than configured). */
export const feedReadsNow = (watch: Watchlist, dispatch: DispatchState | undefined): number =>
  feedReadsPerTick(watch, dispatch ? budget.limitOf(dispatch.budget) : watch.requestsPerHour);

/** Whether a loop is reading the feed: it ticked lately. */
export const loopAlive = (loop: FeedLoopState | undefined, now: number): loop is FeedLoopState =>
  loop !== undefined && now - loop.beat_at < FEED_LOOP.lostAfterMs;

/** A source's state with the loop's last read of it counted as a poll of dispatch's (the minute tick folds them in). */
export function withLoopRead(s: SourceState, readAt: number | undefined): SourceState {
  return readAt !== undefined && readAt > (s.last_polled_at ?? -Infinity) ? polled(s, readAt) : s;
}

export interface FeedClaim {
  loop: FeedLoopState;
  /** The feed reads of this tick (none while the platform holds requests back: the tick still beats). */
  polls: PollRequest[];
  /**
   * More feeds than reads a tick: they take turns, stalest first, so each read must be stamped
   * (`readsDone`) for the turn to pass on, not only once its stamp is `stampEveryMs` old.
   */
  rotating: boolean;
}

/**
 * A tick's claim on the loop and its feed reads: the stalest webhooks not backing off, counted in the
 * loop's `requests` (dispatch folds them into the budget); when each was read is stamped from its result
 * (`readsDone`), so a read that never happened is not taken for one. Undefined when another tick
 * claimed the loop within the lease's gap (this tick is a second loop's, which ends here), or when the
 * budget in force has no room for the loop (the minute tick reads the feed then).
 */
export function claimFeedTick(loop: FeedLoopState | undefined, dispatch: DispatchState | undefined, watch: Watchlist, now: number): FeedClaim | undefined {
  if (loop && now - loop.beat_at < FEED_LOOP.leaseGapMs) return undefined;
  const perTick = feedReadsNow(watch, dispatch);
  if (!perTick) return undefined;
  const reads: Record<string, number> = {};
  for (const [key, at] of Object.entries(loop?.reads ?? {})) if (watch.keys.has(key)) reads[key] = at; // webhooks no longer watched are dropped
  const mayRead = !dispatch || budget.platformAllows(dispatch.budget, now);
  const feeds = feedWebhooks(watch);
  const webhooks = feeds
    .map((ref) => {
      const key = sourceKey(ref);
      return { ref, key, s: withLoopRead(dispatch?.sources[key] ?? {}, reads[key]) };
    })
    .filter((w) => w.s.next_allowed_at === undefined || now >= w.s.next_allowed_at)
    .sort((x, y) => (x.s.last_polled_at ?? -Infinity) - (y.s.last_polled_at ?? -Infinity) || x.key.localeCompare(y.key));
  const chosen = mayRead ? webhooks.slice(0, perTick) : [];
  const requests = (loop?.requests ?? 0) + chosen.length;
  return {
    loop: { beat_at: now, reads, ...(requests ? { requests } : {}) },
    polls: chosen.map((w) => pollRequest(w.ref, w.s, dispatch?.outage)),
    rotating: feeds.length > perTick,
  };
}

/**
 * The loop's state once these feed reads are done: each that was sent is stamped read at `at`, when its
 * stamp is `stampEveryMs` old or the feeds take turns (`rotating`) — a timeout or a 5xx too (dispatch
 * counts the source's failures; the round moves on), not one the platform held back or that failed inside
 * Lookout. Undefined: nothing to write.
 */
export function readsDone(loop: FeedLoopState, results: readonly PollResult[], at: number, rotating = false): FeedLoopState | undefined {
  const done = results
    .filter((r) => r.ok || (r.error?.kind !== "rate_limited" && r.error?.kind !== "deferred" && r.error?.kind !== "internal"))
    .filter((r) => rotating || at - (loop.reads[r.source] ?? -Infinity) >= FEED_LOOP.stampEveryMs);
  if (!done.length) return undefined;
  return { ...loop, reads: { ...loop.reads, ...Object.fromEntries(done.map((r) => [r.source, at])) } };
}

/**
 * The loop's feed reads not yet counted into dispatch's budget: counted now (the minute tick), so the
 * budget's sliding hour and bucket hold every request, the loop's too. A new loop item counts from 0.
 */
export function countLoopReads(state: DispatchState, loop: FeedLoopState | undefined, now: number): DispatchState {
  const total = loop?.requests ?? 0;
  const counted = state.loop_requests ?? 0;
  const fresh = total >= counted ? total - counted : total;
  if (!fresh && total === counted) return state;
  return { ...state, budget: budget.spend(state.budget, fresh, now), ...(total ? { loop_requests: total } : {}) };
}

/**
 * The services the feed named since they were last read, polled now within the budget (the bucket,
 * burst included: activity is what the burst is kept for). What the budget cannot take stays hot, and
 * the minute tick reads it first.
 */
export function planHot(state: DispatchState, watch: Watchlist, now: number): { polls: PollRequest[]; state: DispatchState } {
  const hot: Array<{ ref: SourceRef; key: string; s: SourceState }> = [];
  for (const ref of watch.sources) {
    if (ref.kind === "webhook") continue;
    const key = sourceKey(ref);
    const s = state.sources[key];
    if (s && isHot(s, now) && (s.next_allowed_at === undefined || now >= s.next_allowed_at)) hot.push({ ref, key, s });
  }
  const chosen = hot.slice(0, budget.available(state.budget, now));
  if (!chosen.length) return { polls: [], state };
  const sources = { ...state.sources };
  for (const c of chosen) sources[c.key] = claimedHot(c.s, now);
  return {
    polls: chosen.map((c) => pollRequest(c.ref, c.s, state.outage)),
    state: { ...state, budget: budget.spend(state.budget, chosen.length, now), sources },
  };
}
