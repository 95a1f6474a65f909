/**
 * Dispatch: which sources to poll this tick, within the request budget (DESIGN.md, "The request budget").
 * Pure: the state comes from and goes back to lib/store/dispatch-store.ts; the clock is passed in.
 *
 * Order of a tick:
 * 1. sources with executions in progress (re-read every tick until terminal);
 * 2. sources the change feed named (hot) and that have not been read since;
 * 3. everything else by weighted staleness (see `weight`): webhooks first in practice, then recently
 *    active sources, then the stalest. At least a quarter of the tick's polls go here, so nothing starves.
 * No source is polled twice within a tick; failing sources back off exponentially.
 *
 * Writes: dispatch writes its state once per tick. A poll writes only when it learned something
 * (`applyPollResult(...).changed`): a routine poll's success is inferred, not recorded — the last poll
 * of a source counts as successful until a failure is recorded for it (see `lastOkAt`).
 */
import { isDeepStrictEqual } from "node:util";
import type { Config } from "../config/load.js";
import type { PollRequest, PollResult } from "./poll.js";
import { type SourceRef, sourceKey } from "../model/source.js";
import * as budget from "./budget.js";
import type { BudgetState } from "./budget.js";
import type { HealthFacts } from "../model/health-facts.js";

const MINUTE = 60_000;

export const DISPATCH_POLICY = {
  /** Ticks are a minute apart, give or take a few seconds; a source polled less than this ago is not polled again. */
  minIntervalMs: 55_000,
  /** A source named by the change feed stays hot at most this long (until read after the news). */
  hotMs: 10 * MINUTE,
  /** A source that found something within this is "recently active". */
  activeMs: 60 * MINUTE,
  /** An organization's change feed counts as this many idle sources; its webhooks share the weight. */
  feedWeight: 40,
  activeWeight: 5,
  /** Share of a tick's polls kept for the staleness queue, however busy the urgent ones are. */
  queueShare: 0.25,
  /** Minutes of refill the staleness queue leaves in the bucket, for bursts of activity. */
  burstKeptMinutes: 1.5,
  /** Ticks come every minute: this long without one means Lookout was not running. */
  outageAfterMs: 5 * MINUTE,
  backoffBaseMs: MINUTE,
  backoffMaxMs: 30 * MINUTE,
} as const;

export interface SourceState {
  /** When the latest poll was planned (epoch ms). */
  last_polled_at?: number;
  /** When the latest poll known to have succeeded was planned; read it through `lastOkAt`. */
  last_ok_at?: number;
  /** When a poll last found something new (records, alerts). */
  last_activity_at?: number;
  /** Deployments: executions in progress at the last successful poll. */
  in_progress?: number;
  /** Named by the change feed at `hot_until - hotMs`: urgent until read after that, or until then. */
  hot_until?: number;
  consecutive_failures?: number;
  /** Backoff after a failure: not polled before this. */
  next_allowed_at?: number;
  /** The error kind of the last failure (`PlatformErrorKind`), while failing. */
  last_error?: string;
}

