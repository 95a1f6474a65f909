import { describe, expect, it } from "vitest";
import type { DispatchState, Watchlist } from "../../../lib/model/dispatch.js";
import { DISPATCH_POLICY, applyPollResult, initialState, isHot } from "../../../lib/dispatch/source-state.js";
import { healthFacts } from "../../../lib/dispatch/health-facts.js";
import { idleIntervalMs, planTick } from "../../../lib/dispatch/plan.js";
import { watchlist } from "../../../lib/dispatch/watchlist.js";
import * as budget from "../../../lib/dispatch/budget.js";
import { available, capOf } from "../../../lib/dispatch/budget.js";
import type { PollRequest, PollResult } from "../../../lib/model/poll.js";
import { sourceKey } from "../../../lib/model/source.js";
import type { Config } from "../../../lib/config/load.js";
import { maxInAnyHour, pollResult, rng } from "../../support/dispatch-sim.js";
import { POLL_BATCH, pollBatches } from "../../../lib/dispatch/poll-batch.js";

const MIN = 60_000;
const HOUR = 3_600_000;
const T0 = Date.parse("2026-03-02T10:00:00Z");
const ORG = "0a000000-0000-4000-8000-000000000000";
const uuid = (prefix: string, i: number) => `${prefix}${String(i).padStart(7, "0")}-0000-4000-8000-000000000000`;
const app = (i: number) => uuid("a", i);

function makeWatch(o: { apps: number; webhooks?: number; clusters?: number; rph?: number; orgs?: number }): Watchlist {
  const orgs = o.orgs ?? 1;
  const platform: Config["platform"] = { url: "http://x", tokenRef: "env:T", auth: "token", requestsPerHour: o.rph ?? 1000, timeoutMs: 10_000 };
  const watch = Array.from({ length: orgs }, (_, g) => ({
    organization: g === 0 ? ORG : uuid("0", g),
    webhooks: Array.from({ length: o.webhooks ?? 0 }, (_, i) => uuid("b", g * 1000 + i)),
    clusters: Array.from({ length: o.clusters ?? 0 }, (_, i) => ({ id: uuid("c", g * 1000 + i) })),
    applications: Array.from({ length: o.apps }, (_, i) => ({ id: app(g * 100_000 + i) })),
  }));
  return watchlist({ platform, watch });
}

const depKey = (i: number) => sourceKey({ kind: "deployment", organizationId: ORG, id: app(i) });
const hookKey = (i: number) => sourceKey({ kind: "webhook", organizationId: ORG, id: uuid("b", i) });

const result = pollResult;
const failed = (source: string, kind = "server_error", status = 502) =>
  result(source, { ok: false, error: { kind, status, message: "no" } });

interface Run {
  state: DispatchState;
  /** Poll times per source key. */
  polls: Map<string, number[]>;
  /** (time, requests) actually sent, overruns included. */
  sent: Array<[number, number]>;
  /** (time, polls) as planned. */
  planned: Array<[number, number]>;
  /** Ticks that left a source with an execution in progress unread: the budget had no room for it. */
  short: Set<number>;
}

/**
 * Drives dispatch tick by tick on a simulated clock: each planned poll runs at once and its result
 * (from `outcome`) is applied, as the pollers would.
 */
function simulate(
  watch: Watchlist,
  durationMs: number,
  outcome: (req: PollRequest, key: string, now: number) => PollResult = (_, key) => result(key),
  opts: { state?: DispatchState; start?: number; tickMs?: number } = {},
): Run {
  const run: Run = { state: opts.state ?? initialState(watch, opts.start ?? T0), polls: new Map(), sent: [], planned: [], short: new Set() };
  const start = opts.start ?? T0;
  for (let now = start; now < start + durationMs; now += opts.tickMs ?? MIN) {
    const before = run.state;
    const plan = planTick(run.state, watch, now);
    const inProgress = Object.entries(before.sources).filter(([, s]) => s.in_progress).length;
    if (plan.polls.filter((p) => before.sources[sourceKey(p.source)]?.in_progress).length < inProgress) {
      // Only when the budget is spent: the tick polled all it could.
      expect(plan.polls.length).toBe(available(budget.reconfigure(before.budget, watch.requestsPerHour), now));
      run.short.add(now);
    }
    run.state = plan.state;
    run.planned.push([now, plan.polls.length]);
    const keys = plan.polls.map((p) => sourceKey(p.source));
    expect(new Set(keys).size).toBe(keys.length);
    for (const [i, req] of plan.polls.entries()) {
      const key = keys[i]!;
      run.polls.set(key, [...(run.polls.get(key) ?? []), now]);
      const r = outcome(req, key, now);
      run.sent.push([now, r.requests]);
      run.state = applyPollResult(run.state, r, now + 1_000, watch).state;
    }
  }
  return run;
}

