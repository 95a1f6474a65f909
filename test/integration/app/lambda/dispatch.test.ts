/**
 * The dispatch and poll Lambda handlers on real parts: dispatch state in DynamoDB Local, the platform
 * simulator, Lambda's asynchronous invocation through the SDK (test/support/lambda-async.ts: the Invoke
 * API's contract, retries and on-failure destination), moto_server's SQS for the queues dispatch watches.
 * A tick invokes the poll function with its polls, ten an invocation; the poll handler polls them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CreateQueueCommand, DeleteQueueCommand, PurgeQueueCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { Context } from "aws-lambda";
import { startSimulator, type Simulator } from "../../../../local/simulator/index.js";
import { checkConfig } from "../../../../lib/config/load.js";
import { watchlist } from "../../../../lib/dispatch/watchlist.js";
import { planPolls } from "../../../../lib/dispatch/tick.js";
import { DISPATCH_NAME, initialState, lastOkAt } from "../../../../lib/dispatch/source-state.js";
import * as budget from "../../../../lib/dispatch/budget.js";
import { sourceKey } from "../../../../lib/model/source.js";
import type { Watchlist } from "../../../../lib/model/dispatch.js";
import { DynamoDispatchStore } from "../../../../lib/store/dispatch-store.js";
import { DynamoIngestStore } from "../../../../lib/store/ingest-store.js";
import { createPlatformClient } from "../../../../lib/platform/client.js";
import type { PollDeps } from "../../../../lib/poll/poll.js";
import { createDispatchHandler } from "../../../../lib/app/lambda/dispatch.js";
import { lambdaDigestFlusher, lambdaPollSender } from "../../../../lib/app/cloud/invoke.js";
import { sqsQueueGauge } from "../../../../lib/app/cloud/queue-gauge.js";
import { createPollHandler } from "../../../../lib/app/lambda/poll.js";
import { MalformedPollMessage, parsePollEvent, parsePollMessage } from "../../../../lib/app/lambda/messages.js";
import { freshTable, TEST_RETENTION_MS } from "../../../support/dynamodb.js";
import { MOTO_ABSENT, motoAvailable, startMoto } from "../../../../local/runtime/moto.js";
import { startLambdaAsync, type LambdaAsync } from "../../../support/lambda-async.js";

const context = { functionName: "test", awsRequestId: "req-1", invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:test" } as unknown as Context;
const silent = { info() {}, warn() {}, error() {} };

/**
 * What a dispatch tick runs against: the simulator, Lambda's asynchronous Invoke as a test server with
 * a client for it, the watchlist of the simulated organization and a fresh table.
 */
async function dispatchWorld(opts: { seed: number; applications: number; table: string; everything?: boolean }) {
  const [sim, lambda] = await Promise.all([startSimulator({ seed: opts.seed, size: { applications: opts.applications } }), startLambdaAsync()]);
  const lambdaClient = new LambdaClient(lambda.clientConfig);
  const { organizationId: organization, applicationIds: applications, webhookIds: webhooks, clusterIds: clusters } = sim.ids;
  const config = checkConfig({
    platform: { url: sim.url, token: "env:T" },
    watch: [opts.everything ? { organization, webhooks, clusters, applications } : { organization, applications }],
  }, "test", {});
  const closeServers = async () => {
    lambdaClient.destroy();
    await Promise.all([sim.close(), lambda.close()]);
  };
  // The servers are closed when the table cannot be made, as when the test ends.
  const t = await freshTable(opts.table).catch(async (err: unknown) => {
    await closeServers();
    throw err;
  });
  const close = async () => {
    t.client.destroy();
    await closeServers();
  };
  return { sim, lambda, lambdaClient, watch: watchlist(config), t, close };
}

