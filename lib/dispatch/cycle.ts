/**
 * One dispatch tick and one recorded poll: the glue shared by functions/dispatch, functions/poll and the
 * local runner, so the cloud and one machine plan and account the same way. Polls run in lib/poll/
 * (`pollSource`, `pollTogether`); what they learned is recorded here, into dispatch's state.
 */
import type { DispatchStore, FeedLoopStore } from "../model/dispatch-store.js";
import type { DispatchState, FeedLoopState, Watchlist } from "../model/dispatch.js";
import type { IngestStore } from "../model/ingest-store.js";
import type { PollRequest, PollResult } from "../model/poll.js";
import { newAlertItem } from "../alerts/outbox-item.js";
import { healthFromFacts, queueHealth, type QueueSample } from "../alerts/health.js";
import type { LookoutEventDetail } from "../model/event.js";
import type { HealthSettings } from "../config/load.js";
import { sourceKey } from "../model/source.js";
import { healthFacts } from "./health-facts.js";
import { planTick } from "./plan.js";
import { claimFeedTick, FEED_LOOP, feedReadsPerTick, planHot, readsDone, withLoopRead, type FeedClaim } from "./feed-loop.js";
import { applyPollResult, initialState, lastOkAt, notPolled, polled, pollRequest, recordPollResult, recordPollResults } from "./source-state.js";
import * as budget from "./budget.js";
import { pollSource, type PollDeps } from "../poll/poll.js";
import { pollTogether } from "../poll/batch.js";

/** One budget per platform token; a deployment watches with one token. */
export const DISPATCH_NAME = "default";

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
 * Raises `Lookout Health` events for what the dispatch state shows (token rejected, sources failing,
 * polling stalled) into the outbox; an episode already raised is not raised again.
 */
export async function raiseHealth(
  state: DispatchState,
  watch: Watchlist,
  now: Date,
  outbox: Pick<IngestStore, "raiseAlert" | "expiresAt">,
  onRaised?: (detail: LookoutEventDetail) => void,
  settings: HealthSettings = { failingAfter: 3 },
): Promise<number> {
  const facts = healthFacts(state, watch, now.getTime(), {
    failingAfter: settings.failingAfter,
    ...(settings.stalledAfterMs !== undefined ? { stalledAfterMs: settings.stalledAfterMs } : {}),
  });
  const anchor = (source: string) => {
    const s = state.sources[source];
    const ok = s?.last_ok_at ?? (s && !s.consecutive_failures ? s.last_polled_at : undefined);
    return ok !== undefined ? new Date(ok).toISOString() : undefined;
  };
  let raised = 0;
  for (const detail of healthFromFacts(facts, anchor, now)) {
    if (await outbox.raiseAlert(newAlertItem(detail, now.toISOString(), outbox.expiresAt()))) {
      raised++;
      onRaised?.(detail);
    }
  }
  return raised;
}

/**
 * Raises what Lookout's own queues say (dead letters, a backlog) and keeps, in the dispatch state,
 * since when each has shown messages (a write only when that changes).
 */
export async function watchQueues(
  store: DispatchStore,
  samples: readonly QueueSample[],
  watch: Watchlist,
  now: Date,
  outbox: Pick<IngestStore, "raiseAlert" | "expiresAt">,
  name = DISPATCH_NAME,
): Promise<number> {
  const organization = watch.sources[0]?.organizationId ?? "unknown";
  let events: LookoutEventDetail[] = [];
  await store.update(name, (current) => {
    const was = current?.queues ?? {};
    const r = queueHealth(samples, was, organization, now);
    events = r.events;
    if (sameEntries(r.since, was)) return undefined;
    // Before dispatch's first tick (a new stack) there is no state yet: start one, or `since` is lost.
    const { queues: _, ...rest } = current ?? initialState(watch, now.getTime());
    return Object.keys(r.since).length ? { ...rest, queues: r.since } : rest;
  });
  let raised = 0;
  for (const detail of events) if (await outbox.raiseAlert(newAlertItem(detail, now.toISOString(), outbox.expiresAt()))) raised++;
  return raised;
}

