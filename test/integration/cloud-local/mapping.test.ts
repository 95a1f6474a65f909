/**
 * cloud-local's event source mappings and pipe (local/cloud-local/stream-mapping.ts,
 * local/cloud-local/sqs-mapping.ts, local/cloud-local/pipe.ts) on the run's DynamoDB Local and on
 * moto_server, with the template's properties. The function under each mapping is a plain function
 * here that records its events and answers as scripted: the stream's filter, batches, partial failures
 * retried from the failed record, a poison record bisected out to the on-failure queue in Lambda's
 * shape while the stream moves on; an SQS partial failure coming back after the visibility timeout, a
 * FIFO group held by its failed message; the pipe setting groups. Skipped, saying so, where
 * moto_server is absent.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DescribeTableCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import { CreateQueueCommand, GetQueueAttributesCommand, type Message, ReceiveMessageCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { marshall } from "@aws-sdk/util-dynamodb";
import type { DynamoDBRecord, SQSRecord } from "aws-lambda";
import type { Invocation, Invoke } from "../../../local/cloud-local/call-function.js";
import { StreamMapping, type StreamMappingProperties } from "../../../local/cloud-local/stream-mapping.js";
import { SqsMapping, type SqsMappingProperties } from "../../../local/cloud-local/sqs-mapping.js";
import { SqsPipe } from "../../../local/cloud-local/pipe.js";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../local/runtime/dynamodb-local.js";
import { freshTable, dynamodbEndpoint } from "../../support/dynamodb.js";
import { MOTO_ABSENT, MOTO_REGION, type MotoServer, motoAvailable, startMoto } from "../../../local/runtime/moto.js";

const available = motoAvailable();
if (!available) console.warn(MOTO_ABSENT);

const PUBLISH_FN = "arn:aws:lambda:us-east-1:123456789012:function:lookout-test-publish";
const NOTIFY_FN = "arn:aws:lambda:us-east-1:123456789012:function:lookout-test-notify-slack";
const PUBLISH_FILTER = '{"eventName":["INSERT"],"dynamodb":{"NewImage":{"item_type":{"S":["alert"]},"state":{"S":["pending"]}}}}';

let moto: MotoServer;
let sqs: SQSClient;
let streams: DynamoDBStreamsClient;
let dataDir: string;
const urls = new Map<string, string>();
const queueUrlOf = (arn: string) => urls.get(arn) ?? `${arn}: not created`;
let made = 0;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "lookout-mappings-"));
  streams = new DynamoDBStreamsClient({ endpoint: dynamodbEndpoint(), region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  if (!available) return;
  moto = await startMoto();
  await moto.reset();
  sqs = new SQSClient(moto.clientConfig);
});

afterAll(async () => {
  streams?.destroy();
  sqs?.destroy();
  await moto?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

async function queue(name: string, attributes: Record<string, string> = {}): Promise<{ url: string; arn: string }> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `${name.replace(/\.fifo$/, "")}-${++made}${name.endsWith(".fifo") ? ".fifo" : ""}`, Attributes: attributes }));
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }));
  urls.set(Attributes!.QueueArn!, QueueUrl!);
  return { url: QueueUrl!, arn: Attributes!.QueueArn! };
}

const receiveAll = async (url: string): Promise<Message[]> =>
  (await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, MessageSystemAttributeNames: ["All"] }))).Messages ?? [];

/** The function under a mapping: records each event's records, answers as `answer` says. */
function scripted<R>(answer: (records: R[], call: number) => Invocation) {
  const calls: R[][] = [];
  const invoke: Invoke = async (_name, event) => {
    const records = (event as { Records: R[] }).Records;
    calls.push(records);
    return answer(records, calls.length);
  };
  return { calls, invoke };
}
const ok = (payload: unknown = null): Invocation => ({ ok: true, payload, ms: 1 });
const failures = (ids: string[]): Invocation => ok({ batchItemFailures: ids.map((itemIdentifier) => ({ itemIdentifier })) });
const crash: Invocation = { ok: false, errorType: "Error", errorMessage: "poison", ms: 1 };