/** The longest time a source went without a poll in [from, to), counting the edges. */
function maxGap(times: number[] | undefined, from: number, to: number): number {
  const ts = [from, ...(times ?? []).filter((t) => t >= from && t < to), to];
  return Math.max(...ts.slice(1).map((t, i) => t - ts[i]!));
}

describe("the budget is respected", () => {
  it("never exceeds the per-hour budget in any 60-minute window over 24 hours of busy polling", () => {
    const watch = makeWatch({ apps: 500, webhooks: 2, clusters: 50 });
    const random = rng(7);
    const deploying = new Map<number, number>(); // app index → until
    const seenInProgress = new Map<number, number>(); // app index → last poll that saw it in progress
    const late: number[] = [];
    const run = simulate(watch, 24 * HOUR, (req, key, now) => {
      // About 60 deployments an hour, 3 to 12 minutes each; the webhook names them as they start.
      if (req.source.kind === "webhook") {
        const started = Array.from({ length: random() < 0.5 ? 1 : 0 }, () => Math.floor(random() * 500));
        for (const i of started) deploying.set(i, now + (3 + random() * 9) * MIN);
        return result(key, { newRecords: started.length, hotServices: started.map(app) });
      }
      // One poll in ten costs more than planned: a second page, or retries.
      const requests = random() < 0.1 ? 2 + Math.floor(random() * 3) : 1;
      const i = req.source.kind === "deployment" ? Number(req.source.id.slice(1, 8)) : -1;
      const inProgress = (deploying.get(i) ?? 0) > now ? 1 : 0;
      const seen = seenInProgress.get(i);
      if (seen !== undefined && now - seen > MIN) late.push(seen + MIN);
      if (inProgress) seenInProgress.set(i, now);
      else seenInProgress.delete(i);
      return result(key, { requests, inProgress, newRecords: inProgress });
    });
    expect(maxInAnyHour(run.sent)).toBeLessThanOrEqual(1000);
    expect(maxInAnyHour(run.planned)).toBeLessThanOrEqual(capOf(run.state.budget));
    const perHour = run.sent.reduce((s, [, n]) => s + n, 0) / 24;
    expect(perHour).toBeGreaterThan(850); // …and the budget is used, not hoarded
    // Meanwhile every execution seen in progress was read again the very next tick, unless that tick's
    // budget was spent (more executions in progress than a tick's refill less the queue's share).
    expect(seenInProgress.size + deploying.size).toBeGreaterThan(0);
    expect(late.filter((t) => !run.short.has(t))).toEqual([]);
    expect(late.length).toBeLessThan(10);
  });

  it("never plans more polls than the platform says remain", () => {
    const watch = makeWatch({ apps: 100 });
    let state = initialState(watch, T0);
    state = applyPollResult(state, result("x", { rateLimit: { remaining: 3, resetAt: T0 + 30 * MIN } }), T0, watch).state;
    const plan = planTick(state, watch, T0);
    expect(plan.polls).toHaveLength(3);
    expect(planTick(plan.state, watch, T0 + MIN).polls).toHaveLength(0);
  });

  it("a 429 stops dispatch at once, and is not held against the source", () => {
    const watch = makeWatch({ apps: 100 });
    const first = planTick(undefined, watch, T0);
    const polled = sourceKey(first.polls[0]!.source);
    const r = result(polled, { ok: false, requests: 1, error: { kind: "rate_limited", status: 429, message: "slow down" }, rateLimit: { retryAfterMs: 5 * MIN } });
    const after = applyPollResult(first.state, r, T0 + 1_000, watch);
    expect(after.changed).toBe(true);
    expect(planTick(after.state, watch, T0 + MIN).polls).toHaveLength(0);
    expect(planTick(after.state, watch, T0 + 4 * MIN).polls).toHaveLength(0);
    expect(after.state.sources[polled]?.consecutive_failures).toBeUndefined();
    // The poll did not happen: the source is due again as soon as the platform lets us.
    const resumed = planTick(after.state, watch, T0 + 6 * MIN).polls.map((p) => sourceKey(p.source));
    expect(resumed).toContain(polled);
  });
});