const sameEntries = (a: Record<string, number>, b: Record<string, number>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

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

/** Polls one source and tells dispatch what it learned (a write only when there is news). */
export async function pollAndRecord(
  req: PollRequest,
  deps: PollDeps,
  store: DispatchStore,
  watch: Watchlist,
  name = DISPATCH_NAME,
): Promise<PollResult> {
  const result = await pollSource(req, deps);
  await recordPollResult(store, name, result, deps.now().getTime(), watch);
  return result;
}


/** Sources the poll function takes an invocation (dispatch sends them so: lib/app/cloud/invoke.ts). */
export const POLL_BATCH = 10;

/**
 * A tick's polls in batches of at most `POLL_BATCH`, in plan order, but with at most one poll known to
 * bring a large answer (`large`: deferred last time) a batch: each batch has room for one, so two such
 * sources are never deferred by each other again.
 */
export function pollBatches(polls: readonly PollRequest[]): PollRequest[][] {
  const large = polls.filter((p) => p.large);
  const count = Math.max(large.length, Math.ceil(polls.length / POLL_BATCH));
  const batches: PollRequest[][] = Array.from({ length: count }, (_, i) => (large[i] ? [large[i]!] : []));
  let next = 0;
  for (const p of polls) {
    if (p.large) continue;
    while (batches[next]!.length >= POLL_BATCH) next++;
    batches[next]!.push(p);
  }
  return batches.filter((b) => b.length);
}

/**
 * Polls a batch of sources at once, as the poll function does: room for one large answer among them
 * (lib/platform/answer-memory.ts; another is deferred to the next tick), and dispatch told what they
 * learned in one write. Results in the order of `reqs`.
 */
export async function pollBatch(reqs: readonly PollRequest[], deps: PollDeps, store: DispatchStore, watch: Watchlist, name = DISPATCH_NAME): Promise<PollResult[]> {
  const results = await pollTogether(reqs, deps);
  await recordPollResults(store, name, results, deps.now().getTime(), watch);
  return results;
}

export interface FeedTickOutcome {
  /** False when another loop holds the lease (or there is no loop to run): this loop ends. */
  claimed: boolean;
  /** Why a tick was refused: another loop holds the lease, the budget in force leaves the loop no read, or no webhook is watched. */
  refused?: "lease" | "no_room" | "no_feed";
  /** The feed reads', then the named services' polls' results. */
  results: PollResult[];
}

/**
 * One tick of the change feed's loop (lib/dispatch/feed-loop.ts): claims the lease, reads the feed, and
 * polls at once the services it named. Dispatch's state is written only when the feed brought news (the
 * loop's own reads go to its small item, stamped once answered), and the news and the polls it calls for
 * in one write. `renew` (the cloud's next tick) goes right after the claim; when it fails the tick still
 * reads, and fails afterwards.
 */
export async function feedTick(
  d: {
    dispatch: DispatchStore; loops: FeedLoopStore; watch: Watchlist; pollDeps: PollDeps;
    /** Once the lease is won, before the reads: the cloud's loop sends its next tick's message. */
    renew?: () => Promise<void>;
  },
  now: number,
  name = DISPATCH_NAME,
): Promise<FeedTickOutcome> {
  if (!feedReadsPerTick(d.watch)) return { claimed: false, refused: "no_feed", results: [] };
  const state = await d.dispatch.get(name);
  let claim: FeedClaim | undefined;
  let held = false;
  await d.loops.update(name, (current) => {
    held = current !== undefined && now - current.beat_at < FEED_LOOP.leaseGapMs;
    return (claim = claimFeedTick(current, state, d.watch, now))?.loop;
  });
  if (!claim) return { claimed: false, refused: held ? "lease" : "no_room", results: [] };
  const renewed = d.renew ? await d.renew().then(() => undefined, (err: unknown) => err) : undefined;
  const feed = await pollTogether(claim.polls, d.pollDeps);
  if (feed.length) await d.loops.update(name, (current) => current && readsDone(current, feed, now));
  let hot: PollRequest[] = [];
  if (feed.length) {
    await d.dispatch.update(name, (current) => {
      let next = current ?? initialState(d.watch, now);
      let changed = false;
      for (const r of feed) {
        // The loop's read counts as the source's poll, written only with the news it brought.
        next = { ...next, sources: { ...next.sources, [r.source]: withLoopRead(next.sources[r.source] ?? {}, now) } };
        const applied = applyPollResult(next, r, now, d.watch);
        next = applied.state;
        changed ||= applied.changed;
      }
      const plan = planHot(next, d.watch, now);
      hot = plan.polls;
      return changed || hot.length ? plan.state : undefined;
    });
  }
  const results = [...feed, ...(hot.length ? await pollBatch(hot, d.pollDeps, d.dispatch, d.watch, name) : [])];
  if (renewed) throw renewed;
  return { claimed: true, results };
}
