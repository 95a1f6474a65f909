/**
 * The change feed's loop (lib/dispatch/feed-loop.ts): its lease lets one loop read the feed however many
 * are started, its reads go round the watched webhooks within its share of the budget, the minute tick
 * leaves the webhooks and that share to it while it beats and takes them back when it is lost, and what
 * the feed names is polled at once within the budget.
 */
import { describe, expect, it } from "vitest";
import type { DispatchState, FeedLoopState, Watchlist } from "../../../lib/model/dispatch.js";
import { claimFeedTick, countLoopReads, FEED_LOOP, feedReadsPerTick, planHot, readsDone } from "../../../lib/dispatch/feed-loop.js";
import { planTick } from "../../../lib/dispatch/plan.js";
import { feedTick } from "../../../lib/dispatch/feed-tick.js";
import { applyPollResult, DISPATCH_NAME, DISPATCH_POLICY, initialState } from "../../../lib/dispatch/source-state.js";
import type { PollResult } from "../../../lib/model/poll.js";
import { MemoryDispatchStore, MemoryFeedLoopStore } from "../../../lib/store/memory/dispatch-store.js";
import { watchlist } from "../../../lib/dispatch/watchlist.js";
import * as budget from "../../../lib/dispatch/budget.js";
import { sourceKey } from "../../../lib/model/source.js";

const T0 = Date.parse("2026-03-02T10:00:00Z");
const ORG = "0a000000-0000-4000-8000-000000000000";
const id = (p: string, i: number) => `${p}${String(i).padStart(7, "0")}-0000-4000-8000-000000000000`;

function watchOf(o: { apps: number; webhooks: number; rph?: number }): Watchlist {
  return watchlist({
    platform: { url: "http://x", tokenRef: "env:T", auth: "token", requestsPerHour: o.rph ?? 1000, timeoutMs: 10_000 },
    watch: [{ organization: ORG, webhooks: Array.from({ length: o.webhooks }, (_, i) => id("b", i)), clusters: [], applications: Array.from({ length: o.apps }, (_, i) => ({ id: id("a", i) })) }],
  });
}
/** A poll that succeeded and found nothing new. */
const QUIET: Omit<PollResult, "source"> = {
  ok: true, requests: 1, retries: 0, newRecords: 0, alerts: 0, suppressed: 0, rejected: 0, inProgress: 0, hotServices: [], gapSuspected: false, firstSight: false,
};
const hook = (i: number) => sourceKey({ kind: "webhook", organizationId: ORG, id: id("b", i) });
const dep = (i: number) => sourceKey({ kind: "deployment", organizationId: ORG, id: id("a", i) });