describe("where the budget goes", () => {
  it("sources with executions in progress are polled every tick", () => {
    const watch = makeWatch({ apps: 500, webhooks: 1 });
    const busy = new Set([depKey(10), depKey(200), depKey(499)]);
    const run = simulate(watch, 3 * HOUR, (_, key) => result(key, { inProgress: busy.has(key) ? 2 : 0 }));
    for (const key of busy) {
      const times = run.polls.get(key)!;
      // From the first poll, every tick (its first poll comes in staleness order).
      expect(maxGap(times, times[0]!, T0 + 3 * HOUR)).toBe(MIN);
    }
  });

  it("a cluster with a flood left for later polls is polled every tick until it is stored, then as an idle source", () => {
    const watch = makeWatch({ apps: 500, webhooks: 1, clusters: 1 });
    const cluster = sourceKey({ kind: "cluster", organizationId: ORG, id: uuid("c", 0) });
    let left = 10;
    const run = simulate(watch, 3 * HOUR, (_, key) => result(key, key === cluster && left > 0 ? { backlog: --left || undefined, newRecords: 1_000 } : {}));
    const times = run.polls.get(cluster)!;
    const draining = times.slice(0, 10);
    expect(maxGap(draining, draining[0]!, draining.at(-1)!)).toBe(MIN);
    expect(times[10]! - times[9]!).toBeGreaterThan(MIN);
  });

  it("a service named by the change feed is read next tick, before staler idle sources, then goes back to normal", () => {
    const watch = makeWatch({ apps: 500, webhooks: 1 });
    // An hour in: every app has been polled, some long ago.
    let run = simulate(watch, HOUR);
    const named = 123;
    const lastBefore = run.polls.get(depKey(named))!.at(-1)!;
    const now = T0 + HOUR;
    run.state = applyPollResult(run.state, result(hookKey(0), { newRecords: 1, hotServices: [app(named), "not-watched"] }), now, watch).state;
    const plan = planTick(run.state, watch, now + MIN);
    expect(plan.polls.map((p) => sourceKey(p.source))).toContain(depKey(named));
    expect(now + MIN - lastBefore).toBeLessThan(30 * MIN); // it was not due by staleness
    expect(Object.keys(plan.state.sources)).not.toContain(expect.stringContaining("not-watched"));
    // Read after the news (nothing in progress): not hot any more, not polled the tick after.
    const next = planTick(plan.state, watch, now + 2 * MIN);
    expect(next.polls.map((p) => sourceKey(p.source))).not.toContain(depKey(named));
  });

  it("a service read since a delivery named it is not read again for the same event another webhook delivers", () => {
    const watch = makeWatch({ apps: 50, webhooks: 3 });
    let state = simulate(watch, 10 * MIN).state;
    const delivered = T0 + 10 * MIN - 3_000;
    // The feed names it; the tick reads it.
    state = applyPollResult(state, result(hookKey(0), { newRecords: 1, hotServices: [app(7)], namedAt: { [app(7)]: delivered } }), T0 + 10 * MIN, watch).state;
    let plan = planTick(state, watch, T0 + 11 * MIN);
    expect(plan.polls.map((p) => sourceKey(p.source))).toContain(depKey(7));
    state = applyPollResult(plan.state, result(depKey(7)), T0 + 11 * MIN + 1_000, watch).state;
    // Later, another webhook's log brings the same event (delivered then): not hot again, not read again.
    state = applyPollResult(state, result(hookKey(1), { newRecords: 1, hotServices: [app(7)], namedAt: { [app(7)]: delivered + 1_000 } }), T0 + 14 * MIN, watch).state;
    expect(isHot(state.sources[depKey(7)]!, T0 + 14 * MIN)).toBe(false);
    // A delivery after the read (the deployment ended), or one within the clocks' tolerance of it: hot.
    for (const at of [T0 + 13 * MIN, T0 + 11 * MIN - DISPATCH_POLICY.namedSkewMs + 1]) {
      const again = applyPollResult(state, result(hookKey(2), { newRecords: 1, hotServices: [app(7)], namedAt: { [app(7)]: at } }), T0 + 14 * MIN, watch).state;
      expect(isHot(again.sources[depKey(7)]!, T0 + 14 * MIN), new Date(at).toISOString()).toBe(true);
    }
    // Without the delivery's time (an older poller), named is hot, as before.
    const untimed = applyPollResult(state, result(hookKey(2), { newRecords: 1, hotServices: [app(7)] }), T0 + 14 * MIN, watch).state;
    expect(isHot(untimed.sources[depKey(7)]!, T0 + 14 * MIN)).toBe(true);
  });

  it("a hot service whose first read after the news failed stays hot", () => {
    const watch = makeWatch({ apps: 50 });
    let state = simulate(watch, 10 * MIN).state;
    state = applyPollResult(state, result("webhook:x/y", { hotServices: [app(7)] }), T0 + 10 * MIN, watch).state;
    let plan = planTick(state, watch, T0 + 11 * MIN);
    expect(plan.polls.map((p) => sourceKey(p.source))).toContain(depKey(7));
    state = applyPollResult(plan.state, failed(depKey(7)), T0 + 11 * MIN + 1_000, watch).state;
    plan = planTick(state, watch, T0 + 12 * MIN + 1_000);
    expect(plan.polls.map((p) => sourceKey(p.source))[0]).toBe(depKey(7));
  });

  it("the webhook delivery log (the change feed) is polled every tick next to 500 idle applications", () => {
    const watch = makeWatch({ apps: 500, webhooks: 1 });
    const run = simulate(watch, 4 * HOUR);
    expect(maxGap(run.polls.get(hookKey(0)), T0, T0 + 4 * HOUR)).toBe(MIN);
  });

  it("an organization's webhooks share its change feed's weight", () => {
    const watch = makeWatch({ apps: 500, webhooks: 4 });
    const run = simulate(watch, 4 * HOUR);
    const feedPolls = [0, 1, 2, 3].flatMap((i) => run.polls.get(hookKey(i)) ?? []).filter((t) => t >= T0 + HOUR);
    // Together about once a tick, not four times.
    expect(feedPolls.length / 180).toBeGreaterThan(0.8);
    expect(feedPolls.length / 180).toBeLessThan(1.5);
  });

  it("recent activity does not pull a source ahead of the round: where deployments come at random, every application is read as often", () => {
    const watch = makeWatch({ apps: 500 });
    const active = new Set([depKey(1), depKey(2)]);
    const run = simulate(watch, 4 * HOUR, (_, key) => result(key, { newRecords: active.has(key) ? 1 : 0 }));
    const count = (k: string) => (run.polls.get(k) ?? []).filter((t) => t >= T0 + HOUR).length;
    // One round every ~34 minutes over 3 hours: 5 or 6 reads each, active or not.
    expect(Math.abs(count(depKey(1)) - count(depKey(3)))).toBeLessThanOrEqual(1);
  });

  it("no idle source starves: with 500 applications at 1000 requests/hour each is polled within the computed interval", () => {
    const watch = makeWatch({ apps: 500 });
    const bound = idleIntervalMs(watch);
    expect(bound / MIN).toBeCloseTo(500 / (950 / 64), 1); // ≈ 34 minutes
    const run = simulate(watch, 6 * HOUR);
    // After the first round, every source's longest gap is within the bound plus one tick.
    for (let i = 0; i < 500; i++) {
      const times = run.polls.get(depKey(i))!;
      expect(maxGap(times, times[0]!, T0 + 6 * HOUR)).toBeLessThanOrEqual(bound + MIN);
    }
    // The first round (cold start) reaches every source within the same bound, plus one tick.
    expect(Math.max(...[...run.polls.values()].map((t) => t[0]!)) - T0).toBeLessThanOrEqual(bound + MIN);
  });

  it("no idle source starves even when executions in progress could take the whole budget", () => {
    const watch = makeWatch({ apps: 500 });
    const stuck = new Set(Array.from({ length: 40 }, (_, i) => depKey(i)));
    const run = simulate(watch, 8 * HOUR, (_, key) => result(key, { inProgress: stuck.has(key) ? 1 : 0 }));
    // The queue keeps a quarter of each tick: at ~15 polls a tick, 3 go to the 460 others.
    const bound = (460 / Math.floor(15 * DISPATCH_POLICY.queueShare)) * MIN;
    for (let i = 40; i < 500; i++) {
      const times = run.polls.get(depKey(i))!;
      expect(maxGap(times, times[0]!, T0 + 8 * HOUR)).toBeLessThanOrEqual(bound + 2 * MIN);
    }
  });

  it("with budget to spare, every source is polled every tick, and never twice within one", () => {
    const watch = makeWatch({ apps: 8, webhooks: 1, clusters: 2 });
    const run = simulate(watch, HOUR);
    for (const times of run.polls.values()) expect(maxGap(times, T0, T0 + HOUR)).toBe(MIN);
    // A second invocation within the same minute (a retried schedule) polls nothing again.
    const again = planTick(run.state, watch, T0 + HOUR - MIN + 30_000);
    expect(again.polls).toHaveLength(0);
    expect(again.changed).toBe(false);
  });
});

