/**
 * The change feed's loop on real parts (lib/dispatch/feed-loop.ts, lib/dispatch/feed-tick.ts): the
 * simulator over HTTP, DynamoDB Local. A deployment that fails between two minute ticks is read, and
 * raised with its environment, at the loop's first tick after the platform delivered its failure event;
 * a tick that finds nothing writes only the loop's small item, never dispatch's state; two ticks at
 * once read the feed once. In the cloud (moto_server's SQS): the feed-tick handler sends its next tick
 * ten seconds ahead before it reads, ends a loop the lease refuses, and still reads when the next tick
 * could not be sent (then fails, for SQS to deliver it again); dispatch starts a loop when none beats, and
 * none while one does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { checkConfig } from "../../../lib/config/load.js";
import { watchlist } from "../../../lib/dispatch/watchlist.js";
import type { Watchlist } from "../../../lib/model/dispatch.js";
import { DynamoDispatchStore, DynamoFeedLoopStore } from "../../../lib/store/dispatch-store.js";
import { DynamoIngestStore } from "../../../lib/store/ingest-store.js";
import { createPlatformClient } from "../../../lib/platform/client.js";
import type { PollDeps } from "../../../lib/poll/poll.js";
import { everySource, planPolls } from "../../../lib/dispatch/tick.js";
import { feedTick } from "../../../lib/dispatch/feed-tick.js";
import { pollBatch } from "../../../lib/dispatch/poll-batch.js";
import { DISPATCH_NAME, DISPATCH_POLICY, isHot } from "../../../lib/dispatch/source-state.js";
import { FEED_LOOP } from "../../../lib/dispatch/feed-loop.js";
import type { LookoutEventDetail } from "../../../lib/model/event.js";
import { freshTable, TEST_RETENTION_MS } from "../../support/dynamodb.js";
import type { Context } from "aws-lambda";
import { CreateQueueCommand, PurgeQueueCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { MOTO_CREDENTIALS, MOTO_REGION, motoAvailable, startMoto, type MotoServer } from "../../../local/runtime/moto.js";
import { createFeedTickHandler } from "../../../lib/app/lambda/feed-tick.js";
import { sqsFeedLoopQueue } from "../../../lib/app/cloud/feed-loop-queue.js";
import { createDispatchHandler } from "../../../lib/app/lambda/dispatch.js";

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
    expect([a, b].find((x) => !x.claimed)?.refused).toBe("lease");
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

  it("a tick that dies while it polls what the feed named leaves that service owed a read, in the stored state, until a result is recorded", async () => {
    const app = sim.ids.applicationIds[5]!;
    const key = `deployment:${sim.ids.organizationId}/${app}`;
    sim.scenario.deploy(app, { outcome: "DEPLOYMENT_ERROR", at: new Date(sim.clock.nowMs() + 1_000), durations: { queuedMs: 1_000, buildingMs: 2_000, deployingMs: 2_000 } });
    sim.clock.advance(10_000);
    // The named service's read hangs (the function is killed meanwhile): the tick is abandoned there.
    sim.faults.set("listDeploymentHistory", { delayMs: 1_500, times: 1 });
    const at = sim.clock.nowMs();
    const dying = tick();
    let stored = await dispatch.get(DISPATCH_NAME);
    for (let i = 0; i < 100 && stored?.sources[key]?.hot_claimed_at === undefined; i++) {
      await new Promise((r) => setTimeout(r, 10));
      stored = await dispatch.get(DISPATCH_NAME);
    }
    // What a dead tick leaves in DynamoDB: planned, not read. Not planned again while it may still end; owed a read once it cannot have.
    expect(stored?.sources[key]).toMatchObject({ last_polled_at: at, hot_claimed_at: at });
    expect(isHot(stored!.sources[key]!, at + 30_000)).toBe(false);
    expect(isHot(stored!.sources[key]!, at + DISPATCH_POLICY.hotClaimMs)).toBe(true);
    // This tick was only slow: its result settles the claim, and the service is read.
    expect((await dying).results.map((r) => r.source)).toContain(key);
    const settled = (await dispatch.get(DISPATCH_NAME))!.sources[key]!;
    expect(settled.hot_claimed_at).toBeUndefined();
    expect(isHot(settled, at + DISPATCH_POLICY.hotClaimMs)).toBe(false);
  }, 30_000);
});

const context = { functionName: "feed-tick", awsRequestId: "req-1", invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:feed-tick" } as unknown as Context;
const SQS_EVENT = { Records: [{ messageId: "m-1", body: JSON.stringify({ lookout: "feed-tick" }), eventSource: "aws:sqs" }] };

describe.skipIf(!motoAvailable())("the loop in the cloud, on moto_server's SQS", () => {
  let moto: MotoServer;
  let sqs: SQSClient;
  let queueUrl: string;
  beforeAll(async () => {
    moto = await startMoto();
    sqs = new SQSClient({ endpoint: moto.endpoint, region: MOTO_REGION, credentials: MOTO_CREDENTIALS });
    queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: "feed-loop" }))).QueueUrl!;
  }, 60_000);
  afterAll(async () => {
    sqs?.destroy();
    await moto?.stop();
  });
  const waiting = async (waitSeconds = 0) => (await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: waitSeconds }))).Messages ?? [];
  const handler = (queue = sqsFeedLoopQueue(sqs, queueUrl)) =>
    createFeedTickHandler({ dispatch, loops, watch, pollDeps, queue, now: () => sim.clock.nowMs() });

  it("a tick sends the next one ten seconds ahead, then reads; a second tick at once is refused and sends none", async () => {
    await sqs.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
    sim.clock.advance(FEED_LOOP.everyMs);
    expect(await handler()(SQS_EVENT, context)).toMatchObject({ claimed: true, polled: 1 });
    expect(await handler()(SQS_EVENT, context)).toEqual({ claimed: false, polled: 0 });
    // Delayed: not there yet, then one message (the refused tick sent none).
    expect(await waiting()).toEqual([]);
    const next = await waiting(12);
    expect(next.map((m) => JSON.parse(m.Body!))).toEqual([{ lookout: "feed-tick" }]);
  }, 30_000);

  it("a tick whose next one cannot be sent still reads the feed, then fails, for SQS to deliver it again", async () => {
    // Past the read's stamp's age, so that the read shows in it.
    sim.clock.advance(FEED_LOOP.stampEveryMs);
    const before = (await loops.get(DISPATCH_NAME))!;
    const broken = { tick: async () => { throw new Error("SendMessage: AccessDenied"); } };
    await expect(handler(broken)(SQS_EVENT, context)).rejects.toThrow("AccessDenied");
    const after = (await loops.get(DISPATCH_NAME))!;
    expect(after.beat_at).toBe(sim.clock.nowMs());
    expect(Object.values(after.reads)).toEqual([sim.clock.nowMs()]);
    expect(after.requests).toBe((before.requests ?? 0) + 1);
  });

  it("dispatch starts a loop when none beats, and none while one does", async () => {
    const started: number[] = [];
    const queue = { tick: async (delayMs: number) => void started.push(delayMs) };
    const dispatchHandler = createDispatchHandler({ store: dispatch, watch, polls: { send: async () => ({ unsent: [], reasons: [] }) }, feedLoop: { loops, queue }, now: () => sim.clock.nowMs() });
    // The loop ticked just now (the test above): alive.
    await dispatchHandler({}, context);
    expect(started).toEqual([]);
    sim.clock.advance(FEED_LOOP.lostAfterMs + 1_000);
    await dispatchHandler({}, context);
    expect(started).toEqual([0]);
  });

  it("dispatch starts none when it could not read the loop's state (the tick fails, naming why), nor without a feed to read", async () => {
    const started: number[] = [];
    const queue = { tick: async (delayMs: number) => void started.push(delayMs) };
    const send = async () => ({ unsent: [], reasons: [] });
    // Lost by now (no tick since the test above), yet its state cannot be read: a loop might still beat.
    sim.clock.advance(FEED_LOOP.lostAfterMs + 1_000);
    const unreadable = { get: async () => { throw new Error("ProvisionedThroughputExceededException"); }, update: loops.update.bind(loops) };
    const blind = createDispatchHandler({ store: dispatch, watch, polls: { send }, feedLoop: { loops: unreadable, queue }, now: () => sim.clock.nowMs() });
    await expect(blind({}, context)).rejects.toThrow("ProvisionedThroughputExceededException");
    expect(started).toEqual([]);
    // No webhook watched: no change feed, so no loop; the minute tick does it all.
    const noFeed = watchlist(checkConfig({ platform: { url: sim.url, token: "env:T" }, watch: [{ organization: sim.ids.organizationId, applications: sim.ids.applicationIds }] }, "test", {}));
    const plain = createDispatchHandler({ store: dispatch, watch: noFeed, polls: { send }, feedLoop: { loops, queue }, now: () => sim.clock.nowMs() });
    await plain({}, context);
    expect(started).toEqual([]);
  });
});
