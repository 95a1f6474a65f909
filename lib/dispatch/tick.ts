/**
 * The minute tick's plan and its records (docs/architecture.md, "The request budget"): the polls of a
 * tick planned within the budget and stored before they are sent, those not sent given back, and one
 * machine's `run --once` recorded as dispatch records its ticks. The poll function's batch is
 * poll-batch.ts, the change feed's tick feed-tick.ts, health from dispatch's state health-watch.ts.
 */
import type { DispatchStore, FeedLoopStore } from "../model/dispatch-store.js";
import type { DispatchState, FeedLoopState, Watchlist } from "../model/dispatch.js";
import type { PollRequest, PollResult } from "../model/poll.js";
import { sourceKey } from "../model/source.js";
import { planTick } from "./plan.js";
import { applyPollResult, DISPATCH_NAME, initialState, lastOkAt, notPolled, polled, pollRequest } from "./source-state.js";
import * as budget from "./budget.js";

/** Plans the polls of this tick within the budget, and records the plan (one write). */
export async function planPolls(
  store: DispatchStore,
  watch: Watchlist,
  now: number,
  name = DISPATCH_NAME,
  loops?: FeedLoopStore,
): Promise<{ polls: PollRequest[]; state: DispatchState; loop?: FeedLoopState }> {
  let polls: PollRequest[] = [];
  // The change feed's loop, when one beats, reads the webhooks (lib/dispatch/feed-loop.ts).
  const loop = await loops?.get(name);
  const { state } = await store.update(name, (current) => {
    const plan = planTick(current, watch, now, loop);
    polls = plan.polls;
    return plan.changed ? plan.state : undefined;
  });
  return { polls, state: state ?? initialState(watch, now), ...(loop ? { loop } : {}) };
}

/** Planned polls that could not be sent: not polled after all, so their sources are due again and their staleness shows. */
export async function unplanPolls(store: DispatchStore, polls: readonly PollRequest[], name = DISPATCH_NAME): Promise<void> {
  await store.update(name, (current) => {
    if (!current) return undefined;
    const sources = { ...current.sources };
    for (const p of polls) {
      const key = sourceKey(p.source);
      if (sources[key]) sources[key] = notPolled(sources[key]);
    }
    return { ...current, sources };
  });
}

/**
 * Every watched source once, budget aside (`lookout run --once`), each knowing when it was last read.
 * `now` is the run's clock (the one its polls stamp records with), so an outage is measured on one clock.
 */
export async function everySource(store: DispatchStore, watch: Watchlist, now: number, name = DISPATCH_NAME): Promise<PollRequest[]> {
  const state = await store.get(name);
  return watch.sources.map((source) => {
    const s = state?.sources[sourceKey(source)] ?? {};
    // Between two `--once` runs nothing watches: the time since the last read is an outage.
    const ok = lastOkAt(s);
    return pollRequest(source, s, ok !== undefined ? { from: ok, to: now } : undefined);
  });
}

/**
 * Records polls made outside dispatch's plan (`lookout run --once`) as dispatch records its own: the
 * tick's time, each source marked polled now, a request spent per poll. So `lookout status` after a cron of `run --once`
 * shows each source's last poll and success and the requests used, as after a continuous run.
 */
export async function recordUnplannedPolls(store: DispatchStore, watch: Watchlist, polls: readonly PollRequest[], now: number, name = DISPATCH_NAME): Promise<void> {
  if (!polls.length) return;
  await store.update(name, (current) => {
    const state = current ?? initialState(watch, now);
    const marked = Object.fromEntries(polls.map((p) => sourceKey(p.source)).map((key) => [key, polled(state.sources[key] ?? {}, now)]));
    // A cron run is a tick: its time is when sources were last planned (status, and outages after it).
    return { ...state, last_tick_at: now, budget: budget.spend(state.budget, polls.length, now), sources: { ...state.sources, ...marked } };
  });
}

/**
 * Records, for sources that could not be polled because the platform refused or could not be reached
 * before any poll (`lookout run --once`'s first request), the failure each poll would have had: counted
 * across cron runs as dispatch counts failed polls, so health events and `lookout status` see it.
 */
export async function recordRefusedPolls(
  store: DispatchStore, watch: Watchlist, polls: readonly PollRequest[], error: NonNullable<PollResult["error"]>, now: number, name = DISPATCH_NAME,
): Promise<DispatchState> {
  const { state } = await store.update(name, (current) =>
    polls.reduce((state, p) => applyPollResult(state, {
      source: sourceKey(p.source), ok: false, requests: 0, retries: 0, newRecords: 0, alerts: 0, suppressed: 0, rejected: 0,
      inProgress: 0, hotServices: [], gapSuspected: false, firstSight: false, error,
    }, now, watch).state, current ?? initialState(watch, now)));
  return state!;
}
