/**
 * The change feed's loop on real parts (lib/ingest/feed-loop.ts, `feedTick` in lib/ingest/cycle.ts): the
 * simulator over HTTP, DynamoDB Local. A deployment that fails between two minute ticks is read, and
 * raised with its environment, at the loop's first tick after the platform delivered its failure event;
 * a tick that finds nothing writes only the loop's small item, never dispatch's state; two ticks at
 * once read the feed once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../local/simulator/index.js";
import { checkConfig } from "../../lib/config/load.js";
import { watchlist } from "../../lib/ingest/watchlist.js";
import type { Watchlist } from "../../lib/model/dispatch.js";
import { DynamoDispatchStore, DynamoFeedLoopStore } from "../../lib/store/dispatch-store.js";
import { DynamoIngestStore } from "../../lib/store/ingest-store.js";
import { createPlatformClient } from "../../lib/platform/client.js";
import type { PollDeps } from "../../lib/ingest/poll.js";
import { everySource, feedTick, planPolls, pollBatch, DISPATCH_NAME } from "../../lib/ingest/cycle.js";
import { FEED_LOOP } from "../../lib/ingest/feed-loop.js";
import type { LookoutEventDetail } from "../../lib/model/event.js";
import { freshTable, TEST_RETENTION_MS } from "../support/dynamodb.js";

const MIN = 60_000;
let sim: Simulator;
let watch: Watchlist;
let dispatch: DynamoDispatchStore;
let loops: DynamoFeedLoopStore;
let pollDeps: PollDeps;
const raised: LookoutEventDetail[] = [];

beforeAll(async () => {
  sim = await startSimulator({ seed: 23, size: { applications: 8, clusters: 0, webhooks: 1 } });
  // Applications by id only: their environment comes from the feed.
  const config = checkConfig(
    { platform: { url: sim.url, token: "env:T" }, watch: [{ organization: sim.ids.organizationId, webhooks: sim.ids.webhookIds, applications: sim.ids.applicationIds }] },
    "test", {},
  );
  watch = watchlist(config);
  const t = await freshTable("feed-loop");
  dispatch = new DynamoDispatchStore({ client: t.client, tableName: t.tableName });
  loops = new DynamoFeedLoopStore({ client: t.client, tableName: t.tableName });
  pollDeps = {
    client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token", sleep: async () => {} }),
    store: new DynamoIngestStore({ client: t.client, tableName: t.tableName, retentionMs: TEST_RETENTION_MS, now: () => sim.clock.now() }),
    now: () => sim.clock.now(), backfillWindowMs: 15 * MIN, log: { info() {}, warn() {}, error() {} },
    onAlert: (d, suppression) => void (suppression ? undefined : raised.push(d)),
  };
  // First sight of everything, then a minute tick: the steady state.
  await pollBatch(await everySource(dispatch, watch, sim.clock.nowMs()), pollDeps, dispatch, watch);
  sim.clock.advance(MIN);
  const { polls } = await planPolls(dispatch, watch, sim.clock.nowMs(), DISPATCH_NAME, loops);
  await pollBatch(polls, pollDeps, dispatch, watch);
}, 60_000);
afterAll(() => sim?.close());

const tick = () => feedTick({ dispatch, loops, watch, pollDeps }, sim.clock.nowMs());

describe("the change feed's loop", () => {
  it("a tick that finds nothing writes the loop's item only; a second tick at once is refused and reads nothing", async () => {
    const before = { dispatch: dispatch.writes.count, loops: loops.writes.count };
    const [a, b] = await Promise.all([tick(), tick()]);
    expect([a.claimed, b.claimed].sort()).toEqual([false, true]);
    expect([...a.results, ...b.results].map((r) => r.source)).toEqual([`webhook:${sim.ids.organizationId}/${sim.ids.webhookIds[0]}`]);
    expect(dispatch.writes.count).toBe(before.dispatch);
    expect(loops.writes.count - before.loops).toBeGreaterThanOrEqual(1);
    expect(await loops.get(DISPATCH_NAME)).toMatchObject({ beat_at: sim.clock.nowMs() });
  });

  it("a failure between two minute ticks is read and raised, with its environment, at the first tick after its event", async () => {
    const app = sim.ids.applicationIds[2]!;
    const startAt = sim.clock.nowMs() + 5_000;
    sim.scenario.deploy(app, { outcome: "DEPLOYMENT_ERROR", at: new Date(startAt), durations: { queuedMs: 2_000, buildingMs: 20_000, deployingMs: 15_000 } });
    const errorAt = startAt + 37_000;
    // The loop ticks every ten seconds: the start is named and read, then the failure.
    let failedAt: number | undefined;
    for (let t = sim.clock.nowMs() + FEED_LOOP.everyMs; t <= errorAt + 2 * FEED_LOOP.everyMs && failedAt === undefined; t += FEED_LOOP.everyMs) {
      sim.clock.set(new Date(t));
      const outcome = await tick();
      expect(outcome.claimed).toBe(true);
      if (raised.some((d) => d.kind === "deployment" && d.service?.id === app && d.transition === "failed")) failedAt = t;
    }
    expect(failedAt).toBeDefined();
    expect(failedAt! - errorAt).toBeLessThanOrEqual(FEED_LOOP.everyMs);
    const failed = raised.find((d) => d.kind === "deployment" && d.service?.id === app && d.transition === "failed")!;
    expect(failed.environment?.id).toBe(sim.model.services.get(app)!.environmentId);
  }, 60_000);
});