describe("the loop's share of the budget", () => {
  it("one feed read a tick at 1000 requests an hour (at most 379 an hour, the lease's gap apart); no loop without webhooks or below the share", () => {
    expect(feedReadsPerTick(watchOf({ apps: 5, webhooks: 3 }))).toBe(1);
    expect(feedReadsPerTick(watchOf({ apps: 5, webhooks: 0 }))).toBe(0);
    expect(feedReadsPerTick(watchOf({ apps: 5, webhooks: 1, rph: 600 }))).toBe(0);
    // One feed an organization, however many of its webhooks are watched.
    expect(feedReadsPerTick(watchOf({ apps: 5, webhooks: 3, rph: 5000 }))).toBe(1);
  });

  it("the share follows the limit in force: a platform that allows fewer requests than configured gets fewer reads, or no loop", () => {
    const watch = watchOf({ apps: 5, webhooks: 3, rph: 5000 });
    const lowered: DispatchState = { ...initialState(watch, T0), budget: { ...budget.newBudget(5000, T0), platform_limit: 600 } };
    expect(claimFeedTick(undefined, initialState(watch, T0), watch, T0)?.polls).toHaveLength(1);
    expect(claimFeedTick(undefined, lowered, watch, T0)).toBeUndefined();
    // …and the minute tick reads the feed itself.
    expect(planTick(lowered, watch, T0, { beat_at: T0 - 1_000, reads: {} }).polls.map((p) => sourceKey(p.source))).toContain(hook(0));
  });

  it("a refused tick says why: the lease held by another loop, or no room for the loop in the budget in force", async () => {
    const watch = watchOf({ apps: 5, webhooks: 3, rph: 5000 });
    const tick = async (state: DispatchState, loop?: FeedLoopState) => {
      const dispatch = new MemoryDispatchStore();
      const loops = new MemoryFeedLoopStore();
      await dispatch.update(DISPATCH_NAME, () => state);
      if (loop) await loops.update(DISPATCH_NAME, () => loop);
      // No poll is sent: the refusal comes before any read.
      return feedTick({ dispatch, loops, watch, pollDeps: undefined as never }, T0);
    };
    const lowered: DispatchState = { ...initialState(watch, T0), budget: { ...budget.newBudget(5000, T0), platform_limit: 600 } };
    expect(await tick(lowered)).toEqual({ claimed: false, refused: "no_room", results: [] });
    expect(await tick(initialState(watch, T0), { beat_at: T0 - 1_000, reads: {} })).toEqual({ claimed: false, refused: "lease", results: [] });
  });

  it("the loop's reads are counted into the budget at the minute tick, whenever the loop started: no cliff, never over the limit", () => {
    const watch = watchOf({ apps: 200, webhooks: 1 });
    // An hour of busy polling without the loop, then the loop starts and reads every 10 s.
    let state: DispatchState | undefined;
    let loop: FeedLoopState | undefined;
    const perMinute: number[] = [];
    const planned: number[] = [];
    for (let m = 0; m < 180; m++) {
      const now = T0 + m * 60_000;
      const plan = planTick(state, watch, now, m >= 60 ? loop : undefined);
      state = plan.state;
      planned.push(plan.polls.length);
      let sent = plan.polls.length;
      if (m >= 60) {
        for (let t = now; t < now + 60_000; t += FEED_LOOP.everyMs) {
          const c = claimFeedTick(loop, state, watch, t)!;
          loop = readsDone(c.loop, c.polls.map((p) => ({ source: sourceKey(p.source), ok: true } as never)), t) ?? c.loop;
          sent += c.polls.length;
        }
      }
      perMinute.push(sent);
    }
    // The minute tick keeps polling when the loop starts (the reserve it once kept made it stop for 20 minutes).
    expect(Math.min(...planned.slice(61, 90))).toBeGreaterThan(0);
    for (let m = 0; m + 60 <= perMinute.length; m++) expect(perMinute.slice(m, m + 60).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1000);
    // Every read counted but the last minute's, which the next tick counts.
    expect(state!.loop_requests).toBe(loop!.requests! - 6);
  });

  it("counts a loop's reads once, and a new loop item from nothing", () => {
    const watch = watchOf({ apps: 3, webhooks: 1 });
    const s0 = initialState(watch, T0);
    const s1 = countLoopReads(s0, { beat_at: T0, reads: {}, requests: 12 }, T0);
    expect(budget.spentInWindow(s1.budget, T0)).toBe(12);
    expect(countLoopReads(s1, { beat_at: T0, reads: {}, requests: 12 }, T0)).toBe(s1);
    const s2 = countLoopReads(s1, { beat_at: T0, reads: {}, requests: 3 }, T0);
    expect(budget.spentInWindow(s2.budget, T0)).toBe(15);
  });
});

