/**
 * A source's polling state and the one fold of a poll's result into dispatch's state: the source's
 * health and activity, the change feed, the budget. Pure but for `recordPollResult`, which folds
 * through a DispatchStore.
 */
import { isDeepStrictEqual } from "node:util";
import type { DispatchState, SourceState, Watchlist } from "../model/dispatch.js";
import type { SourceRef } from "../model/source.js";
import type { DispatchStore } from "../model/dispatch-store.js";
import type { PollRequest, PollResult } from "../model/poll.js";
import * as budget from "./budget.js";

export const MINUTE = 60_000;

/** One budget per platform token; a deployment watches with one token: the name of dispatch's state. */
export const DISPATCH_NAME = "default";

/** The policy dispatch plans and folds by (the order of a tick: plan.ts). */
export const DISPATCH_POLICY = {
  /** Ticks are a minute apart, give or take a few seconds; a source polled less than this ago is not polled again. */
  minIntervalMs: 55_000,
  /** A source named by the change feed stays hot at most this long (until read after the news). */
  hotMs: 10 * MINUTE,
  /**
   * The change feed's tick polls what the feed named in its own process (lib/dispatch/feed-tick.ts), with
   * no retry of its own: a poll it planned whose result is not recorded this long after (the function's
   * timeout: the tick died with it) was not read, and the source is hot again for the minute tick.
   */
  hotClaimMs: MINUTE,
  /**
   * How far behind ours the platform's clock may run when a delivery's time is set against a read's: a
   * read this much after the delivery covers its event. Further behind, a new event could pass for read.
   */
  namedSkewMs: 5_000,
  /** An organization's change feed counts as this many idle sources; its webhooks share the weight. */
  feedWeight: 40,
  /**
   * While the change feed's loop reads an organization's feed (beating, the feed not failing), its application weighs this much in the round:
   * the feed names its deployments within seconds, so the round is only its safety net, and the polls go
   * to what the feed never names (clusters, whose log keeps only the latest run) and to the other webhooks.
   */
  namedByFeedWeight: 0.25,
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

export function initialState(watch: Watchlist, now: number): DispatchState {
  return { budget: budget.newBudget(watch.requestsPerHour, now), sources: {} };
}

/**
 * When the source was last polled successfully (the poll's planned time): the latest poll, unless a
 * failure was recorded since — a poll that succeeded without news records nothing.
 */
export const lastOkAt = (s: SourceState): number | undefined =>
  !s.consecutive_failures && s.last_polled_at !== undefined ? s.last_polled_at : s.last_ok_at;

/**
 * Whether a source was read (a poll planned, not failed) at least `namedSkewMs` after a delivery named
 * it: the platform's clock may run a few seconds behind ours, and reading once more is cheap.
 */
export function readSinceNamed(s: SourceState | undefined, namedAt: number | undefined): boolean {
  return namedAt !== undefined && s !== undefined && !s.consecutive_failures && (s.last_polled_at ?? -Infinity) >= namedAt + DISPATCH_POLICY.namedSkewMs;
}

export function isHot(s: SourceState, now: number): boolean {
  if (s.hot_until === undefined || now >= s.hot_until) return false;
  // The feed tick's poll of it in flight: not hot while that may still end, hot again once it cannot have.
  if (s.hot_claimed_at !== undefined) return now - s.hot_claimed_at >= DISPATCH_POLICY.hotClaimMs;
  const namedAt = s.hot_until - DISPATCH_POLICY.hotMs;
  const readSince = (s.last_polled_at ?? -Infinity) >= namedAt && !s.consecutive_failures;
  return !readSince;
}

/** A poll of a source: when it was last read, and the outage it has not been read since, if any. */
export function pollRequest(source: SourceRef, s: SourceState, outage: DispatchState["outage"]): PollRequest {
  const ok = lastOkAt(s);
  const missedOutage = outage && (s.last_polled_at ?? -Infinity) < outage.to;
  return {
    source,
    ...(ok !== undefined ? { previousPollAt: new Date(ok).toISOString() } : {}),
    ...(missedOutage ? { outage: { from: new Date(outage.from).toISOString(), to: new Date(outage.to).toISOString() } } : {}),
    ...(s.deferred ? { large: true } : {}),
  };
}

/** A planned poll that did not happen (a 429, a deferred answer, an invocation Lambda refused): due again, its last success as it was. */
export const notPolled = (s: SourceState): SourceState => tidy({ ...s, last_polled_at: s.last_ok_at, hot_claimed_at: undefined });

/**
 * Marks a source polled now. The previous poll, not known to have failed, becomes the last success; a
 * hot mark that has served (read since, or expired) goes.
 */
export function polled(s: SourceState, now: number): SourceState {
  return tidy({ ...s, last_ok_at: lastOkAt(s), last_polled_at: now, hot_until: isHot(s, now) ? s.hot_until : undefined, hot_claimed_at: undefined });
}

/** A poll of a hot source that the change feed's tick runs in its own process: the source stays owed a read until its result is recorded. */
export const claimedHot = (s: SourceState, now: number): SourceState => ({ ...polled(s, now), hot_claimed_at: now });

export interface Applied {
  state: DispatchState;
  /** Whether anything worth storing changed. A routine poll (nothing new, 1 request) changes nothing. */
  changed: boolean;
}

/** Folds one poll's result into the state: the source's health and activity, the change feed, the budget. */
export function applyPollResult(state: DispatchState, result: PollResult, now: number, watch: Watchlist): Applied {
  const rateLimited = result.error?.kind === "rate_limited";
  let b = budget.observeResponse(state.budget, { rateLimit: result.rateLimit, rateLimited }, now);
  // Dispatch spent 1 per poll; what the poll cost beyond that (retries, a second page) is spent now, and
  // all of it when Lambda ran the poll again (a rerun no plan counted).
  b = budget.spend(b, result.requests - (result.rerun ? 0 : 1), now);

  const updates = new Map<string, SourceState>();
  const update = (key: string, next: SourceState) => {
    if (!isDeepStrictEqual(next, state.sources[key])) updates.set(key, next);
  };
  if (watch.keys.has(result.source)) update(result.source, afterPoll(state.sources[result.source] ?? {}, result, rateLimited, now));
  // The change feed: services named by new deliveries are read next, unless read since the delivery:
  // each webhook of an organization delivers the same event, and the round reads the others later.
  for (const id of result.hotServices) {
    const key = watch.byApplication.get(id);
    const s = key ? (updates.get(key) ?? state.sources[key]) : undefined;
    if (key && !readSinceNamed(s, result.namedAt?.[id])) update(key, { ...s, hot_until: now + DISPATCH_POLICY.hotMs });
  }
  if (b === state.budget && updates.size === 0) return { state, changed: false };
  return { state: { ...state, budget: b, sources: { ...state.sources, ...Object.fromEntries(updates) } }, changed: true };
}

/**
 * Folds a poll's result into the stored state; writes only when it changed something worth storing.
 * No state yet (`run --once` plans nothing; a first poll before dispatch wrote): one is started, so a
 * failure is counted whichever way Lookout runs (README, "Lookout's health").
 */
export async function recordPollResult(store: DispatchStore, name: string, result: PollResult, now: number, watch: Watchlist): Promise<boolean> {
  return recordPollResults(store, name, [result], now, watch);
}

/** Folds several polls' results into the stored state in one write (the polls of one batch), only when one changed it. */
export async function recordPollResults(store: DispatchStore, name: string, results: readonly PollResult[], now: number, watch: Watchlist): Promise<boolean> {
  if (!results.length) return false;
  const { written } = await store.update(name, (current) => {
    let state = current ?? initialState(watch, now);
    let changed = false;
    for (const result of results) {
      const applied = applyPollResult(state, result, now, watch);
      state = applied.state;
      changed ||= applied.changed;
    }
    return changed ? state : undefined;
  });
  return written;
}

function afterPoll(planned: SourceState, r: PollResult, rateLimited: boolean, now: number): SourceState {
  // The claimed poll's result is here: the feed tick's claim is settled, whatever the poll found. Another
  // poll's (planned before the feed named the source) leaves it: the claimed one may yet die unread.
  const s: SourceState = r.settlesClaim ? { ...planned, hot_claimed_at: undefined } : planned;
  // A 429 is the budget's business, not the source's, and a deferred answer (another poll of the process
  // held a large one: lib/platform/answer-memory.ts) the process's: the source keeps its health, and since
  // the poll did not happen, it is due again with its last success as it was (`polled` kept it in last_ok_at).
  // A deferral is counted: the next poll gets a batch's large-answer room to itself (`pollBatches`), and a
  // source deferred past `deferralsBeforeFailure` polls in a row fails, so health says so.
  const deferred = r.error?.kind === "deferred";
  if (rateLimited) return notPolled(s);
  if (deferred && (s.deferred ?? 0) < DISPATCH_POLICY.deferralsBeforeFailure) return notPolled({ ...s, deferred: (s.deferred ?? 0) + 1 });
  if (!r.ok) {
    const failures = (s.consecutive_failures ?? 0) + 1;
    const backoff = Math.min(DISPATCH_POLICY.backoffMaxMs, DISPATCH_POLICY.backoffBaseMs * 2 ** (failures - 1));
    // Counted from the failed poll's tick, with the same tolerance as `minIntervalMs`: 1, 2, 4… ticks later.
    const from = (s.last_polled_at ?? now) - (MINUTE - DISPATCH_POLICY.minIntervalMs);
    return tidy({ ...s, consecutive_failures: failures, next_allowed_at: from + backoff, last_error: r.error?.kind ?? "unknown", deferred: deferred ? s.deferred : undefined });
  }
  return tidy({
    ...s,
    // After failures, the streak ends with this poll; otherwise its success is inferred (`lastOkAt`).
    last_ok_at: s.consecutive_failures ? (s.last_polled_at ?? now) : s.last_ok_at,
    consecutive_failures: undefined,
    next_allowed_at: undefined,
    last_error: undefined,
    deferred: undefined,
    in_progress: r.inProgress,
    backlog: r.backlog,
    // What a first sight finds is history, not activity: it must not push never-read sources back.
    last_activity_at: !r.firstSight && (r.newRecords > 0 || r.alerts > 0) ? now : s.last_activity_at,
  });
}

/**
 * Absent rather than undefined or zero: states compare equal and store compactly. Once a success is
 * known, when the source was first watched no longer matters.
 */
function tidy(s: SourceState): SourceState {
  const out: SourceState = {};
  for (const [k, v] of Object.entries(s) as Array<[keyof SourceState, SourceState[keyof SourceState]]>) {
    if (v !== undefined && v !== 0) (out as Record<string, unknown>)[k] = v;
  }
  if (out.last_ok_at !== undefined) delete out.watched_since;
  return out;
}