// --- the stream mapping ---

const alertItem = (id: string, state = "pending") => ({ pk: `ALERT#${id}`, sk: "ALERT", item_type: "alert", state, alert_id: id });
const alertOf = (r: DynamoDBRecord) => r.dynamodb!.NewImage!.alert_id!.S!;
const seqOf = (r: DynamoDBRecord) => r.dynamodb!.SequenceNumber!;

/** A fresh table (the store's own, with its stream) and a mapping on it with the template's properties, changed by `over`. */
async function streamMapping(invoke: Invoke, over: Partial<StreamMappingProperties> = {}, extra: { now?: () => number } = {}) {
  const { client, tableName } = await freshTable("lookout-mappings");
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const failureQueue = await queue("publish-failures");
  const lines: string[] = [];
  const props: StreamMappingProperties = {
    BatchSize: 100, Enabled: true, EventSourceArn: Table!.LatestStreamArn!, FunctionName: PUBLISH_FN, ParallelizationFactor: 1,
    StartingPosition: "TRIM_HORIZON", MaximumRetryAttempts: 10, BisectBatchOnFunctionError: true, FunctionResponseTypes: ["ReportBatchItemFailures"],
    MaximumRecordAgeInSeconds: 3600, DestinationConfig: { OnFailure: { Destination: failureQueue.arn } }, FilterCriteria: { Filters: [{ Pattern: PUBLISH_FILTER }] },
    ...over,
  };
  const mapping = new StreamMapping(props, {
    invoke, dynamodb: client, streams, tableName, dataDir: join(dataDir, tableName), sqs, queueUrlOf,
    activity: (l) => lines.push(l), retryDelayMs: () => 5, ...extra,
  });
  const put = async (...items: Record<string, unknown>[]) => {
    for (const item of items) await client.send(new PutItemCommand({ TableName: tableName, Item: marshall(item) }));
  };
  return { mapping, put, lines, failureQueue, streamArn: props.EventSourceArn };
}