describe("the lease", () => {
  const watch = watchOf({ apps: 3, webhooks: 1 });

  it("a tick sooner than the lease's gap after the last is refused; one a gap later claims", () => {
    const first = claimFeedTick(undefined, undefined, watch, T0)!;
    expect(first.polls).toHaveLength(1);
    expect(claimFeedTick(first.loop, undefined, watch, T0 + FEED_LOOP.leaseGapMs - 1)).toBeUndefined();
    expect(claimFeedTick(first.loop, undefined, watch, T0 + FEED_LOOP.everyMs)?.polls).toHaveLength(1);
  });

  it("two loops at any phase: within two rounds one is left, and the feed is read no more than one loop would", () => {
    for (const phase of [0, 1, 3_000, 7_000, 9_400, 9_500, 9_600, 9_999]) {
      let loop: FeedLoopState | undefined;
      // Each loop's next tick comes its period after its last (10 s, plus a little delivery jitter).
      const next = [T0, T0 + phase];
      const alive = [true, true];
      const claims: number[] = [];
      for (let round = 0; round < 30; round++) {
        const i = next[0]! <= next[1]! ? 0 : 1;
        if (!alive[0] && !alive[1]) break;
        if (!alive[i]) {
          next[i] = Infinity;
          continue;
        }
        const claim = claimFeedTick(loop, undefined, watch, next[i]!);
        if (!claim) alive[i] = false;
        else {
          loop = claim.loop;
          claims.push(next[i]!);
        }
        next[i] = alive[i] ? next[i]! + FEED_LOOP.everyMs + (round % 3) * 37 : Infinity;
      }
      expect(alive.filter(Boolean), `phase ${phase}`).toHaveLength(1);
      // Claims never closer than the gap: no doubled reads.
      for (let k = 1; k < claims.length; k++) expect(claims[k]! - claims[k - 1]!).toBeGreaterThanOrEqual(FEED_LOOP.leaseGapMs);
    }
  });
});

describe("the feed reads", () => {
  it("go round the organizations' feeds, one a tick at 1000 requests an hour: each read every k ticks of k organizations", () => {
    for (const orgs of [2, 3, 4]) {
      const org = (o: number) => id("c", o);
      const watch = watchlist({
        platform: { url: "http://x", tokenRef: "env:T", auth: "token", requestsPerHour: 1000, timeoutMs: 10_000 },
        watch: Array.from({ length: orgs }, (_, o) => ({ organization: org(o), webhooks: [id(`b${o}`, 0)], clusters: [], applications: [] })),
      });
      let loop: FeedLoopState | undefined;
      const readAt = new Map<string, number[]>();
      for (let k = 0; k < 12 * orgs; k++) {
        const at = T0 + k * FEED_LOOP.everyMs;
        const c = claimFeedTick(loop, undefined, watch, at)!;
        expect(c.polls, `${orgs} organizations, tick ${k}`).toHaveLength(1);
        loop = readsDone(c.loop, c.polls.map((p) => ({ source: sourceKey(p.source), ok: true }) as never), at, c.rotating) ?? c.loop;
        for (const p of c.polls) readAt.set(sourceKey(p.source), [...(readAt.get(sourceKey(p.source)) ?? []), at]);
      }
      expect(readAt.size, `${orgs} organizations`).toBe(orgs);
      for (const [key, times] of readAt) {
        const gaps = new Set(times.slice(1).map((t, i) => t - times[i]!));
        expect([...gaps], `${orgs} organizations, ${key}`).toEqual([orgs * FEED_LOOP.everyMs]);
      }
    }
  });

  it("are of the organization's first watched webhook, every tick, unless it backs off; its other webhooks stay with the minute tick", () => {
    const watch = watchOf({ apps: 3, webhooks: 3 });
    let loop: FeedLoopState | undefined;
    const read: string[] = [];
    for (let k = 0; k < 4; k++) {
      const at = T0 + k * FEED_LOOP.everyMs;
      const c = claimFeedTick(loop, undefined, watch, at)!;
      loop = readsDone(c.loop, c.polls.map((p) => ({ source: sourceKey(p.source), ok: true }) as never), at) ?? c.loop;
      read.push(...c.polls.map((p) => sourceKey(p.source)));
    }
    expect(read).toEqual([hook(0), hook(0), hook(0), hook(0)]);
    const plan = planTick(undefined, watch, T0 + 40_000, loop);
    expect(plan.polls.map((p) => sourceKey(p.source)).filter((k) => k.startsWith("webhook"))).toEqual([hook(1), hook(2)]);
    const backingOff: DispatchState = { ...initialState(watch, T0), sources: { [hook(0)]: { consecutive_failures: 2, next_allowed_at: T0 + 10 * 60_000 } } };
    expect(claimFeedTick(loop, backingOff, watch, T0 + 6 * FEED_LOOP.everyMs)!.polls).toEqual([]);
  });

  it("none while the platform holds requests back (a 429's wait): the tick still beats, so no second loop starts", () => {
    const watch = watchOf({ apps: 3, webhooks: 1 });
    const throttled: DispatchState = { ...initialState(watch, T0), budget: { ...budget.newBudget(1000, T0), throttled_until: T0 + 60_000 } };
    const c = claimFeedTick(undefined, throttled, watch, T0)!;
    expect(c.polls).toEqual([]);
    expect(c.loop.beat_at).toBe(T0);
  });

  it("a read says when the webhook was last read, the loop's reads counted", () => {
    const watch = watchOf({ apps: 3, webhooks: 1 });
    const c = claimFeedTick({ beat_at: T0 - 20_000, reads: { [hook(0)]: T0 - 20_000 } }, initialState(watch, T0), watch, T0)!;
    expect(c.polls[0]!.previousPollAt).toBe(new Date(T0 - 20_000).toISOString());
  });
});

