/**
 * The plan of one dispatch tick: which sources to poll now, within the request budget
 * (docs/architecture.md, "The request budget"). Dispatch (lib/dispatch/) is pure: the state comes from
 * and goes back to a DispatchStore (lib/model/dispatch-store.ts); the clock is passed in. Its parts: what
 * is watched (watchlist.ts), the plan of a tick (this file), a source's state, the fold of poll results
 * into it and the policy they share (source-state.ts), the facts health events are made of
 * (health-facts.ts), the tick's glue (tick.ts, poll-batch.ts, feed-tick.ts, health-watch.ts).
 *
 * Order of a tick:
 * 1. sources with executions in progress (re-read every tick until terminal);
 * 2. sources the change feed named (hot) and that have not been read since;
 * 3. everything else by weighted staleness (see `weight` below): webhooks first in practice, then
 *    the stalest, a round. At least a quarter of the tick's polls go here, so nothing starves. (A floor
 *    of a quarter of a minute's refill, whatever the tick finds, once served the round better beside the
 *    change feed's loop, but it spent the burst kept for what the feed names: detection's p95 at 200
 *    applications went from 10 to 18 s, BENCHMARKS.md, detection.)
 * While the change feed's loop beats (lib/dispatch/feed-loop.ts), it reads the webhooks every ten seconds
 * and polls what they name at once; the tick leaves the webhooks and the loop's share of the budget to it.
 * No source is polled twice within a tick; failing sources back off exponentially.
 *
 * Writes: dispatch writes its state once per tick. A poll writes only when it learned something
 * (`applyPollResult(...).changed`): a routine poll's success is inferred, not recorded — the last poll
 * of a source counts as successful until a failure is recorded for it (see `lastOkAt`).
 */
import type { DispatchState, FeedLoopState, SourceState, Watchlist } from "../model/dispatch.js";
import type { PollRequest } from "../model/poll.js";
import * as budget from "./budget.js";
import { type SourceRef, sourceKey } from "../model/source.js";
import { DISPATCH_POLICY, MINUTE, initialState, isHot, polled, pollRequest } from "./source-state.js";
import { countLoopReads, feedReadsNow, feedWebhooks, isFeedWebhook, loopAlive, withLoopRead } from "./feed-loop.js";

/**
 * Weighted staleness: a source's score is the time since its last poll times its weight, and the
 * highest scores are polled first. In steady state every source is polled when its score reaches the
 * same level, so its interval is inversely proportional to its weight: an organization's webhooks
 * together are read `feedWeight` times as often as an application (one request names every service that
 * started or failed a deployment); every other source has weight 1, so the rest is a round: each polled
 * once every N/R hours with N sources and R requests an hour, the least staleness a plan can promise
 * when a failure is as likely anywhere. (Recent activity once weighed 5: where deployments come at
 * random, it took polls from the rest and doubled the p95 time to detection, BENCHMARKS.md, detection.)
 * The score grows without bound, so every source is reached: nothing starves. While the change feed's
 * loop beats, an application its feed covers weighs `namedByFeedWeight`: the feed names its deployments
 * at once, so the round's polls go first to what no feed names (BENCHMARKS.md, load).
 */
function weight(ref: SourceRef, watch: Watchlist, fedOrgs: ReadonlySet<string> = NONE): number {
  if (ref.kind === "webhook") return DISPATCH_POLICY.feedWeight / (watch.webhooksPerOrg.get(ref.organizationId) ?? 1);
  return ref.kind === "deployment" && fedOrgs.has(ref.organizationId) ? DISPATCH_POLICY.namedByFeedWeight : 1;
}
const NONE: ReadonlySet<string> = new Set();

/**
 * The organizations whose feed the loop reads now: it beats, and their feed webhook is not failing. A
 * failing feed names nothing, so its organization's applications weigh fully in the round again until it
 * reads (and source_failing says why meanwhile).
 */
function fedOrganizations(watch: Watchlist, sources: Readonly<Record<string, SourceState>>, looping: boolean): ReadonlySet<string> {
  if (!looping) return NONE;
  return new Set(feedWebhooks(watch).filter((ref) => !sources[sourceKey(ref)]?.consecutive_failures).map((ref) => ref.organizationId));
}

/** The organizations whose feed webhook is not failing: while the loop beats, its feed is read (health-facts.ts). */
export const feedCoveredOrganizations = (watch: Watchlist, sources: Readonly<Record<string, SourceState>>): ReadonlySet<string> => fedOrganizations(watch, sources, true);

interface Candidate {
  ref: SourceRef;
  key: string;
  s: SourceState;
  /** 0 in progress, 1 hot, 2 the staleness queue. */
  tier: 0 | 1 | 2;
  weight: number;
  score: number;
}

const isDue = (s: SourceState, now: number) =>
  (s.last_polled_at === undefined || now - s.last_polled_at >= DISPATCH_POLICY.minIntervalMs) &&
  (s.next_allowed_at === undefined || now >= s.next_allowed_at);

export interface Plan {
  polls: PollRequest[];
  state: DispatchState;
  /** False when the state is as it was (nothing to poll): nothing to write. */
  changed: boolean;
}

/**
 * Plans one tick: the polls to send now and the state to store before sending them. While the change
 * feed's loop beats (`loop`, lib/dispatch/feed-loop.ts) it reads the webhooks: their reads are folded in
 * as polls. Its reads are counted into the budget first, beating or not, so the tick plans within what
 * they left.
 */