describe.skipIf(!available)("the DynamoDB stream mapping", () => {
  it("hands over only what the filter matches, in batches of BatchSize, in Lambda's record shape; then carries on from its checkpoint", async () => {
    const fn = scripted<DynamoDBRecord>(() => ok({ batchItemFailures: [] }));
    const { mapping, put, lines, streamArn } = await streamMapping(fn.invoke, { BatchSize: 2 });
    await put(alertItem("a1"), { pk: "REC#1", sk: "REC", item_type: "record" }, alertItem("a2"), alertItem("a3", "suppressed"), alertItem("a4"), alertItem("a5"), alertItem("a6"));
    await put({ ...alertItem("a1"), state: "published" }); // a MODIFY

    expect(await mapping.drain()).toBe(8);
    expect(fn.calls.map((b) => b.map(alertOf))).toEqual([["a1", "a2"], ["a4", "a5"], ["a6"]]);
    expect(lines).toEqual(["lookout-test-publish ← stream batch of 2 (ok)", "lookout-test-publish ← stream batch of 2 (ok)", "lookout-test-publish ← stream batch of 1 (ok)"]);

    const r = fn.calls[0]![0]!;
    expect(r).toMatchObject({ eventName: "INSERT", eventVersion: "1.1", eventSource: "aws:dynamodb", eventSourceARN: streamArn });
    expect(typeof r.eventID).toBe("string");
    expect(r.dynamodb).toMatchObject({
      Keys: { pk: { S: "ALERT#a1" }, sk: { S: "ALERT" } },
      NewImage: { item_type: { S: "alert" }, state: { S: "pending" }, alert_id: { S: "a1" } },
      StreamViewType: "NEW_IMAGE",
    });
    // Epoch seconds, as Lambda gives it (the SDK gives a Date; DynamoDB Local keeps whole minutes).
    expect(Math.abs(r.dynamodb!.ApproximateCreationDateTime! - Date.now() / 1000)).toBeLessThan(120);
    expect(r.dynamodb!.SequenceNumber).toMatch(/^\d+$/);
    expect(r.dynamodb!.SizeBytes).toBeGreaterThan(0);
    // The event as the function receives it: JSON, nothing the SDK decoded left in it.
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);

    expect(await mapping.drain()).toBe(0);
    await put(alertItem("a7"));
    mapping.start(20);
    await vi.waitFor(() => expect(fn.calls.flat().map(alertOf)).toContain("a7"), { timeout: 5_000, interval: 20 });
    await mapping.stop();
    expect(fn.calls).toHaveLength(4);
  });

  it("a partial failure is retried from the lowest failed record, nothing before it sent again; an unknown identifier retries the whole batch", async () => {
    const fn = scripted<DynamoDBRecord>((records, call) =>
      call === 1 ? failures([seqOf(records[3]!), seqOf(records[2]!)]) : call === 2 ? failures(["not-a-sequence-number"]) : ok({ batchItemFailures: [] }),
    );
    const { mapping, put, lines } = await streamMapping(fn.invoke);
    await put(alertItem("a1"), alertItem("a2"), alertItem("a3"), alertItem("a4"));
    await mapping.drain();
    expect(fn.calls.map((b) => b.map(alertOf))).toEqual([["a1", "a2", "a3", "a4"], ["a3", "a4"], ["a3", "a4"]]);
    expect(lines[0]).toBe(`lookout-test-publish ← stream batch of 4: 2 failed from seq ${seqOf(fn.calls[0]![2]!)}, retried`);
    expect(lines[1]).toBe('lookout-test-publish ← stream batch of 2: batchItemFailures names "not-a-sequence-number", not a record of the batch, retried');

    await put(alertItem("a5"));
    await mapping.drain();
    expect(fn.calls.slice(3).map((b) => b.map(alertOf))).toEqual([["a5"]]);
  });

  it("a function error bisects the batch down to the poison record, which goes to the on-failure queue as Lambda's record once its retries are spent; the stream moves on", async () => {
    const fn = scripted<DynamoDBRecord>((records) => (records.some((r) => alertOf(r) === "a3") ? crash : ok()));
    const { mapping, put, lines, failureQueue, streamArn } = await streamMapping(fn.invoke, { MaximumRetryAttempts: 2 });
    await put(alertItem("a1"), alertItem("a2"), alertItem("a3"), alertItem("a4"), alertItem("a5"));
    const before = Date.now();
    await mapping.drain();

    expect(fn.calls.map((b) => b.map(alertOf))).toEqual([
      ["a1", "a2", "a3", "a4", "a5"], ["a1", "a2", "a3"], ["a1", "a2"], ["a3"], ["a3"], ["a3"], ["a4", "a5"],
    ]);
    expect(lines).toContain("lookout-test-publish ← stream batch of 5: Error: poison, bisected");
    const queueName = failureQueue.arn.split(":").pop();
    expect(lines).toContain(`lookout-test-publish ← stream batch of 1: Error: poison, 1 record to ${queueName} after 3 attempts`);

    const [sent, ...more] = await receiveAll(failureQueue.url);
    expect(more).toEqual([]);
    const record = JSON.parse(sent!.Body!);
    const poison = seqOf(fn.calls[3]![0]!);
    expect(record).toEqual({
      requestContext: { requestId: expect.any(String), functionArn: PUBLISH_FN, condition: "RetryAttemptsExhausted", approximateInvokeCount: 3 },
      responseContext: { statusCode: 200, executedVersion: "$LATEST", functionError: "Unhandled" },
      version: "1.0",
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      DDBStreamBatchInfo: {
        shardId: expect.stringMatching(/^shardId-/),
        startSequenceNumber: poison,
        endSequenceNumber: poison,
        approximateArrivalOfFirstRecord: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        approximateArrivalOfLastRecord: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        batchSize: 1,
        streamArn,
      },
    });
    expect(Date.parse(record.timestamp)).toBeGreaterThanOrEqual(before);

    await put(alertItem("a6"));
    await mapping.drain();
    expect(fn.calls.slice(7).map((b) => b.map(alertOf))).toEqual([["a6"]]);
  });

  it("records older than MaximumRecordAgeInSeconds go to the on-failure queue without an invocation", async () => {
    const fn = scripted<DynamoDBRecord>(() => ok());
    const hourLater = () => Date.now() + 3_600_000;
    const { mapping, put, failureQueue } = await streamMapping(fn.invoke, { MaximumRecordAgeInSeconds: 60 }, { now: hourLater });
    await put(alertItem("a1"), alertItem("a2"));
    await mapping.drain();
    expect(fn.calls).toEqual([]);
    const [sent] = await receiveAll(failureQueue.url);
    expect(JSON.parse(sent!.Body!)).toMatchObject({ requestContext: { condition: "RecordAgeExceeded", approximateInvokeCount: 0 }, DDBStreamBatchInfo: { batchSize: 2 } });
  });
});