describe("dispatch → Lambda (asynchronous) → poll", () => {
  let sim: Simulator;
  let lambda: LambdaAsync;
  let client: LambdaClient;
  let watch: Watchlist;
  let dispatch: DynamoDispatchStore;
  let pollDeps: PollDeps;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    let t: Awaited<ReturnType<typeof dispatchWorld>>["t"];
    ({ sim, lambda, lambdaClient: client, watch, t, close } = await dispatchWorld({ seed: 5, applications: 3, table: "functions", everything: true }));
    dispatch = new DynamoDispatchStore({ client: t.client, tableName: t.tableName });
    pollDeps = {
      client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token" }),
      store: new DynamoIngestStore({ client: t.client, tableName: t.tableName, retentionMs: TEST_RETENTION_MS, now: () => sim.clock.now() }),
      now: () => sim.clock.now(),
      backfillWindowMs: 15 * 60_000,
      log: silent,
    };
  });
  afterAll(async () => close?.());

  it("invokes the poll function with the tick's polls, ten an invocation, and the poll handler raises the alert", async () => {
    const tick = createDispatchHandler({ store: dispatch, watch, polls: lambdaPollSender(client, "poll"), now: () => sim.clock.nowMs() });
    lambda.register("poll", createPollHandler({ pollDeps, store: dispatch, watch }));

    const first = await tick({}, context);
    expect(first).toEqual({ planned: watch.sources.length, sent: watch.sources.length, flushed: [] });
    const invocations = lambda.accepted.filter((a) => a.name === "poll");
    expect(invocations).toHaveLength(Math.ceil(watch.sources.length / 10));
    expect(invocations.flatMap((a) => parsePollEvent(a.event)).map((p) => p.source)).toEqual(expect.arrayContaining(watch.sources));
    expect(await lambda.drain()).toBe(invocations.length);
    expect(lambda.failed).toEqual([]);

    sim.scenario.deploy(sim.ids.applicationIds[0]!, { outcome: "DEPLOYMENT_ERROR" });
    sim.clock.advance(5 * 60_000);
    const accepted = lambda.accepted.length;
    const second = await tick({}, context);
    expect(second.planned).toBeGreaterThan(0);
    const polls = lambda.accepted.slice(accepted).flatMap((a) => parsePollEvent(a.event));
    expect(polls.every((b) => typeof b.previousPollAt === "string")).toBe(true);
    const before = pollDeps.store.writes.count;
    await lambda.drain();
    expect(lambda.failed).toEqual([]);
    if (polls.some((b) => b.source.id === sim.ids.applicationIds[0])) expect(pollDeps.store.writes.count).toBeGreaterThan(before);
  });

  it("refuses a malformed event, naming where, so that Lambda retries it and then dead-letters it", async () => {
    const poll = createPollHandler({ pollDeps, store: dispatch, watch });
    await expect(poll({ lookout: "poll", polls: [{ source: watch.sources[0] }, { source: { kind: "ftp" } }] }, context)).rejects.toThrow(MalformedPollMessage);
    await expect(poll({ lookout: "poll", polls: [{ source: { kind: "ftp" } }] }, context)).rejects.toThrow(/^poll event \$\.polls\[0\]\.source\.kind: /);
    await expect(poll({ Records: [] }, context)).rejects.toThrow('poll event: not {"lookout": "poll", "polls": [...]}');
    lambda.register("poll-bad", poll);
    const sender = lambdaPollSender(client, "poll-bad");
    expect((await sender.send([{ source: { kind: "ftp" } } as never], sim.clock.nowMs())).unsent).toEqual([]);
    for (let i = 0; i < 3; i++) await lambda.drain();
    expect(lambda.failed.map((f) => f.name)).toEqual(["poll-bad"]);
    expect(await lambda.drain()).toBe(0);
  });

  it("a batch Lambda runs again after a failure of ours spends every request it sends: no plan counted them", async () => {
    const broken = { ...pollDeps, store: new DynamoIngestStore({ client: (pollDeps.store as any).opts.client, tableName: "no-such-table", retentionMs: 1 }) };
    let attempt = 0;
    lambda.register("poll-rerun", createPollHandler(async () => ({ pollDeps: ++attempt === 1 ? broken : pollDeps, store: dispatch, watch })));
    // Webhooks and clusters: their list is read beside the cursor, so the failing attempt sends requests too.
    const polls = watch.sources.filter((s) => s.kind !== "deployment").slice(0, 3).map((source) => ({ source }));
    const spent = async () => budget.spentInWindow((await dispatch.get(DISPATCH_NAME))!.budget, sim.clock.nowMs());
    // As dispatch plans them: one request each spent at once.
    await dispatch.update(DISPATCH_NAME, (s) => ({ ...s!, budget: budget.spend(s!.budget, polls.length, sim.clock.nowMs()) }));
    const before = { spent: await spent(), sent: sim.requestLog.length };
    expect((await lambdaPollSender(client, "poll-rerun").send(polls, sim.clock.nowMs())).unsent).toEqual([]);
    await lambda.drain(); // the first attempt fails on our side: Lambda runs the batch again a minute later
    sim.clock.advance(60_000);
    await lambda.drain();
    expect(attempt).toBe(2);
    expect(lambda.failed.filter((f) => f.name === "poll-rerun")).toEqual([]);
    const sent = sim.requestLog.length - before.sent;
    expect(sent).toBeGreaterThanOrEqual(2 * polls.length);
    expect((await spent()) - before.spent + polls.length).toBe(sent);
  });

  it("fails the invocation when the store cannot be reached, not when the platform fails; a refused invocation is handed back", async () => {
    const broken = { ...pollDeps, store: new DynamoIngestStore({ client: (pollDeps.store as any).opts.client, tableName: "no-such-table", retentionMs: 1 }) };
    const ev = { lookout: "poll", polls: [{ source: watch.sources[0] }] };
    await expect(createPollHandler({ pollDeps: broken, store: dispatch, watch })(ev, context)).rejects.toThrow(/1 of 1 polls failed on our side/);
    sim.faults.set("*", { status: 500 });
    try {
      const fast = { ...pollDeps, client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token", sleep: async () => {} }) };
      expect(await createPollHandler({ pollDeps: fast, store: dispatch, watch })(ev, context)).toEqual({ polled: 1, deferred: 0 });
    } finally {
      sim.faults.clear();
    }
    // A function Lambda does not have: every poll comes back to dispatch, to be sent at a later tick.
    const polls = watch.sources.slice(0, 12).map((source) => ({ source }));
    const refused = await lambdaPollSender(client, "no-such-function").send(polls, sim.clock.nowMs());
    expect(refused.unsent).toEqual(expect.arrayContaining(polls));
    expect(refused.reasons).toEqual([expect.stringMatching(/^no-such-function: ResourceNotFoundException: /)]);
  });

  it("a tick whose polls Lambda refuses fails, naming why; the sources were not polled, so they stay due and go stale", async () => {
    const { sim, watch, t, lambdaClient, close } = await dispatchWorld({ seed: 7, applications: 2, table: "polls-refused" });
    try {
      const store = new DynamoDispatchStore({ client: t.client, tableName: t.tableName });
      const tick = createDispatchHandler({ store, watch, polls: lambdaPollSender(lambdaClient, "missing-poll"), now: () => sim.clock.nowMs() });
      await expect(tick({}, context)).rejects.toThrow(/^\d+ of \d+ polls could not be sent to the poll function: missing-poll: ResourceNotFoundException: /);
      const state = (await store.get("default"))!;
      for (const key of watch.keys) expect(lastOkAt(state.sources[key] ?? {}), key).toBeUndefined();
      // Due again at the next tick, every one of them.
      sim.clock.advance(60_000);
      const { polls } = await planPolls(store, watch, sim.clock.nowMs());
      expect(polls.map((p) => sourceKey(p.source)).sort()).toEqual([...watch.keys].sort());
    } finally {
      await close();
    }
  });
  it("health that cannot be raised fails the tick only after its polls were sent, and leaves them marked polled", async () => {
    const { sim, lambda, watch, t, lambdaClient, close } = await dispatchWorld({ seed: 9, applications: 2, table: "health-refused" });
    try {
      lambda.register("poll", async () => undefined);
      const store = new DynamoDispatchStore({ client: t.client, tableName: t.tableName });
      // A source that failed three times in a row: the tick has a source_failing event to raise.
      const now = sim.clock.nowMs();
      await store.update("default", () => {
        const state = initialState(watch, now);
        const key = [...watch.keys][0]!;
        return { ...state, sources: { ...state.sources, [key]: { ...state.sources[key], consecutive_failures: 3, last_polled_at: now - 60_000 } } };
      });
      const outbox = { expiresAt: () => 1, raiseAlert: async () => { throw new Error("the outbox is unreachable"); } };
      const tick = createDispatchHandler({ store, watch, polls: lambdaPollSender(lambdaClient, "poll"), outbox, now: () => sim.clock.nowMs() });
      await expect(tick({}, context)).rejects.toThrow("the outbox is unreachable");
      const sent = lambda.accepted.filter((a) => a.name === "poll").flatMap((a) => parsePollEvent(a.event));
      expect(sent.length).toBeGreaterThan(0);
      const state = (await store.get("default"))!;
      for (const p of sent) expect(state.sources[sourceKey(p.source)]?.last_polled_at, sourceKey(p.source)).toBe(sim.clock.nowMs());
    } finally {
      await close();
    }
  });
});