describe("failures", () => {
  it("a source failing repeatedly backs off exponentially, up to about 30 minutes, and recovers", () => {
    const watch = makeWatch({ apps: 5 });
    const sick = depKey(0);
    let healthyFrom = Infinity;
    const run = simulate(watch, 4 * HOUR, (_, key, now) => (key === sick && now < healthyFrom ? failed(key) : result(key)));
    const times = run.polls.get(sick)!;
    const gaps = times.slice(1).map((t, i) => (t - times[i]!) / MIN);
    expect(gaps.slice(0, 8)).toEqual([1, 2, 4, 8, 16, 30, 30, 30]);
    expect(run.state.sources[sick]).toMatchObject({ consecutive_failures: times.length, last_error: "server_error" });

    healthyFrom = 0;
    const later = simulate(watch, 2 * HOUR, (_, key) => result(key), { state: run.state, start: T0 + 4 * HOUR });
    const after = later.polls.get(sick)!;
    expect(maxGap(after, after[0]!, T0 + 6 * HOUR)).toBe(MIN);
    expect(later.state.sources[sick]?.consecutive_failures).toBeUndefined();
  });

  it("previousPollAt is the last successful poll: a failure in between does not move it", () => {
    const watch = makeWatch({ apps: 1 });
    const key = depKey(0);
    let plan = planTick(undefined, watch, T0);
    expect(plan.polls[0]!.previousPollAt).toBeUndefined(); // first sight
    let state = applyPollResult(plan.state, result(key), T0 + 1_000, watch).state;
    plan = planTick(state, watch, T0 + MIN);
    expect(plan.polls[0]!.previousPollAt).toBe(new Date(T0).toISOString());
    state = applyPollResult(plan.state, failed(key), T0 + MIN + 1_000, watch).state;
    plan = planTick(state, watch, T0 + 2 * MIN);
    expect(plan.polls[0]!.previousPollAt).toBe(new Date(T0).toISOString());
    state = applyPollResult(plan.state, result(key), T0 + 2 * MIN + 1_000, watch).state;
    plan = planTick(state, watch, T0 + 3 * MIN);
    expect(plan.polls[0]!.previousPollAt).toBe(new Date(T0 + 2 * MIN).toISOString());
  });
});