// --- the SQS mapping ---

const notifyProps = (arn: string, over: Partial<SqsMappingProperties> = {}): SqsMappingProperties => ({
  BatchSize: 10, EventSourceArn: arn, FunctionName: NOTIFY_FN, Enabled: true, FunctionResponseTypes: ["ReportBatchItemFailures"], ScalingConfig: { MaximumConcurrency: 2 }, ...over,
});

describe.skipIf(!available)("the SQS mapping", () => {
  it("deletes what the function handled; a failed message comes back after the visibility timeout", async () => {
    const q = await queue("slack", { VisibilityTimeout: "1" });
    let m1Failed = false;
    const fn = scripted<SQSRecord>((records) => {
      const m1 = records.find((r) => r.body === "m1");
      if (!m1 || m1Failed) return ok();
      m1Failed = true;
      return failures([m1.messageId]);
    });
    const lines: string[] = [];
    const mapping = new SqsMapping(notifyProps(q.arn), { invoke: fn.invoke, sqs, queueUrlOf, activity: (l) => lines.push(l) });
    await sqs.send(new SendMessageCommand({
      QueueUrl: q.url, MessageBody: "m0",
      MessageAttributes: { kind: { DataType: "String", StringValue: "alert" }, raw: { DataType: "Binary", BinaryValue: Buffer.from("hi") } },
    }));
    for (const body of ["m1", "m2"]) await sqs.send(new SendMessageCommand({ QueueUrl: q.url, MessageBody: body }));

    // Returns without waiting for m1, invisible until its visibility timeout ends.
    expect(await mapping.drain()).toBe(3);
    // One batch, unless the two pollers' receives happened to split the three.
    expect(fn.calls.flat().map((r) => r.body).sort()).toEqual(["m0", "m1", "m2"]);
    expect(lines).toContain(`lookout-test-notify-slack ← SQS batch of ${fn.calls.find((b) => b.some((r) => r.body === "m1"))!.length} from ${q.arn.split(":").pop()}: 1 failed, back after the visibility timeout (1 s)`);
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: q.url, AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"] }));
    expect(Attributes).toMatchObject({ ApproximateNumberOfMessages: "0", ApproximateNumberOfMessagesNotVisible: "1" });

    const r = fn.calls.flat().find((x) => x.body === "m0")!;
    expect(r).toMatchObject({ md5OfBody: expect.stringMatching(/^[0-9a-f]{32}$/), eventSource: "aws:sqs", eventSourceARN: q.arn, awsRegion: MOTO_REGION,
      attributes: { ApproximateReceiveCount: "1", SentTimestamp: expect.any(String), SenderId: expect.any(String), ApproximateFirstReceiveTimestamp: expect.any(String) },
      messageAttributes: {
        kind: { stringValue: "alert", stringListValues: [], binaryListValues: [], dataType: "String" },
        raw: { binaryValue: Buffer.from("hi").toString("base64"), stringListValues: [], binaryListValues: [], dataType: "Binary" },
      },
    });

    // The pollers, started, get m1 again once it is visible; stop waits for the batch.
    mapping.start();
    const handed = fn.calls.length;
    await vi.waitFor(() => expect(fn.calls).toHaveLength(handed + 1), { timeout: 5_000, interval: 50 });
    await mapping.stop();
    expect(fn.calls[handed]!.map((r) => [r.body, r.attributes.ApproximateReceiveCount])).toEqual([["m1", "2"]]);
    expect(await receiveAll(q.url)).toEqual([]);
  });

  it("a FIFO queue: records carry the group, and a group waits behind its failed message while the others go on", async () => {
    const q = await queue("slack.fifo", { FifoQueue: "true", VisibilityTimeout: "1" });
    let failedOnce = false;
    const fn = scripted<SQSRecord>((records) => {
      if (records.some((r) => r.body === "x1") && !failedOnce) return (failedOnce = true), crash;
      return ok();
    });
    const mapping = new SqsMapping(notifyProps(q.arn, { BatchSize: 1 }), { invoke: fn.invoke, sqs, queueUrlOf });
    for (const [body, group] of [["x1", "g1"], ["y1", "g2"], ["x2", "g1"]]) {
      await sqs.send(new SendMessageCommand({ QueueUrl: q.url, MessageBody: body, MessageGroupId: group, MessageDeduplicationId: `d-${body}` }));
    }
    await mapping.drain();
    const bodies = () => fn.calls.flat().map((r) => r.body);
    expect(bodies().sort()).toEqual(["x1", "y1"]); // x2 waits behind x1, invisible after its failure
    expect(fn.calls.flat().find((r) => r.body === "y1")!.attributes).toMatchObject({
      MessageGroupId: "g2", MessageDeduplicationId: "d-y1", SequenceNumber: expect.stringMatching(/^\d+$/),
    });

    await new Promise((r) => setTimeout(r, 1_100));
    await mapping.drain();
    expect(bodies().filter((b) => b !== "y1")).toEqual(["x1", "x1", "x2"]);
  });
});

