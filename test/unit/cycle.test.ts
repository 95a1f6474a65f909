/**
 * Dispatch decisions through the stores, fast: ticks planned and poll results recorded on the
 * in-memory dispatch store, health raised into the in-memory outbox.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { everySource, pollAndRecord, planPolls, raiseHealth } from "../../lib/ingest/cycle.js";
import { DISPATCH_POLICY } from "../../lib/ingest/dispatch.js";
import { watchlist } from "../../lib/ingest/watchlist.js";
import { sourceKey } from "../../lib/model/source.js";
import type { PollDeps } from "../../lib/ingest/poll.js";
import { MemoryDispatchStore } from "../../lib/store/memory/dispatch-store.js";
import { MemoryIngestStore } from "../../lib/store/memory/ingest-store.js";
import type { Config } from "../../lib/config/load.js";
import type { LookoutEventDetail } from "../../lib/model/event.js";
import { PlatformServerError, PlatformUnauthenticatedError } from "../../lib/platform/errors.js";
import { FakePlatform, cost } from "../support/fake-platform.js";

const MIN = 60_000;
const T0 = Date.parse("2026-03-02T10:00:00Z");
const ORG = "0a000000-0000-4000-8000-000000000000";
const platformConfig: Config["platform"] = { url: "http://x", tokenRef: "env:T", auth: "token", requestsPerHour: 1000, timeoutMs: 10_000 };
const watch = watchlist({
  platform: platformConfig,
  watch: [{ organization: ORG, webhooks: ["w1"], clusters: [{ id: "c1" }], applications: [{ id: "a1" }, { id: "a2" }] }],
});
const keys = watch.sources.map(sourceKey);
const fail = (endpoint: string, status = 502) => ({ endpoint, method: "GET", path: "/x", status, cost: cost(endpoint) });

let now: number;
let dispatch: MemoryDispatchStore;
let outbox: MemoryIngestStore;
let platform: FakePlatform;
let deps: PollDeps;

beforeEach(() => {
  now = T0;
  dispatch = new MemoryDispatchStore();
  outbox = new MemoryIngestStore({ retentionMs: 90 * 86_400_000, now: () => new Date(now) });
  platform = new FakePlatform();
  deps = { client: platform.client, store: outbox, now: () => new Date(now), backfillWindowMs: 15 * MIN, log: { info() {}, warn() {}, error() {} } };
});

describe("a tick and its polls through the dispatch store", () => {
  it("plans every source at a cold start and writes the plan once; a retried tick within the minute writes nothing", async () => {
    const { polls } = await planPolls(dispatch, watch, now);
    expect(polls.map((p) => sourceKey(p.source)).sort()).toEqual([...keys].sort());
    expect(dispatch.writes.count).toBe(1);
    const again = await planPolls(dispatch, watch, now + 5_000);
    expect(again.polls).toEqual([]);
    expect(dispatch.writes.count).toBe(1);
  });

  it("records a failed poll, which backs the source off; a routine success after it writes once, then nothing", async () => {
    await planPolls(dispatch, watch, now);
    const app = { kind: "deployment" as const, organizationId: ORG, id: "a1" };
    platform.failure = new PlatformServerError(fail("listDeploymentHistory"));
    now += 1_000;
    expect(await pollAndRecord({ source: app }, deps, dispatch, watch)).toMatchObject({ ok: false });
    const failed = (await dispatch.get("default"))!.sources[sourceKey(app)]!;
    expect(failed).toMatchObject({ consecutive_failures: 1, last_error: "server_error", next_allowed_at: T0 - (MIN - DISPATCH_POLICY.minIntervalMs) + MIN });

    // Not planned again before its backoff ends.
    now = T0 + 30_000;
    expect((await planPolls(dispatch, watch, T0 + 30_000)).polls.some((p) => p.source.id === "a1")).toBe(false);

    platform.failure = undefined;
    const writes = dispatch.writes.count;
    await pollAndRecord({ source: app }, deps, dispatch, watch);
    expect(dispatch.writes.count).toBe(writes + 1);
    expect((await dispatch.get("default"))!.sources[sourceKey(app)]!.consecutive_failures).toBeUndefined();
    await pollAndRecord({ source: app }, deps, dispatch, watch);
    expect(dispatch.writes.count).toBe(writes + 1);
  });

  it("without a plan, a failed poll still starts the state (run --once)", async () => {
    platform.failure = new PlatformServerError(fail("listClusterLogs"));
    await pollAndRecord({ source: { kind: "cluster", organizationId: ORG, id: "c1" } }, deps, dispatch, watch);
    expect((await dispatch.get("default"))!.sources[`cluster:${ORG}/c1`]).toMatchObject({ consecutive_failures: 1 });
  });

  it("names every source once for run --once, with when it was last read and the time since as an outage", async () => {
    expect((await everySource(dispatch, watch)).every((r) => r.previousPollAt === undefined && r.outage === undefined)).toBe(true);
    await planPolls(dispatch, watch, now);
    const requests = await everySource(dispatch, watch);
    expect(requests).toHaveLength(keys.length);
    for (const r of requests) {
      expect(r.previousPollAt).toBe(new Date(T0).toISOString());
      expect(r.outage?.from).toBe(new Date(T0).toISOString());
    }
  });

  it("the change feed makes the named application due at the next tick", async () => {
    await planPolls(dispatch, watch, now);
    platform.deliveries = [{ id: "d1", created_at: new Date(now).toISOString(), target_response_status_code: 200, request: { payload: { applications: [{ id: "a2" }] } } }];
    now += 5_000;
    // First sight of the webhook is history, then a new delivery names a2.
    await pollAndRecord({ source: { kind: "webhook", organizationId: ORG, id: "w1" } }, deps, dispatch, watch);
    platform.deliveries.unshift({ id: "d2", created_at: new Date(now).toISOString(), target_response_status_code: 200, request: { payload: { applications: [{ id: "a2" }] } } });
    await pollAndRecord({ source: { kind: "webhook", organizationId: ORG, id: "w1" } }, deps, dispatch, watch);
    expect((await dispatch.get("default"))!.sources[`deployment:${ORG}/a2`]?.hot_until).toBe(now + DISPATCH_POLICY.hotMs);
  });
});

describe("health from the dispatch state", () => {
  it("raises a rejected token once per episode into the outbox", async () => {
    const raised: LookoutEventDetail[] = [];
    await planPolls(dispatch, watch, now);
    platform.failure = new PlatformUnauthenticatedError(fail("listDeploymentHistory", 401));
    now += 1_000;
    await pollAndRecord({ source: { kind: "deployment", organizationId: ORG, id: "a1" } }, deps, dispatch, watch);
    const state = (await dispatch.get("default"))!;
    expect(await raiseHealth(state, watch, new Date(now), outbox, (d) => raised.push(d))).toBe(1);
    expect(await raiseHealth(state, watch, new Date(now + MIN), outbox, (d) => raised.push(d))).toBe(0);
    expect(raised.map((d) => d.transition)).toEqual(["token_rejected"]);
    expect(outbox.scan().filter((i) => i.item_type === "alert")).toHaveLength(1);
  });

  it("raises a failing source after the configured number of failures in a row", async () => {
    const source = { kind: "cluster" as const, organizationId: ORG, id: "c1" };
    platform.failure = new PlatformServerError(fail("listClusterLogs"));
    for (let i = 0; i < 2; i++) {
      now += MIN;
      await pollAndRecord({ source }, deps, dispatch, watch);
    }
    const state = (await dispatch.get("default"))!;
    expect(await raiseHealth(state, watch, new Date(now), outbox, undefined, { failingAfter: 3 })).toBe(0);
    expect(await raiseHealth(state, watch, new Date(now), outbox, undefined, { failingAfter: 2 })).toBe(1);
  });
});