export function planTick(prior: DispatchState | undefined, watch: Watchlist, now: number, loop?: FeedLoopState): Plan {
  const base = prior ?? initialState(watch, now);
  const state = countLoopReads(base, loop, now);
  const looping = loopAlive(loop, now) && feedReadsNow(watch, state) > 0;
  let b = budget.reconfigure(state.budget, watch.requestsPerHour);
  const sources: Record<string, SourceState> = {};
  for (const ref of watch.sources) {
    const key = sourceKey(ref);
    const s = looping && isFeedWebhook(watch, ref) ? withLoopRead(state.sources[key] ?? {}, loop.reads[key]) : state.sources[key];
    if (s && (state.sources[key] || s.last_polled_at !== undefined)) sources[key] = s; // sources no longer watched are dropped
    // A source seen for the first time: from now on, not reading it is polling stalled (health-facts.ts).
    else sources[key] = { watched_since: now };
  }
  // A source never polled is as stale as the time it has been watched (`watched_since`, set above), and
  // weighs what it will weigh: its score grows as every other's, so it is reached and nothing starves,
  // while the clusters keep their cadence through a cold start's first sight (an application the feed
  // covers has its failures named meanwhile). Without that time (a state from before it was kept), a
  // minute staler than the stalest, at a weight of at least 1.
  const stalest = Math.min(now, ...Object.values(sources).map((s) => s.last_polled_at ?? now));
  const fed = fedOrganizations(watch, sources, looping);
  const candidates: Candidate[] = [];
  for (const ref of watch.sources) {
    const key = sourceKey(ref);
    const st = sources[key] ?? {};
    if (!isDue(st, now) || (looping && isFeedWebhook(watch, ref))) continue;
    const tier = st.in_progress || st.backlog ? 0 : isHot(st, now) ? 1 : 2;
    const pinned = st.last_polled_at === undefined && st.watched_since === undefined;
    const age = now - (st.last_polled_at ?? st.watched_since ?? stalest - MINUTE);
    const w = weight(ref, watch, fed);
    const scored = pinned ? Math.max(w, 1) : w;
    candidates.push({ ref, key, s: st, tier, weight: w, score: age * scored });
  }

  const chosen = choose(candidates, budget.available(b, now), budget.available(b, now, DISPATCH_POLICY.burstKeptMinutes));
  for (const c of chosen) sources[c.key] = polled(c.s, now);
  b = budget.spend(b, chosen.length, now);

  const silentSince = prior?.last_tick_at;
  const outage = silentSince !== undefined && now - silentSince > DISPATCH_POLICY.outageAfterMs
    ? { from: silentSince, to: now }
    : state.outage;
  const next: DispatchState = {
    budget: b, last_tick_at: now, ...(outage ? { outage } : {}), ...(state.queues ? { queues: state.queues } : {}),
    ...(state.loop_requests ? { loop_requests: state.loop_requests } : {}), sources,
  };
  const polls = chosen.map((c): PollRequest => pollRequest(c.ref, c.s, outage));
  const dropped = Object.keys(sources).length !== Object.keys(state.sources).length;
  // A new tick's time is worth writing (outages are seen by its absence); a retried invocation within
  // the same minute that polls nothing is not.
  const newTick = silentSince === undefined || now - silentSince >= DISPATCH_POLICY.minIntervalMs;
  const changed = !prior || chosen.length > 0 || dropped || b !== base.budget || newTick;
  return { polls, state: changed ? next : state, changed };
}

/**
 * Urgent sources (in progress, hot) may use the whole budget, burst included, but leave the queue its
 * share; the queue is paced: it spends only what the bucket holds above the burst kept for activity.
 */
function choose(candidates: Candidate[], all: number, paced: number): Candidate[] {
  const urgent = candidates
    .filter((c) => c.tier < 2)
    .sort((x, y) => x.tier - y.tier || (x.s.last_polled_at ?? 0) - (y.s.last_polled_at ?? 0) || x.key.localeCompare(y.key));
  const queue = candidates.filter((c) => c.tier === 2).sort((x, y) => y.score - x.score || y.weight - x.weight || x.key.localeCompare(y.key));
  const share = Math.min(queue.length, Math.floor(all * DISPATCH_POLICY.queueShare));
  const u = urgent.slice(0, Math.max(0, all - share));
  const q = queue.slice(0, Math.max(0, Math.min(all - u.length, Math.max(paced - u.length, share))));
  return [...u, ...q];
}

/**
 * How often an idle source is polled in steady state when the queue has the budget to itself. Every
 * source is polled when its score reaches a common level θ, so at θ/weight, but at most once a tick;
 * θ is where the polls per minute add up to what the budget allows.
 */
export function idleIntervalMs(watch: Watchlist): number {
  // The queue, saturated, spends the bucket's refill.
  const perMinute = budget.perMinute(budget.newBudget(watch.requestsPerHour, 0));
  if (watch.sources.length <= perMinute) return MINUTE;
  const weights = watch.sources.map((ref) => weight(ref, watch)).sort((x, y) => y - x);
  let rest = weights.reduce((sum, w) => sum + w, 0);
  // The heaviest sources are capped at one poll a tick; the others share what is left by weight.
  for (const [everyTick, w] of weights.entries()) {
    const theta = rest / (perMinute - everyTick);
    if (w < theta) return theta * MINUTE;
    rest -= w;
  }
  return MINUTE;
}