describe("applyPollResult: what is worth writing", () => {
  const watch = makeWatch({ apps: 3, webhooks: 1 });
  const key = depKey(0);
  const base = (() => {
    let state = planTick(undefined, watch, T0).state;
    state = applyPollResult(state, result(key, { inProgress: 1, newRecords: 1 }), T0 + 1_000, watch).state;
    return planTick(state, watch, T0 + MIN).state;
  })();
  const apply = (r: PollResult) => applyPollResult(base, r, T0 + MIN + 2_000, watch);

  it("a routine poll changes nothing: nothing new, 1 request, in-progress count unchanged, headers as expected", () => {
    const r = apply(result(key, { inProgress: 1, rateLimit: { limit: 1000, remaining: 990, resetAt: T0 + 30 * MIN } }));
    expect(r.changed).toBe(false);
    expect(apply(result(hookKey(0))).changed).toBe(false);
  });

  it.each([
    ["new records", result(key, { inProgress: 1, newRecords: 1 })],
    ["an alert", result(key, { inProgress: 1, newRecords: 1, alerts: 1 })],
    ["the execution ended", result(key, { inProgress: 0, newRecords: 1 })],
    ["a failure", failed(key)],
    ["a 429", result(key, { ok: false, error: { kind: "rate_limited", status: 429, message: "" } })],
    ["a poll that cost more than planned", result(key, { inProgress: 1, requests: 2 })],
    ["the change feed named a service", result(hookKey(0), { newRecords: 1, hotServices: [app(2)] })],
    ["the platform counts fewer remaining than we do", result(key, { inProgress: 1, rateLimit: { remaining: 2, resetAt: T0 + 30 * MIN } })],
    ["the platform's limit is lower", result(key, { inProgress: 1, rateLimit: { limit: 500 } })],
  ])("is worth writing when a poll brings %s", (_, r) => {
    expect(apply(r).changed).toBe(true);
  });

  it("marks the deployment source of a named service hot, mapped by watched application id", () => {
    const r = apply(result(hookKey(0), { newRecords: 1, hotServices: [app(2), "someone-else"] }));
    expect(r.state.sources[depKey(2)]?.hot_until).toBe(T0 + MIN + 2_000 + DISPATCH_POLICY.hotMs);
    expect(Object.keys(r.state.sources).filter((k) => k.includes("someone-else"))).toEqual([]);
  });

  it("a failing poll's extra requests are spent from the budget", () => {
    const before = available(base.budget, T0 + MIN + 2_000);
    const r = apply(result(key, { ok: false, requests: 4, retries: 3, error: { kind: "server_error", status: 503, message: "" } }));
    expect(available(r.state.budget, T0 + MIN + 2_000)).toBe(before - 3);
  });
});

