/**
 * Dispatch decisions through the stores, fast: ticks planned and poll results recorded on the
 * in-memory dispatch store, health raised into the in-memory outbox; polls read through the platform
 * client over HTTP from the platform simulator (a fresh world per test, its clock as Lookout's), whose
 * fault injection makes an endpoint fail.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { everySource, planPolls } from "../../../lib/dispatch/tick.js";
import { raiseHealth } from "../../../lib/dispatch/health-watch.js";
import { pollAndRecord } from "../../../lib/dispatch/poll-batch.js";
import { feedFirst } from "../../../lib/poll/together.js";
import { DISPATCH_POLICY } from "../../../lib/dispatch/source-state.js";
import { watchlist } from "../../../lib/dispatch/watchlist.js";
import { sourceKey, type SourceRef } from "../../../lib/model/source.js";
import type { PollDeps } from "../../../lib/poll/poll.js";
import { MemoryDispatchStore } from "../../../lib/store/memory/dispatch-store.js";
import { MemoryIngestStore } from "../../support/memory-ingest-store.js";
import type { Config } from "../../../lib/config/load.js";
import type { LookoutEventDetail } from "../../../lib/model/event.js";
import type { Watchlist } from "../../../lib/model/dispatch.js";
import { createPlatformClient, type AuthScheme } from "../../../lib/platform/client.js";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";

const MIN = 60_000;
const T0 = Date.parse("2026-03-02T10:00:00Z");

let sim: Simulator;
let org: string;
let watch: Watchlist;
let keys: string[];
let dispatch: MemoryDispatchStore;
let outbox: MemoryIngestStore;
let deps: PollDeps;

const clientOf = (token: string, auth: AuthScheme = "token") =>
  createPlatformClient({ baseUrl: sim.url, token, auth, sleep: async () => {} });

beforeEach(async () => {
  sim = await startSimulator({ startTime: new Date(T0).toISOString(), size: { applications: 2, clusters: 1, webhooks: 1, pastDeployments: 0 } });
  org = sim.ids.organizationId;
  const platformConfig: Config["platform"] = { url: sim.url, tokenRef: "env:T", auth: "token", requestsPerHour: 1000, timeoutMs: 10_000 };
  watch = watchlist({
    platform: platformConfig,
    watch: [{
      organization: org, webhooks: [sim.ids.webhookIds[0]!], clusters: [{ id: sim.ids.clusterIds[0]! }],
      applications: sim.ids.applicationIds.map((id) => ({ id })),
    }],
  });
  keys = watch.sources.map(sourceKey);
  dispatch = new MemoryDispatchStore();
  const now = () => sim.clock.now();
  outbox = new MemoryIngestStore({ retentionMs: 90 * 86_400_000, now });
  deps = { client: clientOf(sim.apiToken), store: outbox, now, backfillWindowMs: 15 * MIN, log: { info() {}, warn() {}, error() {} } };
});
afterEach(() => sim.close());

const now = () => sim.clock.nowMs();
const a1 = (): SourceRef => ({ kind: "deployment", organizationId: org, id: sim.ids.applicationIds[0]! });
const c1 = (): SourceRef => ({ kind: "cluster", organizationId: org, id: sim.ids.clusterIds[0]! });
const w1 = (): SourceRef => ({ kind: "webhook", organizationId: org, id: sim.ids.webhookIds[0]! });
/** A delivery of the webhook now, naming application a2: the start of its deployment (the end is a day away). */
const deliveryNamingA2 = () => void sim.scenario.deploy(sim.ids.applicationIds[1]!, { durations: { queuedMs: 24 * 60 * MIN } });