export interface DispatchState {
  budget: BudgetState;
  /** When dispatch last planned a tick (epoch ms): a long silence since is an outage of Lookout. */
  last_tick_at?: number;
  /** The latest outage (epoch ms); sources not read since it ended are polled with it. */
  outage?: { from: number; to: number };
  /** By source key; only watched sources that were polled at least once. */
  sources: Record<string, SourceState>;
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

export function watchlist(config: Pick<Config, "watch" | "platform">): Watchlist {
  const seen = new Map<string, SourceRef>();
  const add = (kind: SourceRef["kind"], organizationId: string, id: string) =>
    seen.set(sourceKey({ kind, organizationId, id }), { kind, organizationId, id });
  for (const w of config.watch) {
    for (const id of w.webhooks) add("webhook", w.organization, id);
    for (const a of w.applications) add("deployment", w.organization, a.id);
    for (const c of w.clusters) add("cluster", w.organization, c.id);
  }
  const sources = [...seen.values()];
  const byApplication = new Map(sources.filter((s) => s.kind === "deployment").map((s) => [s.id, sourceKey(s)]));
  const webhooksPerOrg = new Map<string, number>();
  for (const s of sources) if (s.kind === "webhook") webhooksPerOrg.set(s.organizationId, (webhooksPerOrg.get(s.organizationId) ?? 0) + 1);
  return { sources, keys: new Set(seen.keys()), byApplication, webhooksPerOrg, requestsPerHour: config.platform.requestsPerHour };
}

export function initialState(watch: Watchlist, now: number): DispatchState {
  return { budget: budget.newBudget(watch.requestsPerHour, now), sources: {} };
}

/**
 * When the source was last polled successfully (the poll's planned time): the latest poll, unless a
 * failure was recorded since — a poll that succeeded without news records nothing.
 */
export const lastOkAt = (s: SourceState): number | undefined =>
  !s.consecutive_failures && s.last_polled_at !== undefined ? s.last_polled_at : s.last_ok_at;

export function isHot(s: SourceState, now: number): boolean {
  if (s.hot_until === undefined || now >= s.hot_until) return false;
  const namedAt = s.hot_until - DISPATCH_POLICY.hotMs;
  const readSince = (s.last_polled_at ?? -Infinity) >= namedAt && !s.consecutive_failures;
  return !readSince;
}

/**
 * Weighted staleness: a source's score is the time since its last poll times its weight, and the
 * highest scores are polled first. In steady state every source is polled when its score reaches the
 * same level, so its interval is inversely proportional to its weight: an organization's webhooks
 * together are read `feedWeight` times as often as an idle application (one request names every
 * service that started or failed a deployment), a recently active source `activeWeight` times. The
 * score grows without bound, so every source is reached: nothing starves.
 */
function weight(ref: SourceRef, s: SourceState, watch: Watchlist, now: number): number {
  if (ref.kind === "webhook") return DISPATCH_POLICY.feedWeight / (watch.webhooksPerOrg.get(ref.organizationId) ?? 1);
  const active = s.last_activity_at !== undefined && now - s.last_activity_at < DISPATCH_POLICY.activeMs;
  return active ? DISPATCH_POLICY.activeWeight : 1;
}

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

/** Plans one tick: the polls to send now and the state to store before sending them. */
export function planTick(prior: DispatchState | undefined, watch: Watchlist, now: number): Plan {
  const state = prior ?? initialState(watch, now);
  let b = budget.reconfigure(state.budget, watch.requestsPerHour);
  const sources: Record<string, SourceState> = {};
  for (const ref of watch.sources) {
    const key = sourceKey(ref);
    if (state.sources[key]) sources[key] = state.sources[key]; // sources no longer watched are dropped
  }
  // A source never polled counts as a minute staler than the stalest: first in the round of its weight,
  // while the change feed keeps its place (a cold start reads the webhooks first, then every tick).
  const stalest = Math.min(now, ...Object.values(sources).map((s) => s.last_polled_at ?? now));
  const candidates: Candidate[] = [];
  for (const ref of watch.sources) {
    const key = sourceKey(ref);
    const st = sources[key] ?? {};
    if (!isDue(st, now)) continue;
    const tier = st.in_progress ? 0 : isHot(st, now) ? 1 : 2;
    const age = now - (st.last_polled_at ?? stalest - MINUTE);
    const w = weight(ref, st, watch, now);
    candidates.push({ ref, key, s: st, tier, weight: w, score: age * w });
  }

  const chosen = choose(candidates, budget.available(b, now), budget.available(b, now, DISPATCH_POLICY.burstKeptMinutes));
  for (const c of chosen) sources[c.key] = polled(c.s, now);
  b = budget.spend(b, chosen.length, now);

  const silentSince = prior?.last_tick_at;
  const outage = silentSince !== undefined && now - silentSince > DISPATCH_POLICY.outageAfterMs
    ? { from: silentSince, to: now }
    : state.outage;
  const next: DispatchState = { budget: b, last_tick_at: now, ...(outage ? { outage } : {}), sources };
  const polls = chosen.map((c): PollRequest => pollRequest(c.ref, c.s, outage));
  const dropped = Object.keys(sources).length !== Object.keys(state.sources).length;
  // A new tick's time is worth writing (outages are seen by its absence); a retried invocation within
  // the same minute that polls nothing is not.
  const newTick = silentSince === undefined || now - silentSince >= DISPATCH_POLICY.minIntervalMs;
  const changed = !prior || chosen.length > 0 || dropped || b !== state.budget || newTick;
  return { polls, state: changed ? next : state, changed };
}

/** A poll of a source: when it was last read, and the outage it has not been read since, if any. */
export function pollRequest(source: SourceRef, s: SourceState, outage: DispatchState["outage"]): PollRequest {
  const ok = lastOkAt(s);
  const missedOutage = outage && (s.last_polled_at ?? -Infinity) < outage.to;
  return {
    source,
    ...(ok !== undefined ? { previousPollAt: new Date(ok).toISOString() } : {}),
    ...(missedOutage ? { outage: { from: new Date(outage.from).toISOString(), to: new Date(outage.to).toISOString() } } : {}),
  };
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
 * Marks a source polled now. The previous poll, not known to have failed, becomes the last success; a
 * hot mark that has served (read since, or expired) goes.
 */
function polled(s: SourceState, now: number): SourceState {
  return tidy({ ...s, last_ok_at: lastOkAt(s), last_polled_at: now, hot_until: isHot(s, now) ? s.hot_until : undefined });
}

export interface Applied {
  state: DispatchState;
  /** Whether anything worth storing changed. A routine poll (nothing new, 1 request) changes nothing. */
  changed: boolean;
}

/** Folds one poll's result into the state: the source's health and activity, the change feed, the budget. */
export function applyPollResult(state: DispatchState, result: PollResult, now: number, watch: Watchlist): Applied {
  const rateLimited = result.error?.kind === "rate_limited";
  let b = budget.observeResponse(state.budget, { rateLimit: result.rateLimit, rateLimited }, now);
  // Dispatch spent 1 per poll; what the poll cost beyond that (retries, a second page) is spent now.
  b = budget.spend(b, result.requests - 1, now);

  const updates = new Map<string, SourceState>();
  const update = (key: string, next: SourceState) => {
    if (!isDeepStrictEqual(next, state.sources[key])) updates.set(key, next);
  };
  if (watch.keys.has(result.source)) update(result.source, afterPoll(state.sources[result.source] ?? {}, result, rateLimited, now));
  // The change feed: services named by new deliveries are read next.
  for (const id of result.hotServices) {
    const key = watch.byApplication.get(id);
    if (key) update(key, { ...(updates.get(key) ?? state.sources[key]), hot_until: now + DISPATCH_POLICY.hotMs });
  }
  if (b === state.budget && updates.size === 0) return { state, changed: false };
  return { state: { ...state, budget: b, sources: { ...state.sources, ...Object.fromEntries(updates) } }, changed: true };
}

function afterPoll(s: SourceState, r: PollResult, rateLimited: boolean, now: number): SourceState {
  // A 429 is the budget's business, not the source's: it keeps its health, and since the poll did not
  // happen, it is due again with its last success as it was (`polled` kept it in last_ok_at).
  if (rateLimited) return tidy({ ...s, last_polled_at: s.last_ok_at });
  if (!r.ok) {
    const failures = (s.consecutive_failures ?? 0) + 1;
    const backoff = Math.min(DISPATCH_POLICY.backoffMaxMs, DISPATCH_POLICY.backoffBaseMs * 2 ** (failures - 1));
    // Counted from the failed poll's tick, with the same tolerance as `minIntervalMs`: 1, 2, 4… ticks later.
    const from = (s.last_polled_at ?? now) - (MINUTE - DISPATCH_POLICY.minIntervalMs);
    return tidy({ ...s, consecutive_failures: failures, next_allowed_at: from + backoff, last_error: r.error?.kind ?? "unknown" });
  }
  return tidy({
    ...s,
    // After failures, the streak ends with this poll; otherwise its success is inferred (`lastOkAt`).
    last_ok_at: s.consecutive_failures ? (s.last_polled_at ?? now) : s.last_ok_at,
    consecutive_failures: undefined,
    next_allowed_at: undefined,
    last_error: undefined,
    in_progress: r.inProgress,
    // What a first sight finds is history, not activity: it must not push never-read sources back.
    last_activity_at: !r.firstSight && (r.newRecords > 0 || r.alerts > 0) ? now : s.last_activity_at,
  });
}

/** Absent rather than undefined or zero: states compare equal and store compactly. */
function tidy(s: SourceState): SourceState {
  const out: SourceState = {};
  for (const [k, v] of Object.entries(s) as Array<[keyof SourceState, SourceState[keyof SourceState]]>) {
    if (v !== undefined && v !== 0) (out as Record<string, unknown>)[k] = v;
  }
  return out;
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
  const weights = watch.sources.map((ref) => weight(ref, {}, watch, 0)).sort((x, y) => y - x);
  let rest = weights.reduce((sum, w) => sum + w, 0);
  // The heaviest sources are capped at one poll a tick; the others share what is left by weight.
  for (const [everyTick, w] of weights.entries()) {
    const theta = rest / (perMinute - everyTick);
    if (w < theta) return theta * MINUTE;
    rest -= w;
  }
  return MINUTE;
}

/**
 * Facts for `Lookout Health` events, as data (another stage turns them into events).
 * A 401 always means the token. A 403 may also mean a resource that does not exist (platform-facts.md),
 * so 403s count as the token only when two or more sources got them and nothing succeeded after.
 */
export function healthFacts(
  state: DispatchState,
  watch: Watchlist,
  now: number,
  opts: { failingAfter?: number; stalledAfterMs?: number } = {},
): HealthFacts {
  const failingAfter = opts.failingAfter ?? 3;
  // Idle sources are polled about every `idleIntervalMs`: stalled means well past that.
  const stalledAfterMs = opts.stalledAfterMs ?? Math.max(30 * MINUTE, 2 * idleIntervalMs(watch));
  const facts: HealthFacts = { failing: [], stalled: [], tokenRejected: undefined };
  const entries = watch.sources.map((r) => sourceKey(r)).flatMap((k) => (state.sources[k] ? [[k, state.sources[k]] as const] : []));

  for (const [source, s] of entries) {
    const failures = s.consecutive_failures ?? 0;
    if (failures >= failingAfter) facts.failing.push({ source, consecutiveFailures: failures, lastError: s.last_error ?? "unknown" });
    const ok = lastOkAt(s);
    if (ok !== undefined && now - ok > stalledAfterMs) {
      facts.stalled.push({ source, lastOkAt: new Date(ok).toISOString(), silentForMs: now - ok });
    }
  }

  const lastSuccess = Math.max(-Infinity, ...entries.filter(([, s]) => !s.consecutive_failures).map(([, s]) => s.last_polled_at ?? -Infinity));
  const unauthenticated = entries.filter(([, s]) => s.consecutive_failures && s.last_error === "unauthenticated");
  const forbidden = entries.filter(([, s]) => s.consecutive_failures && s.last_error === "forbidden" && (s.last_polled_at ?? -Infinity) > lastSuccess);
  const rejected = [...unauthenticated, ...(forbidden.length >= 2 ? forbidden : [])];
  if (rejected.length) {
    facts.tokenRejected = {
      sources: rejected.map(([k]) => k),
      statuses: [...new Set(rejected.map(([, s]) => (s.last_error === "unauthenticated" ? 401 : 403)))].sort(),
    };
  }
  return facts;
}