describe("the minute tick beside the loop", () => {
  const watch = watchOf({ apps: 20, webhooks: 2 });
  const loop: FeedLoopState = { beat_at: T0 - 5_000, reads: { [hook(0)]: T0 - 15_000, [hook(1)]: T0 - 5_000 } };

  it("while the loop beats, leaves the feed to it and counts its reads as polls", () => {
    const plan = planTick(undefined, watch, T0, loop);
    expect(plan.polls.map((p) => sourceKey(p.source))).not.toContain(hook(0));
    expect(plan.polls.map((p) => sourceKey(p.source))).toContain(hook(1));
    expect(plan.state.sources[hook(0)]?.last_polled_at).toBe(T0 - 15_000);
  });

  it("once the loop is lost, reads the feed itself", () => {
    const lost = { ...loop, beat_at: T0 - FEED_LOOP.lostAfterMs - 1 };
    const plan = planTick(undefined, watch, T0, lost);
    expect(plan.polls.map((p) => sourceKey(p.source))).toContain(hook(0));
  });

  it("a read is stamped once sent: one held back by a 429 is not taken for a read; a timeout or a 5xx is", () => {
    const c = claimFeedTick(undefined, undefined, watch, T0)!;
    expect(c.loop.reads).toEqual({});
    expect(c.loop.requests).toBe(1);
    const key = sourceKey(c.polls[0]!.source);
    expect(readsDone(c.loop, [{ source: key, ok: false, error: { kind: "rate_limited", message: "429" } } as never], T0)).toBeUndefined();
    const stamped = readsDone(c.loop, [{ source: key, ok: true } as never], T0)!;
    expect(stamped.reads).toEqual({ [key]: T0 });
    // Renewed only once half a minute old: not a second write every tick.
    expect(readsDone(stamped, [{ source: key, ok: true } as never], T0 + FEED_LOOP.everyMs)).toBeUndefined();
    expect(readsDone(stamped, [{ source: key, ok: true } as never], T0 + FEED_LOOP.stampEveryMs)?.reads).toEqual({ [key]: T0 + FEED_LOOP.stampEveryMs });
    // A failed read (5xx after retries) was a read: the failure is dispatch's to count and back off.
    expect(readsDone(c.loop, [{ source: key, ok: false, error: { kind: "server_error", message: "502" } } as never], T0)?.reads).toEqual({ [key]: T0 });
    expect(readsDone(c.loop, [{ source: key, ok: false, error: { kind: "timeout", message: "no answer in 10 s" } } as never], T0)?.reads).toEqual({ [key]: T0 });
  });
});