describe("a tick and its polls through the dispatch store", () => {
  it("plans every source at a cold start and writes the plan once; a retried tick within the minute writes nothing", async () => {
    const { polls } = await planPolls(dispatch, watch, now());
    expect(polls.map((p) => sourceKey(p.source)).sort()).toEqual([...keys].sort());
    expect(dispatch.writes.count).toBe(1);
    const again = await planPolls(dispatch, watch, now() + 5_000);
    expect(again.polls).toEqual([]);
    expect(dispatch.writes.count).toBe(1);
  });

  it("records a failed poll, which backs the source off; a routine success after it writes once, then nothing", async () => {
    await planPolls(dispatch, watch, now());
    const app = a1();
    sim.faults.set("listDeploymentHistory", { status: 502 });
    sim.clock.advance(1_000);
    expect(await pollAndRecord({ source: app }, deps, dispatch, watch)).toMatchObject({ ok: false });
    const failed = (await dispatch.get("default"))!.sources[sourceKey(app)]!;
    expect(failed).toMatchObject({ consecutive_failures: 1, last_error: "server_error", next_allowed_at: T0 - (MIN - DISPATCH_POLICY.minIntervalMs) + MIN });

    // Not planned again before its backoff ends.
    sim.clock.set(new Date(T0 + 30_000));
    expect((await planPolls(dispatch, watch, T0 + 30_000)).polls.some((p) => p.source.id === app.id)).toBe(false);

    sim.faults.clear("listDeploymentHistory");
    const writes = dispatch.writes.count;
    await pollAndRecord({ source: app }, deps, dispatch, watch);
    expect(dispatch.writes.count).toBe(writes + 1);
    expect((await dispatch.get("default"))!.sources[sourceKey(app)]!.consecutive_failures).toBeUndefined();
    await pollAndRecord({ source: app }, deps, dispatch, watch);
    expect(dispatch.writes.count).toBe(writes + 1);
  });

  it("without a plan, a failed poll still starts the state (run --once)", async () => {
    sim.faults.set("listClusterLogs", { status: 502 });
    await pollAndRecord({ source: c1() }, deps, dispatch, watch);
    expect((await dispatch.get("default"))!.sources[sourceKey(c1())]).toMatchObject({ consecutive_failures: 1 });
  });

  it("names every source once for run --once, with when it was last read and the time since as an outage", async () => {
    expect((await everySource(dispatch, watch, now())).every((r) => r.previousPollAt === undefined && r.outage === undefined)).toBe(true);
    await planPolls(dispatch, watch, now());
    // The outage is measured on the run's clock (here the simulator's, far from the wall clock's).
    const requests = await everySource(dispatch, watch, now() + 60_000);
    expect(requests).toHaveLength(keys.length);
    for (const r of requests) {
      expect(r.previousPollAt).toBe(new Date(T0).toISOString());
      expect(r.outage).toEqual({ from: new Date(T0).toISOString(), to: new Date(T0 + 60_000).toISOString() });
    }
  });

  it("the change feed makes the named application due at the next tick", async () => {
    await planPolls(dispatch, watch, now());
    deliveryNamingA2();
    sim.clock.advance(5_000);
    // First sight of the webhook is history, then a new delivery names a2.
    await pollAndRecord({ source: w1() }, deps, dispatch, watch);
    deliveryNamingA2();
    await pollAndRecord({ source: w1() }, deps, dispatch, watch);
    expect((await dispatch.get("default"))!.sources[`deployment:${org}/${sim.ids.applicationIds[1]}`]?.hot_until).toBe(now() + DISPATCH_POLICY.hotMs);
  });
});

describe("health from the dispatch state", () => {
  it("raises a rejected token once per episode into the outbox", async () => {
    const raised: LookoutEventDetail[] = [];
    await planPolls(dispatch, watch, now());
    // A JWT valid for a second: the platform answers 401 once it has expired.
    const expiring = { ...deps, client: clientOf(sim.issueBearerToken(1_000), "bearer") };
    sim.clock.advance(1_000);
    await pollAndRecord({ source: a1() }, expiring, dispatch, watch);
    const state = (await dispatch.get("default"))!;
    expect(await raiseHealth(state, watch, new Date(now()), outbox, (d) => raised.push(d))).toBe(1);
    expect(await raiseHealth(state, watch, new Date(now() + MIN), outbox, (d) => raised.push(d))).toBe(0);
    expect(raised.map((d) => d.transition)).toEqual(["token_rejected"]);
    expect(outbox.scan().filter((i) => i.item_type === "alert")).toHaveLength(1);
  });

  it("raises a failing source after the configured number of failures in a row", async () => {
    sim.faults.set("listClusterLogs", { status: 502 });
    for (let i = 0; i < 2; i++) {
      sim.clock.advance(MIN);
      await pollAndRecord({ source: c1() }, deps, dispatch, watch);
    }
    const state = (await dispatch.get("default"))!;
    expect(await raiseHealth(state, watch, new Date(now()), outbox, undefined, { failingAfter: 3 })).toBe(0);
    expect(await raiseHealth(state, watch, new Date(now()), outbox, undefined, { failingAfter: 2 })).toBe(1);
  });
});

describe("a pass's polls", () => {
  it("read the change feeds first, then the rest together: what a feed names is known to the deployments' polls", async () => {
    const req = (kind: SourceRef["kind"], id: string) => ({ source: { kind, organizationId: "o", id } }) as unknown as Parameters<typeof feedFirst>[0][number];
    const batches: string[][] = [];
    const out = await feedFirst([req("deployment", "a"), req("webhook", "w"), req("cluster", "c"), req("webhook", "v")], async (batch) => {
      batches.push(batch.map((r) => r.source.id));
      return batch.map((r) => r.source.id);
    });
    expect(batches).toEqual([["w", "v"], ["a", "c"]]);
    expect(out).toEqual(["w", "v", "a", "c"]);
    // Nothing to poll of a kind: no empty batch.
    batches.length = 0;
    await feedFirst([req("deployment", "a")], async (batch) => (batches.push(batch.map((r) => r.source.id)), []));
    expect(batches).toEqual([["a"]]);
  });
});
