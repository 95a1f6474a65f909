/**
 * What every DispatchStore adapter does (lib/model/dispatch-store.ts), run against each of them:
 * test/unit/store/memory/dispatch-store.test.ts and test/integration/store/dispatch-store.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { DispatchStore } from "../../lib/model/dispatch-store.js";
import type { DispatchState, SourceState, Watchlist } from "../../lib/model/dispatch.js";
import type { PollResult } from "../../lib/model/poll.js";
import type { Config } from "../../lib/config/load.js";
import { planTick } from "../../lib/dispatch/plan.js";
import { DISPATCH_POLICY, recordPollResult } from "../../lib/dispatch/source-state.js";
import { watchlist } from "../../lib/dispatch/watchlist.js";
import { spend } from "../../lib/dispatch/budget.js";
import { sourceKey } from "../../lib/model/source.js";

export const T0 = Date.parse("2026-03-02T10:00:00Z");
const MIN = 60_000;
const uuid = (prefix: string, i: number) => `${prefix}${String(i).padStart(7, "0")}-0000-4000-8000-000000000000`;
const platform: Config["platform"] = { url: "http://x", tokenRef: "env:T", auth: "token", requestsPerHour: 1000, timeoutMs: 10_000 };

/** 500 applications, 50 clusters and 20 webhooks over two organizations. */
export const big: Watchlist = watchlist({
  platform,
  watch: [0, 1].map((g) => ({
    organization: uuid("0", g),
    webhooks: Array.from({ length: 10 }, (_, i) => uuid("b", g * 100 + i)),
    clusters: Array.from({ length: 25 }, (_, i) => ({ id: uuid("c", g * 100 + i) })),
    applications: Array.from({ length: 250 }, (_, i) => ({ id: uuid("a", g * 1000 + i) })),
  })),
});

export function result(source: string, over: Partial<PollResult> = {}): PollResult {
  return {
    source, ok: true, requests: 1, retries: 0, newRecords: 0, alerts: 0, suppressed: 0, rejected: 0, inProgress: 0,
    hotServices: [], gapSuspected: false, firstSight: false, ...over,
  };
}

/** A busy state: every source polled, many with every field set (the worst case for size). */
export function busyState(): DispatchState {
  const now = T0 + 2 * 60 * MIN;
  const sources: DispatchState["sources"] = {};
  for (const [i, ref] of big.sources.entries()) {
    // A seventh never read yet: only when they were first watched (some failing already).
    if (i % 7 === 6) {
      sources[sourceKey(ref)] = { watched_since: now - 40 * MIN - i, ...(i % 5 === 0 ? { consecutive_failures: 1, last_polled_at: now - 60_000, last_error: "timeout" } : {}) };
      continue;
    }
    sources[sourceKey(ref)] = {
      last_polled_at: now - 1234 * i - 17,
      last_ok_at: now - 60_000 - 1234 * i - 17,
      last_activity_at: now - 999_999 - i,
      ...(i % 3 === 0 ? { in_progress: 3, hot_until: now + 555_555 } : {}),
      ...(i % 5 === 0 ? { consecutive_failures: 4, next_allowed_at: now + 777_777, last_error: "server_error" } : {}),
    };
  }
  // One with every field a source has (the type lists them: a field added to SourceState must be added here, and stored).
  const every: Required<SourceState> = {
    last_polled_at: now - 5, last_ok_at: now - 65_000, last_activity_at: now - 70_000, in_progress: 2, backlog: 120, hot_until: now + 1000,
    hot_claimed_at: now - 5, consecutive_failures: 2, next_allowed_at: now + 60_000, last_error: "deferred", deferred: 3, watched_since: now - 90_000,
  };
  sources[sourceKey(big.sources[0]!)] = every;
  let budget = planTick(undefined, big, T0).state.budget;
  for (let m = 0; m < 61; m++) budget = spend(budget, 15, T0 + m * MIN + 123);
  return { budget, sources, queues: { SlackDeadLetterQueue: now - 3 * MIN, PollQueue: now - 20 * MIN } };
}

/**
 * `store()` opens a store on the adapter's storage: each call a new client of the same storage where
 * the adapter has clients (two Lambda containers on one table), the one store where it has not.
 */