describe("what the feed names", () => {
  const watch = watchOf({ apps: 20, webhooks: 1 });
  const named = (state: DispatchState, key: string, at: number): DispatchState =>
    ({ ...state, sources: { ...state.sources, [key]: { ...state.sources[key], hot_until: at + DISPATCH_POLICY.hotMs } } });

  it("is polled at once, even when it was read seconds ago (an execution in progress named as failed), and only once", () => {
    let state: DispatchState = { ...initialState(watch, T0), sources: { [dep(3)]: { last_polled_at: T0 - 20_000, in_progress: 1 } } };
    state = named(state, dep(3), T0);
    const plan = planHot(state, watch, T0);
    expect(plan.polls.map((p) => sourceKey(p.source))).toEqual([dep(3)]);
    expect(planHot(plan.state, watch, T0 + 10_000).polls).toEqual([]);
    expect(budget.spentInWindow(plan.state.budget, T0)).toBe(1);
  });

  it("stays owed a read while the tick that planned it has not recorded it: a tick that died with the poll leaves it to the minute tick", () => {
    const state = named({ ...initialState(watch, T0), sources: { [dep(4)]: { last_polled_at: T0 - 60_000 } } }, dep(4), T0);
    const plan = planHot(state, watch, T0);
    expect(plan.polls.map((p) => sourceKey(p.source))).toEqual([dep(4)]);
    // In flight: neither the next tick nor the minute tick reads it again.
    expect(planHot(plan.state, watch, T0 + 10_000).polls).toEqual([]);
    expect(planTick(plan.state, watch, T0 + 30_000).polls.map((p) => sourceKey(p.source))).not.toContain(dep(4));
    // No result a minute on (the function's timeout): the tick died with it. Hot again, read first.
    expect(planHot(plan.state, watch, T0 + DISPATCH_POLICY.hotClaimMs).polls.map((p) => sourceKey(p.source))).toEqual([dep(4)]);
    const minute = planTick(plan.state, watch, T0 + DISPATCH_POLICY.hotClaimMs);
    expect(minute.polls.map((p) => sourceKey(p.source))).toContain(dep(4));
    expect(minute.state.sources[dep(4)]?.hot_claimed_at).toBeUndefined();
    // Another poll's result (planned before the feed named it) settles nothing: the claimed one may yet die.
    const other = applyPollResult(plan.state, { ...QUIET, source: dep(4) }, T0 + 5_000, watch);
    expect(planHot(other.state, watch, T0 + DISPATCH_POLICY.hotClaimMs).polls.map((p) => sourceKey(p.source))).toEqual([dep(4)]);
    // Its own result recorded (found nothing new): read, no longer hot, the claim settled.
    const read = applyPollResult(plan.state, { ...QUIET, source: dep(4), settlesClaim: true }, T0 + 5_000, watch);
    expect(read.changed).toBe(true);
    expect(read.state.sources[dep(4)]).toEqual({ last_polled_at: T0, last_ok_at: T0 - 60_000, hot_until: T0 + DISPATCH_POLICY.hotMs });
    expect(planHot(read.state, watch, T0 + DISPATCH_POLICY.hotClaimMs).polls).toEqual([]);
  });

  it("waits for the minute tick when the bucket is empty or the source backs off", () => {
    const empty: DispatchState = { ...initialState(watch, T0), budget: { ...budget.newBudget(1000, T0), tokens: 0 } };
    expect(planHot(named(empty, dep(1), T0), watch, T0).polls).toEqual([]);
    const failing: DispatchState = { ...initialState(watch, T0), sources: { [dep(2)]: { last_polled_at: T0 - 60_000, consecutive_failures: 1, next_allowed_at: T0 + 60_000 } } };
    expect(planHot(named(failing, dep(2), T0), watch, T0).polls).toEqual([]);
  });
});