// --- the pipe ---

describe.skipIf(!available)("the pipe", () => {
  it("moves the inbox's messages to the FIFO queue, each in its group with its deduplication id", async () => {
    const inbox = await queue("slack-inbox");
    const target = await queue("slack-queue.fifo", { FifoQueue: "true" });
    const lines: string[] = [];
    const pipe = new SqsPipe(
      {
        Name: "lookout-test-slack", Source: inbox.arn, Target: target.arn, SourceParameters: { SqsQueueParameters: { BatchSize: 10 } },
        TargetParameters: { InputTemplate: "<$.body>", SqsQueueParameters: { MessageGroupId: "$.body.group", MessageDeduplicationId: "$.body.dedup" } },
      },
      { sqs, queueUrlOf, activity: (l) => lines.push(l) },
    );
    const sent = [{ route: "r", group: "a", dedup: "r/a1" }, { route: "r", group: "b", dedup: "r/b1" }, { route: "r", group: "a", dedup: "r/a2" }];
    pipe.start(20);
    for (const m of sent) await sqs.send(new SendMessageCommand({ QueueUrl: inbox.url, MessageBody: JSON.stringify(m) }));
    await vi.waitFor(() => expect(lines.join("\n").match(/\d+(?= messages?)/g)?.map(Number).reduce((a, b) => a + b)).toBe(3), { timeout: 5_000, interval: 20 });
    await pipe.stop();
    expect(await pipe.drain()).toBe(0);

    const got = await receiveAll(target.url);
    expect(got.map((m) => [JSON.parse(m.Body!), m.Attributes!.MessageGroupId, m.Attributes!.MessageDeduplicationId])).toEqual(sent.map((m) => [m, m.group, m.dedup]));
    expect(lines[0]).toMatch(/^lookout-test-slack: \d messages? slack-inbox-\d+ → slack-queue-\d+\.fifo$/);
  });
});