describe("dispatch's digest flush", () => {
  it("invokes each kind's notify function where alerts are held; one that cannot be invoked fails the tick after the other was", async () => {
    const { sim, lambda, lambdaClient, watch, t, close } = await dispatchWorld({ seed: 3, applications: 1, table: "digest-flush" });
    try {
      lambda.register("poll", async () => undefined);
      lambda.register("notify-email", async () => ({ flushed: 1 }));
      // The Slack notify function is missing: Lambda answers 404.
      const digests = { held: async () => ["slack", "email"] as Array<"slack" | "email">, ...lambdaDigestFlusher(lambdaClient, { slack: "notify-slack", email: "notify-email", http: "notify-http" }) };
      const tick = createDispatchHandler({ store: new DynamoDispatchStore({ client: t.client, tableName: t.tableName }), watch, polls: lambdaPollSender(lambdaClient, "poll"), digests, now: () => sim.clock.nowMs() });
      await expect(tick({}, context)).rejects.toThrow(/notify-slack/);
      expect(lambda.accepted.filter((a) => a.name !== "poll")).toEqual([{ name: "notify-email", event: { lookout: "flush-digests" } }]);
      expect(lambda.accepted.some((a) => a.name === "poll")).toBe(true);
    } finally {
      await close();
    }
  });
});