describe("deferred answers", () => {
  const deferred = (source: string) => result(source, { ok: false, error: { kind: "deferred", status: 0, message: "another poll held the room" } });

  it("a deferred source is due again at once, no failure counted, and its next poll asks for a batch's large-answer room", () => {
    const watch = makeWatch({ apps: 3 });
    const key = depKey(1);
    let plan = planTick(undefined, watch, T0);
    let state = plan.state;
    for (const p of plan.polls) state = applyPollResult(state, sourceKey(p.source) === key ? deferred(key) : result(sourceKey(p.source)), T0 + 1_000, watch).state;
    expect(state.sources[key]).toMatchObject({ deferred: 1 });
    expect(state.sources[key]?.consecutive_failures).toBeUndefined();
    plan = planTick(state, watch, T0 + MIN);
    expect(plan.polls.find((p) => sourceKey(p.source) === key)).toMatchObject({ large: true });
    expect(plan.polls.filter((p) => p.large)).toHaveLength(1);
    state = applyPollResult(plan.state, result(key), T0 + MIN + 1_000, watch).state;
    expect(state.sources[key]?.deferred).toBeUndefined();
  });

  it("a source deferred poll after poll is not silent: past the limit its deferrals count as failures, and health says so", () => {
    const watch = makeWatch({ apps: 2 });
    const key = depKey(0);
    const run = simulate(watch, 12 * MIN, (_, k) => (k === key ? deferred(k) : result(k)));
    expect(run.polls.get(key)!.slice(0, DISPATCH_POLICY.deferralsBeforeFailure + 1).map((t) => (t - T0) / MIN)).toEqual([0, 1, 2, 3]);
    expect(run.state.sources[key]).toMatchObject({ last_error: "deferred" });
    const facts = healthFacts(run.state, watch, T0 + 12 * MIN, { stalledAfterMs: HOUR });
    expect(facts.failing.map((f) => f.source)).toEqual([key]);
  });
});

describe("pollBatches", () => {
  const req = (i: number, large = false): PollRequest => ({ source: { kind: "deployment", organizationId: ORG, id: app(i) }, ...(large ? { large } : {}) });
  const ids = (batches: PollRequest[][]) => batches.map((b) => b.map((p) => Number(p.source.id.slice(1, 8))));

  it("cuts a tick's polls into batches of ten, in plan order", () => {
    const batches = pollBatches(Array.from({ length: 23 }, (_, i) => req(i)));
    expect(batches.map((b) => b.length)).toEqual([10, 10, 3]);
    expect(ids(batches).flat()).toEqual(Array.from({ length: 23 }, (_, i) => i));
  });

  it("gives each poll known to bring a large answer a batch of its own room: never two in one batch", () => {
    const polls = Array.from({ length: 15 }, (_, i) => req(i, i === 1 || i === 4 || i === 9));
    const batches = pollBatches(polls);
    for (const b of batches) expect(b.filter((p) => p.large).length).toBeLessThanOrEqual(1);
    expect(batches.every((b) => b.length <= POLL_BATCH)).toBe(true);
    expect(batches).toHaveLength(3);
    expect(ids(batches).flat().sort((x, y) => x - y)).toEqual(Array.from({ length: 15 }, (_, i) => i));
    // More large ones than ten polls need batches: more batches.
    expect(pollBatches([req(0, true), req(1, true), req(2)]).map((b) => b.length)).toEqual([2, 1]);
  });
});