export function dispatchStoreContract(adapter: string, store: () => DispatchStore): void {
  describe(`DispatchStore contract: ${adapter}`, () => {
    it("has no state before the first write, and reads back what it stored", async () => {
      const s = store();
      expect(await s.get("empty")).toBeUndefined();
      const state = busyState();
      expect(await s.update("roundtrip", () => state)).toEqual({ state, written: true });
      expect(await s.get("roundtrip")).toEqual(state);
    });

    it("writes nothing when the update returns undefined, and hands it the state as stored", async () => {
      const s = store();
      const first = planTick(undefined, big, T0).state;
      await s.update("unchanged", () => first);
      const before = s.writes.count;
      let seen: DispatchState | undefined;
      const res = await s.update("unchanged", (cur) => {
        seen = cur;
        return undefined;
      });
      expect(res).toEqual({ state: first, written: false });
      expect(seen).toEqual(first);
      expect(s.writes.count).toBe(before);
    });

    it("concurrent updates do not lose each other (optimistic locking)", async () => {
      const a = store();
      const b = store();
      const name = "race";
      const first = planTick(undefined, big, T0);
      await a.update(name, () => first.state);
      const polled = first.polls.map((p) => sourceKey(p.source)).slice(0, 16);
      expect(polled.length).toBe(16);
      // Sixteen pollers report failures at once, from two store instances (two Lambda containers).
      const written = await Promise.all(
        polled.map((key, i) =>
          recordPollResult(i % 2 ? a : b, name, result(key, { ok: false, error: { kind: "timeout", message: "slow" } }), T0 + 5_000, big),
        ),
      );
      expect(written.every(Boolean)).toBe(true);
      const state = (await a.get(name))!;
      for (const key of polled) expect(state.sources[key]).toMatchObject({ consecutive_failures: 1, last_error: "timeout" });
      // …and dispatch's next tick, racing with one more result, keeps it too.
      const late = polled[0]!;
      await Promise.all([
        a.update(name, (cur) => planTick(cur, big, T0 + MIN).state),
        recordPollResult(b, name, result(late, { ok: false, error: { kind: "timeout", message: "slow" } }), T0 + MIN + 1, big),
      ]);
      const after = (await a.get(name))!;
      expect(after.sources[late]?.consecutive_failures).toBe(2);
      expect(Object.values(after.sources).filter((s) => s.last_polled_at === T0 + MIN).length).toBeGreaterThan(0);
    });

    it("a routine poll result writes nothing; one that learned something writes once", async () => {
      const s = store();
      const name = "steady";
      const plan = planTick(undefined, big, T0);
      await s.update(name, () => plan.state);
      const key = sourceKey(plan.polls[0]!.source);
      const before = s.writes.count;
      const routine = result(key, { rateLimit: { limit: 1000, remaining: 950, resetAt: T0 + 30 * MIN } });
      expect(await recordPollResult(s, name, routine, T0 + 2_000, big)).toBe(false);
      expect(s.writes.count).toBe(before);

      expect(await recordPollResult(s, name, result(key, { newRecords: 2 }), T0 + 3_000, big)).toBe(true);
      expect(s.writes.count).toBe(before + 1);
      expect((await s.get(name))!.sources[key]?.last_activity_at).toBe(T0 + 3_000);
      // The same news again is no news.
      expect(await recordPollResult(s, name, result(key), T0 + 4_000, big)).toBe(false);
      expect(s.writes.count).toBe(before + 1);
    });

    it("the change feed marks the named application hot in the stored state", async () => {
      const s = store();
      const name = "hot";
      await s.update(name, () => planTick(undefined, big, T0).state);
      const hook = sourceKey(big.sources.find((r) => r.kind === "webhook")!);
      const app = uuid("a", 1000 + 7); // second organization
      await recordPollResult(s, name, result(hook, { newRecords: 1, hotServices: [app] }), T0 + 2_000, big);
      const appKey = big.byApplication.get(app)!;
      expect((await s.get(name))!.sources[appKey]?.hot_until).toBe(T0 + 2_000 + DISPATCH_POLICY.hotMs);
    });

    it("without a stored state, a poll result that learned something starts one (run --once plans nothing)", async () => {
      const s = store();
      const key = sourceKey(big.sources.find((r) => r.kind === "cluster")!);
      // Not a watched source, nothing else learned: nothing to store.
      expect(await recordPollResult(s, "nothing-yet", result("deployment:x/y", { newRecords: 1 }), T0, big)).toBe(false);
      expect(await s.get("nothing-yet")).toBeUndefined();
      const failed = result(key, { ok: false, error: { kind: "not_found", message: "gone" } });
      expect(await recordPollResult(s, "nothing-yet", failed, T0, big)).toBe(true);
      expect(await recordPollResult(s, "nothing-yet", failed, T0 + MIN, big)).toBe(true);
      expect((await s.get("nothing-yet"))!.sources[key]).toMatchObject({ consecutive_failures: 2, last_error: "not_found" });
    });

    it("what the caller does with a state it read or wrote does not change what is stored", async () => {
      const s = store();
      const state = planTick(undefined, big, T0).state;
      await s.update("copies", () => state);
      const read = (await s.get("copies"))!;
      read.sources["webhook:x/y"] = { consecutive_failures: 9 };
      state.last_tick_at = 1;
      expect(await s.get("copies")).toEqual(planTick(undefined, big, T0).state);
    });
  });
}