describe("dispatch's digest flush, when the rest of the tick fails", () => {
  it("flushes what is held though the dispatch state cannot be read, then fails the tick", async () => {
    const { sim, lambda, lambdaClient, watch, t, close } = await dispatchWorld({ seed: 4, applications: 1, table: "flush-regardless" });
    try {
      lambda.register("notify-slack", async () => ({ flushed: 1 }));
      const digests = { held: async () => ["slack"] as Array<"slack" | "email">, ...lambdaDigestFlusher(lambdaClient, { slack: "notify-slack", email: "notify-email", http: "notify-http" }) };
      const broken = new DynamoDispatchStore({ client: t.client, tableName: "no-such-table" });
      const tick = createDispatchHandler({ store: broken, watch, polls: lambdaPollSender(lambdaClient, "poll"), digests, now: () => sim.clock.nowMs() });
      await expect(tick({}, context)).rejects.toThrow(/non-existent table|ResourceNotFound|not found/i);
      expect(lambda.accepted).toEqual([{ name: "notify-slack", event: { lookout: "flush-digests" } }]);
    } finally {
      await close();
    }
  });
});

describe("health", () => {
  it("raises one Lookout Health event when the platform rejects the token, not one per tick", async () => {
    const { sim, lambda, lambdaClient, watch, t, close } = await dispatchWorld({ seed: 9, applications: 2, table: "health" });
    try {
      const dispatch = new DynamoDispatchStore({ client: t.client, tableName: t.tableName });
      const store = new DynamoIngestStore({ client: t.client, tableName: t.tableName, retentionMs: TEST_RETENTION_MS, now: () => sim.clock.now() });
      const pollDeps: PollDeps = {
        client: createPlatformClient({ baseUrl: sim.url, token: "revoked-token", auth: "token" }),
        store, now: () => sim.clock.now(), backfillWindowMs: 15 * 60_000, log: silent,
      };
      const tick = createDispatchHandler({ store: dispatch, watch, polls: lambdaPollSender(lambdaClient, "poll"), outbox: store, now: () => sim.clock.nowMs() });
      lambda.register("poll", createPollHandler({ pollDeps, store: dispatch, watch }));
      const doc = DynamoDBDocumentClient.from(t.client);
      const healthEvents = async () =>
        ((await doc.send(new ScanCommand({ TableName: t.tableName, ConsistentRead: true }))).Items ?? []).filter((i) => i.item_type === "alert" && i.detail?.kind === "health");

      await tick({}, context);
      await lambda.drain();
      expect(lambda.failed).toEqual([]); // the platform's refusal is not our failure

      sim.clock.advance(60_000);
      await tick({}, context);
      const events = await healthEvents();
      expect(events).toHaveLength(1);
      expect(events[0]!.detail).toMatchObject({ transition: "token_rejected", severity: "critical", status: "TOKEN_REJECTED" });
      expect(events[0]!.state).toBe("pending");
      sim.clock.advance(60_000);
      await tick({}, context);
      expect(await healthEvents()).toHaveLength(1);
    } finally {
      await close();
    }
  });

  it.skipIf(!motoAvailable())("watches Lookout's own queues: a dead letter at once, a queue not emptied for 15 minutes, a queue it cannot read fails the tick", async () => {
    const moto = await startMoto();
    const { sim, lambda, lambdaClient, watch, t, close } = await dispatchWorld({ seed: 11, applications: 1, table: "queue-watch" }).catch(async (err: unknown) => {
      await moto.stop();
      throw err;
    });
    try {
      const sqs = new SQSClient(moto.clientConfig);
      const url = async (name: string) => (await sqs.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl!;
      const [dlqUrl, slackUrl] = [await url("watch-dlq"), await url("watch-slack")];
      lambda.register("poll", async () => undefined);
      const dispatch = new DynamoDispatchStore({ client: t.client, tableName: t.tableName });
      const store = new DynamoIngestStore({ client: t.client, tableName: t.tableName, retentionMs: TEST_RETENTION_MS, now: () => sim.clock.now() });
      const gauge = sqsQueueGauge(sqs, [
        { queue: "SlackDeadLetterQueue", url: dlqUrl, dead_letter: true, what: "Slack deliveries that failed 5 times" },
        { queue: "SlackQueue", url: slackUrl, dead_letter: false, what: "the notify-slack function's work" },
      ]);
      const tick = createDispatchHandler({ store: dispatch, watch, polls: lambdaPollSender(lambdaClient, "poll"), outbox: store, queues: gauge, now: () => sim.clock.nowMs() });
      const doc = DynamoDBDocumentClient.from(t.client);
      const health = async (check: string) =>
        ((await doc.send(new ScanCommand({ TableName: t.tableName, ConsistentRead: true }))).Items ?? [])
          .filter((i) => i.item_type === "alert" && i.detail?.transition === check).map((i) => i.detail);
      const minutes = async (n: number) => {
        for (let i = 0; i < n; i++) {
          sim.clock.advance(60_000);
          await tick({}, context);
        }
      };

      // A dead letter already there at the stack's first tick: said at once, and remembered though
      // dispatch had no state yet (the same episode five minutes later, not a second event).
      await sqs.send(new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: "{}" }));
      const t0 = sim.clock.nowMs();
      await tick({}, context);
      const dead = await health("dead_letters");
      expect(dead).toHaveLength(1);
      expect(dead[0]).toMatchObject({ kind: "health", severity: "error", organization: { id: sim.ids.organizationId }, health: { subject: "SlackDeadLetterQueue" } });
      expect(dead[0].summary).toBe("1 dead letter(s) in SlackDeadLetterQueue: Slack deliveries that failed 5 times");
      expect((await dispatch.get("default"))?.queues).toEqual({ SlackDeadLetterQueue: t0 });
      // A message the Slack function keeps failing on: in flight (invisible) most of the time, still counted.
      await sqs.send(new SendMessageCommand({ QueueUrl: slackUrl, MessageBody: "{}" }));
      expect((await sqs.send(new ReceiveMessageCommand({ QueueUrl: slackUrl, VisibilityTimeout: 3600 }))).Messages).toHaveLength(1);
      await minutes(5);
      expect(await health("dead_letters")).toHaveLength(1);
      expect((await dispatch.get("default"))?.queues).toEqual({ SlackDeadLetterQueue: t0, SlackQueue: sim.clock.nowMs() });
      // Sampled every five minutes; the backlog is said once it has lasted 15, the dead letters not again.
      await minutes(10);
      expect(await health("queue_backlog")).toEqual([]);
      await minutes(5);
      const backlog = await health("queue_backlog");
      expect(backlog).toHaveLength(1);
      expect(backlog[0]).toMatchObject({ severity: "critical", health: { subject: "SlackQueue" } });
      expect(await health("dead_letters")).toHaveLength(1);
      // Emptied: forgotten, and a new dead letter later is a new episode.
      await sqs.send(new PurgeQueueCommand({ QueueUrl: dlqUrl }));
      await sqs.send(new PurgeQueueCommand({ QueueUrl: slackUrl }));
      await minutes(5);
      expect((await dispatch.get("default"))?.queues).toBeUndefined();
      await sqs.send(new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: "{}" }));
      await minutes(5);
      expect(await health("dead_letters")).toHaveLength(2);
      // A queue that cannot be read: the polls are sent all the same, then the tick fails, naming it.
      await sqs.send(new DeleteQueueCommand({ QueueUrl: slackUrl }));
      sim.clock.advance(5 * 60_000);
      const sent = lambda.accepted.length;
      await expect(tick({}, context)).rejects.toThrow(/Lookout's queues could not be read: SlackQueue: /);
      expect(lambda.accepted.length).toBeGreaterThan(sent);
      // What could be read is still kept: the dead letters remembered, no episode lost.
      expect(Object.keys((await dispatch.get("default"))?.queues ?? {})).toEqual(["SlackDeadLetterQueue"]);
    } finally {
      await close();
      await moto.stop();
    }
  }, 60_000);
});

describe("poll messages", () => {
  it("say what is wrong with a malformed one", () => {
    expect(() => parsePollMessage("nope")).toThrow(MalformedPollMessage);
    expect(() => parsePollMessage('{"source":{"kind":"ftp","organizationId":"o","id":"i"}}')).toThrow(/\$\.source\.kind: must be one of/);
  });
});

if (!motoAvailable()) console.warn(MOTO_ABSENT);