describe("health facts", () => {
  const watch = makeWatch({ apps: 4 });
  const k = [0, 1, 2, 3].map(depKey);

  function stateWith(outcome: (key: string, tick: number) => PollResult, ticks: number) {
    let state = initialState(watch, T0);
    for (let tick = 0; tick < ticks; tick++) {
      // Poll every source every tick, whatever the backoff, to set up the facts quickly.
      const now = T0 + tick * 40 * MIN;
      state = planTick(state, watch, now).state;
      for (const key of k) state = applyPollResult(state, outcome(key, tick), now + 1_000, watch).state;
    }
    return state;
  }

  it("reports a source failing three times in a row, and one with no success for too long", () => {
    const state = stateWith((key, tick) => (key === k[0] && tick > 0 ? failed(key, "timeout", 0) : result(key)), 5);
    const facts = healthFacts(state, watch, T0 + 4 * 40 * MIN + 5_000, { stalledAfterMs: HOUR });
    expect(facts.failing).toEqual([{ source: k[0], consecutiveFailures: 4, lastError: "timeout" }]);
    expect(facts.stalled.map((s) => s.source)).toEqual([k[0]]);
    expect(facts.stalled[0]!.lastOkAt).toBe(new Date(T0).toISOString());
    expect(facts.tokenRejected).toBeUndefined();
    expect(healthFacts(state, watch, T0 + 4 * 40 * MIN + 5_000, { stalledAfterMs: 4 * HOUR }).stalled).toEqual([]);
  });

  it("a source never read is stalled from when it was first watched, however the round starves it", () => {
    // No budget at all: nothing is ever polled, and the first tick is when every source was first watched.
    const starved = makeWatch({ apps: 4, rph: 0 });
    let state = initialState(starved, T0);
    for (let m = 0; m <= 90; m++) state = planTick(state, starved, T0 + m * MIN).state;
    expect(Object.values(state.sources).every((s) => s.last_polled_at === undefined && s.watched_since === T0)).toBe(true);
    // A never-read source gets the allowance of the lightest weight (four times): 1 h given, 4 h.
    expect(healthFacts(state, starved, T0 + 4 * HOUR - MIN, { stalledAfterMs: HOUR }).stalled).toEqual([]);
    const facts = healthFacts(state, starved, T0 + 4 * HOUR + MIN, { stalledAfterMs: HOUR });
    expect(facts.stalled.map((f) => f.source).sort()).toEqual([...k].sort());
    expect(facts.stalled[0]).toMatchObject({ watchedSince: new Date(T0).toISOString(), silentForMs: 4 * HOUR + MIN });
    expect(facts.stalled[0]!.lastOkAt).toBeUndefined();
    // Once read, staleness runs from its reads; when it was first watched is dropped once a success is
    // known (its next plan), not before: a poll lost on the way leaves it never read again.
    let read = applyPollResult(planTick(state, watch, T0 + 5 * HOUR).state, result(k[0]!), T0 + 5 * HOUR, watch).state;
    expect(healthFacts(read, watch, T0 + 5 * HOUR + 2 * HOUR, { stalledAfterMs: HOUR }).stalled.find((f) => f.source === k[0])).toMatchObject({ lastOkAt: new Date(T0 + 5 * HOUR).toISOString() });
    for (let m = 1; m <= 10; m++) read = planTick(read, watch, T0 + 5 * HOUR + m * MIN).state;
    expect(read.sources[k[0]!]).not.toHaveProperty("watched_since");
  });

  it("an application a healthy change feed covers is stalled only four times later: it weighs a quarter in the round", () => {
    const fedWatch = makeWatch({ apps: 2, webhooks: 1 });
    const [fedApp, feed] = [depKey(0), hookKey(0)];
    const at = (minutesAgo: number) => T0 + 10 * HOUR - minutesAgo * MIN;
    const state = (feedFailing: boolean): DispatchState => ({
      ...initialState(fedWatch, T0),
      sources: {
        [fedApp]: { last_polled_at: at(3 * 60), last_ok_at: at(3 * 60) },
        [depKey(1)]: { last_polled_at: at(5), last_ok_at: at(5) },
        [feed]: feedFailing ? { last_polled_at: at(1), last_ok_at: at(200), consecutive_failures: 5, last_error: "timeout" } : { last_polled_at: at(1), last_ok_at: at(2) },
      },
    });
    // Three hours unread: within four times one hour while the feed is healthy; stalled when it fails
    // (its applications weigh fully in the round again).
    expect(healthFacts(state(false), fedWatch, T0 + 10 * HOUR, { stalledAfterMs: HOUR }).stalled).toEqual([]);
    expect(healthFacts(state(true), fedWatch, T0 + 10 * HOUR, { stalledAfterMs: HOUR }).stalled.map((f) => f.source).sort()).toEqual([fedApp, feed].sort());
  });

  it("a 401 means the token was rejected", () => {
    const state = stateWith((key, tick) => (tick === 2 && key === k[1] ? failed(key, "unauthenticated", 401) : result(key)), 3);
    expect(healthFacts(state, watch, T0 + 2 * HOUR).tokenRejected).toEqual({ sources: [k[1]], statuses: [401] });
  });

  it("a 403 on one source is a missing resource; on several with nothing succeeding after, the token", () => {
    const one = stateWith((key, tick) => (tick >= 1 && key === k[2] ? failed(key, "forbidden", 403) : result(key)), 3);
    expect(healthFacts(one, watch, T0 + 2 * HOUR).tokenRejected).toBeUndefined();
    const all = stateWith((key, tick) => (tick >= 2 ? failed(key, "forbidden", 403) : result(key)), 3);
    expect(healthFacts(all, watch, T0 + 2 * HOUR).tokenRejected?.statuses).toEqual([403]);
  });
});

describe("the state", () => {
  it("drops sources that are no longer watched", () => {
    const wide = makeWatch({ apps: 10 });
    const narrow = makeWatch({ apps: 4 });
    const state = simulate(wide, 5 * MIN).state;
    expect(Object.keys(state.sources)).toHaveLength(10);
    expect(Object.keys(planTick(state, narrow, T0 + 10 * MIN).state.sources)).toHaveLength(4);
  });

  it("watches one webhook source per webhook, one deployment source per application, one cluster source per cluster", () => {
    const watch = makeWatch({ apps: 3, webhooks: 2, clusters: 1, orgs: 2 });
    expect(watch.sources.map((s) => s.kind).sort()).toEqual([
      ...Array(2).fill("cluster"), ...Array(6).fill("deployment"), ...Array(4).fill("webhook"),
    ]);
  });
});

