/**
 * The dispatch and poll Lambda handlers on real parts: dispatch state in DynamoDB Local, the poll queue
 * in moto_server's SQS, the platform simulator. A tick queues polls; the poll handler consumes them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CreateQueueCommand, DeleteQueueCommand, PurgeQueueCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { Context, SQSEvent } from "aws-lambda";
import { startSimulator, type Simulator } from "../../local/simulator/index.js";
import { checkConfig } from "../../lib/config/load.js";
import { watchlist } from "../../lib/ingest/watchlist.js";
import type { Watchlist } from "../../lib/model/dispatch.js";
import { DynamoDispatchStore } from "../../lib/store/dispatch-store.js";
import { DynamoIngestStore } from "../../lib/store/ingest-store.js";
import { createPlatformClient } from "../../lib/platform/client.js";
import type { PollDeps } from "../../lib/ingest/poll.js";
import { createDispatchHandler } from "../../lib/app/lambda/dispatch.js";
import { sqsPollQueue } from "../../lib/app/cloud/queue.js";
import { sqsQueueGauge } from "../../lib/app/cloud/queue-gauge.js";
import { createPollHandler } from "../../lib/app/lambda/poll.js";
import { parsePollMessage, MalformedPollMessage } from "../../lib/app/lambda/messages.js";
import { freshTable, TEST_RETENTION_MS } from "../support/dynamodb.js";
import { MOTO_ABSENT, motoAvailable, startMoto, type MotoServer } from "../support/moto.js";

const context = { functionName: "test", awsRequestId: "req-1", invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:test" } as unknown as Context;
const silent = { info() {}, warn() {}, error() {} };

describe.skipIf(!motoAvailable())("dispatch → SQS → poll", () => {
  let sim: Simulator;
  let moto: MotoServer;
  let sqs: SQSClient;
  let queueUrl: string;
  let watch: Watchlist;
  let dispatch: DynamoDispatchStore;
  let pollDeps: PollDeps;

  beforeAll(async () => {
    [sim, moto] = await Promise.all([startSimulator({ seed: 5, size: { applications: 3 } }), startMoto()]);
    sqs = new SQSClient(moto.clientConfig);
    queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: "lookout-poll" }))).QueueUrl!;
    const config = checkConfig(
      { platform: { url: sim.url, token: "env:T" }, watch: [{ organization: sim.ids.organizationId, webhooks: sim.ids.webhookIds, clusters: sim.ids.clusterIds, applications: sim.ids.applicationIds }] },
      "test", {},
    );
    watch = watchlist(config);
    const t = await freshTable("functions");
    dispatch = new DynamoDispatchStore({ client: t.client, tableName: t.tableName });
    pollDeps = {
      client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token" }),
      store: new DynamoIngestStore({ client: t.client, tableName: t.tableName, retentionMs: TEST_RETENTION_MS, now: () => sim.clock.now() }),
      now: () => sim.clock.now(),
      backfillWindowMs: 15 * 60_000,
      log: silent,
    };
  });
  afterAll(async () => {
    await sim?.close();
    await moto?.stop();
  });

  const receiveAll = async (): Promise<SQSEvent> => {
    const res = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    return {
      Records: (res.Messages ?? []).map((m) => ({
        messageId: m.MessageId!, receiptHandle: m.ReceiptHandle!, body: m.Body!, attributes: {} as never, messageAttributes: {},
        md5OfBody: m.MD5OfBody!, eventSource: "aws:sqs", eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:lookout-poll", awsRegion: "us-east-1",
      })),
    };
  };

  it("queues one message per planned poll, and the poll handler raises the alert", async () => {
    const tick = createDispatchHandler({ store: dispatch, watch, queue: sqsPollQueue(sqs, queueUrl), now: () => sim.clock.nowMs() });
    const poll = createPollHandler({ pollDeps, store: dispatch, watch });

    const first = await tick({}, context);
    expect(first).toEqual({ planned: watch.sources.length, queued: watch.sources.length });
    const firstBatch = await receiveAll();
    expect(firstBatch.Records).toHaveLength(watch.sources.length);
    expect((await poll(firstBatch, context)).batchItemFailures).toEqual([]);

    sim.scenario.deploy(sim.ids.applicationIds[0]!, { outcome: "DEPLOYMENT_ERROR" });
    sim.clock.advance(5 * 60_000);
    const second = await tick({}, context);
    expect(second.planned).toBeGreaterThan(0);
    const batch = await receiveAll();
    const bodies = batch.Records.map((r) => parsePollMessage(r.body));
    expect(bodies.every((b) => typeof b.previousPollAt === "string")).toBe(true);
    const before = pollDeps.store.writes.count;
    expect((await poll(batch, context)).batchItemFailures).toEqual([]);
    if (bodies.some((b) => b.source.id === sim.ids.applicationIds[0])) expect(pollDeps.store.writes.count).toBeGreaterThan(before);
  });

  it("fails a malformed message (to be retried, then dead-lettered) and only that one", async () => {
    const poll = createPollHandler({ pollDeps, store: dispatch, watch });
    const good = JSON.stringify({ source: watch.sources[0] });
    const event: SQSEvent = {
      Records: [
        { messageId: "m-bad", body: '{"source":{"kind":"ftp"}}' },
        { messageId: "m-good", body: good },
      ].map((r) => ({ ...r, receiptHandle: "h", attributes: {} as never, messageAttributes: {}, md5OfBody: "", eventSource: "aws:sqs", eventSourceARN: "arn", awsRegion: "us-east-1" })),
    };
    expect((await poll(event, context)).batchItemFailures).toEqual([{ itemIdentifier: "m-bad" }]);
  });

  it("fails the message when the store cannot be reached, not when the platform fails", async () => {
    const broken = { ...pollDeps, store: new DynamoIngestStore({ client: (pollDeps.store as any).opts.client, tableName: "no-such-table", retentionMs: 1 }) };
    const body = JSON.stringify({ source: watch.sources[0] });
    const ev = (id: string): SQSEvent => ({ Records: [{ messageId: id, body, receiptHandle: "h", attributes: {} as never, messageAttributes: {}, md5OfBody: "", eventSource: "aws:sqs", eventSourceARN: "arn", awsRegion: "us-east-1" }] });
    expect((await createPollHandler({ pollDeps: broken, store: dispatch, watch })(ev("store"), context)).batchItemFailures).toEqual([{ itemIdentifier: "store" }]);
    sim.faults.set("*", { status: 500 });
    try {
      const fast = { ...pollDeps, client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token", sleep: async () => {} }) };
      expect((await createPollHandler({ pollDeps: fast, store: dispatch, watch })(ev("platform"), context)).batchItemFailures).toEqual([]);
    } finally {
      sim.faults.clear();
    }
  });
});

describe.skipIf(!motoAvailable())("health", () => {
  it("raises one Lookout Health event when the platform rejects the token, not one per tick", async () => {
    const sim = await startSimulator({ seed: 9, size: { applications: 2 } });
    const moto = await startMoto();
    try {
      const sqs = new SQSClient(moto.clientConfig);
      const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: "health-poll" }))).QueueUrl!;
      const config = checkConfig({ platform: { url: sim.url, token: "env:T" }, watch: [{ organization: sim.ids.organizationId, applications: sim.ids.applicationIds }] }, "test", {});
      const watch = watchlist(config);
      const t = await freshTable("health");
      const dispatch = new DynamoDispatchStore({ client: t.client, tableName: t.tableName });
      const store = new DynamoIngestStore({ client: t.client, tableName: t.tableName, retentionMs: TEST_RETENTION_MS, now: () => sim.clock.now() });
      const pollDeps: PollDeps = {
        client: createPlatformClient({ baseUrl: sim.url, token: "revoked-token", auth: "token" }),
        store, now: () => sim.clock.now(), backfillWindowMs: 15 * 60_000, log: silent,
      };
      const tick = createDispatchHandler({ store: dispatch, watch, queue: sqsPollQueue(sqs, queueUrl), outbox: store, now: () => sim.clock.nowMs() });
      const poll = createPollHandler({ pollDeps, store: dispatch, watch });
      const doc = DynamoDBDocumentClient.from(t.client);
      const healthEvents = async () =>
        ((await doc.send(new ScanCommand({ TableName: t.tableName, ConsistentRead: true }))).Items ?? []).filter((i) => i.item_type === "alert" && i.detail?.kind === "health");

      await tick({}, context);
      const msgs = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }));
      const event: SQSEvent = { Records: (msgs.Messages ?? []).map((m) => ({ messageId: m.MessageId!, receiptHandle: "h", body: m.Body!, attributes: {} as never, messageAttributes: {}, md5OfBody: "", eventSource: "aws:sqs", eventSourceARN: "arn", awsRegion: "us-east-1" })) };
      expect((await poll(event, context)).batchItemFailures).toEqual([]); // the platform's refusal is not our failure

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
      await sim.close();
      await moto.stop();
    }
  });

  it("watches Lookout's own queues: a dead letter at once, a queue not emptied for 15 minutes, a queue it cannot read fails the tick", async () => {
    const sim = await startSimulator({ seed: 11, size: { applications: 1 } });
    const moto = await startMoto();
    try {
      const sqs = new SQSClient(moto.clientConfig);
      const url = async (name: string) => (await sqs.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl!;
      const [pollUrl, dlqUrl, slackUrl] = [await url("watch-poll"), await url("watch-dlq"), await url("watch-slack")];
      const config = checkConfig({ platform: { url: sim.url, token: "env:T" }, watch: [{ organization: sim.ids.organizationId, applications: sim.ids.applicationIds }] }, "test", {});
      const watch = watchlist(config);
      const t = await freshTable("queue-watch");
      const dispatch = new DynamoDispatchStore({ client: t.client, tableName: t.tableName });
      const store = new DynamoIngestStore({ client: t.client, tableName: t.tableName, retentionMs: TEST_RETENTION_MS, now: () => sim.clock.now() });
      const gauge = sqsQueueGauge(sqs, [
        { queue: "SlackDeadLetterQueue", url: dlqUrl, dead_letter: true, what: "Slack deliveries that failed 5 times" },
        { queue: "SlackQueue", url: slackUrl, dead_letter: false, what: "the notify-slack function's work" },
      ]);
      const tick = createDispatchHandler({ store: dispatch, watch, queue: sqsPollQueue(sqs, pollUrl), outbox: store, queues: gauge, now: () => sim.clock.nowMs() });
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
      // A queue that cannot be read: the polls are queued all the same, then the tick fails, naming it.
      await sqs.send(new DeleteQueueCommand({ QueueUrl: slackUrl }));
      sim.clock.advance(5 * 60_000);
      await expect(tick({}, context)).rejects.toThrow(/Lookout's queues could not be read: SlackQueue: /);
      const queued = await sqs.send(new ReceiveMessageCommand({ QueueUrl: pollUrl, MaxNumberOfMessages: 10 }));
      expect(queued.Messages?.length ?? 0).toBeGreaterThan(0);
      // What could be read is still kept: the dead letters remembered, no episode lost.
      expect(Object.keys((await dispatch.get("default"))?.queues ?? {})).toEqual(["SlackDeadLetterQueue"]);
    } finally {
      await sim.close();
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