describe("outages of Lookout", () => {
  const watch = makeWatch({ apps: 3, webhooks: 1 });

  it("are noticed by the silence between ticks, and passed to the polls of sources not read since", () => {
    let state = planTick(undefined, watch, T0).state;
    state = planTick(state, watch, T0 + MIN).state;
    expect(state.outage).toBeUndefined();
    const resumed = planTick(state, watch, T0 + MIN + 3 * HOUR);
    expect(resumed.state.outage).toEqual({ from: T0 + MIN, to: T0 + MIN + 3 * HOUR });
    expect(resumed.polls.length).toBeGreaterThan(0);
    for (const p of resumed.polls) expect(p.outage).toEqual({ from: new Date(T0 + MIN).toISOString(), to: new Date(T0 + MIN + 3 * HOUR).toISOString() });
    // The next tick: sources read since the outage ended no longer carry it.
    const next = planTick(resumed.state, watch, T0 + 2 * MIN + 3 * HOUR);
    for (const p of next.polls) expect(resumed.polls.some((q) => q.source.id === p.source.id) ? p.outage : "n/a").not.toBeDefined();
  });

  it("are not the budget's long intervals: regular ticks raise no outage", () => {
    let state: ReturnType<typeof planTick>["state"] | undefined;
    for (let t = 0; t < 120; t++) state = planTick(state, watch, T0 + t * MIN).state;
    expect(state!.outage).toBeUndefined();
  });

  it("a first sight's history is not activity", () => {
    const key = depKey(0);
    let state = planTick(undefined, watch, T0).state;
    state = applyPollResult(state, result(key, { newRecords: 20, firstSight: true }), T0 + 1_000, watch).state;
    expect(state.sources[key]!.last_activity_at).toBeUndefined();
    state = applyPollResult(state, result(key, { newRecords: 1 }), T0 + 2_000, watch).state;
    expect(state.sources[key]!.last_activity_at).toBe(T0 + 2_000);
  });
});

describe("the round beside the change feed's loop", () => {
  // Ten applications read 30 minutes ago, a cluster 10 minutes ago; the bucket leaves the round five polls.
  const watch = makeWatch({ apps: 10, webhooks: 1, clusters: 1 });
  const clusterKey = sourceKey({ kind: "cluster", organizationId: ORG, id: uuid("c", 0) });
  const now = T0 + 2 * HOUR;
  const stateWith = (feed: DispatchState["sources"][string]): DispatchState => {
    const b = budget.newBudget(1000, now);
    return {
      ...initialState(watch, now),
      budget: { ...b, tokens: budget.perMinute(b) * DISPATCH_POLICY.burstKeptMinutes + 5.5 },
      sources: {
        ...Object.fromEntries(Array.from({ length: 10 }, (_, i) => [depKey(i), { last_polled_at: now - 30 * MIN }])),
        [clusterKey]: { last_polled_at: now - 10 * MIN },
        [hookKey(0)]: feed,
      },
    };
  };
  const loop = { beat_at: now - 1_000, reads: { [hookKey(0)]: now - 5_000 } };
  const planned = (s: DispatchState) => planTick(s, watch, now, loop).polls.map((p) => sourceKey(p.source));

  it("reads the cluster before applications the feed names: they weigh a quarter while it is read", () => {
    const keys = planned(stateWith({ last_polled_at: now - 5_000 }));
    expect(keys.length).toBeLessThan(11);
    expect(keys[0]).toBe(clusterKey);
  });

  it("reads every application never read yet, however light: at a cold start or once added, none waits for the feed to name it", () => {
    // 200 applications never read, 60 clusters read lately, the bucket at its steady level (the round gets
    // the minute's refill): the loop beats, so applications weigh a quarter.
    const big = makeWatch({ apps: 200, webhooks: 1, clusters: 60 });
    const b = budget.newBudget(1000, now);
    let state: DispatchState = {
      ...initialState(big, now),
      budget: { ...b, tokens: budget.perMinute(b) * DISPATCH_POLICY.burstKeptMinutes },
      sources: {
        ...Object.fromEntries(Array.from({ length: 60 }, (_, i) => [sourceKey({ kind: "cluster", organizationId: ORG, id: uuid("c", i) }), { last_polled_at: now - (i % 8) * MIN }])),
        [hookKey(0)]: { last_polled_at: now - 5_000 },
      },
    };
    const read = new Set<string>();
    for (let t = now; t < now + 2 * HOUR; t += MIN) {
      const plan = planTick(state, big, t, { beat_at: t - 1_000, reads: { [hookKey(0)]: t - 5_000 } });
      state = plan.state;
      for (const p of plan.polls) {
        read.add(sourceKey(p.source));
        state = applyPollResult(state, result(sourceKey(p.source)), t, big).state;
      }
    }
    expect(Array.from({ length: 200 }, (_, i) => depKey(i)).filter((k) => !read.has(k))).toEqual([]);
  });

  it("weighs those applications fully again while the feed fails: a failing feed names nothing", () => {
    const keys = planned(stateWith({ last_polled_at: now - 5_000, consecutive_failures: 2, next_allowed_at: now + MIN, last_error: "server_error" }));
    expect(keys.length).toBeLessThan(11);
    expect(keys).not.toContain(clusterKey);
  });
});
