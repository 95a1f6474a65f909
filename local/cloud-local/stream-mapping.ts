/**
 * A DynamoDB stream event source mapping, played as Lambda plays it (docs/cloud-local.md), from the
 * template's resolved properties. The table's stream is read by OutboxStreamReader (local/runtime/stream.ts),
 * whose checkpoint advances only once a batch is handled: Lambda holds a shard while it retries, and so
 * does this. Records no filter matches are dropped; the others go to the function in batches of
 * BatchSize, in Lambda's event shape. With ReportBatchItemFailures the batch is retried from its lowest
 * failed record; a function error bisects the batch (BisectBatchOnFunctionError) or retries it. Records
 * whose retries are exhausted, or older than MaximumRecordAgeInSeconds, go to the on-failure queue as
 * Lambda's invocation record (which names them, without their content), and the shard moves on.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { AttributeValue as SdkAttributeValue, DynamoDBStreamsClient, _Record } from "@aws-sdk/client-dynamodb-streams";
import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { AttributeValue, DynamoDBRecord } from "aws-lambda";
import { compareSeq, OutboxStreamReader } from "../runtime/stream.js";
import { compileFilters, type Matcher } from "./event-pattern.js";
import { type Activity, functionNameOf, type Invoke } from "./call-function.js";
import { arnName, base64, batchOutcome, type MappingProperties, reportsItemFailures } from "./mapping.js";

export interface StreamMappingProperties extends MappingProperties {
  StartingPosition?: string;
  /** Played as 1: one batch of a shard at a time keeps every key's order, which is what a factor keeps. */
  ParallelizationFactor?: number;
  /** -1 (the default): retried until the record is too old. */
  MaximumRetryAttempts?: number;
  BisectBatchOnFunctionError?: boolean;
  /** -1 (the default): no limit. */
  MaximumRecordAgeInSeconds?: number;
  DestinationConfig?: { OnFailure?: { Destination?: string } };
}

export interface StreamMappingOptions {
  invoke: Invoke;
  dynamodb: DynamoDBClient;
  streams: DynamoDBStreamsClient;
  tableName: string;
  /** Where the mapping's checkpoint is kept (local/runtime/stream.ts): a folder of its own. */
  dataDir: string;
  /** For the on-failure destination. */
  sqs: SQSClient;
  queueUrlOf: (arn: string) => string;
  activity?: Activity;
  /** The pause before the `attempt`th retry of a batch. Default 200 ms doubling, at most 5 s. */
  retryDelayMs?: (attempt: number) => number;
  /** Errors of the continuous loop (start); it carries on at the next interval. */
  onError?: (err: unknown) => void;
  /** The clock records' age is measured with (tests). */
  now?: () => number;
}

export type FailureCondition = "RetryAttemptsExhausted" | "RecordAgeExceeded";

/** Lambda's record of a stream batch it gave up on, as sent to the on-failure destination. */
export interface StreamFailureRecord {
  requestContext: { requestId: string; functionArn: string; condition: FailureCondition; approximateInvokeCount: number };
  responseContext: { statusCode: number; executedVersion: string; functionError?: string };
  version: "1.0";
  timestamp: string;
  DDBStreamBatchInfo: {
    shardId: string;
    startSequenceNumber: string;
    endSequenceNumber: string;
    approximateArrivalOfFirstRecord: string;
    approximateArrivalOfLastRecord: string;
    batchSize: number;
    streamArn: string;
  };
}

/** Records handed over together, and how often exactly these were invoked (a bisected half starts again at 0). */
interface Attempt {
  records: DynamoDBRecord[];
  invoked: number;
  functionError: boolean;
}

class MappingStopped extends Error {}

const defaultDelay = (attempt: number) => Math.min(5_000, 200 * 2 ** (attempt - 1));

export class StreamMapping {
  readonly label: string;
  private readonly reader: OutboxStreamReader;
  private readonly matches: Matcher;
  private readonly batchSize: number;
  private stopping = false;

  constructor(
    readonly props: StreamMappingProperties,
    private readonly opts: StreamMappingOptions,
  ) {
    if ((props.StartingPosition ?? "TRIM_HORIZON") !== "TRIM_HORIZON") {
      throw new Error(`StartingPosition: ${props.StartingPosition} is not played (the stream is read from its TRIM_HORIZON)`);
    }
    const destination = props.DestinationConfig?.OnFailure?.Destination;
    if (destination && !/^arn:[^:]+:sqs:/.test(destination)) {
      throw new Error(`DestinationConfig.OnFailure.Destination: ${destination} is not an SQS queue (the only destination played)`);
    }
    this.label = functionNameOf(props.FunctionName);
    this.matches = compileFilters(props.FilterCriteria?.Filters);
    this.batchSize = props.BatchSize ?? 100;
    this.reader = new OutboxStreamReader({
      dynamodb: opts.dynamodb,
      streams: opts.streams,
      tableName: opts.tableName,
      dataDir: opts.dataDir,
      // Read more than a batch at once: filtered-out records do not make the function's batches small.
      batchSize: Math.min(1_000, Math.max(this.batchSize, 100)),
      onRecords: (records, shardId) => this.handle(records, shardId),
      onError: (err) => {
        if (!(err instanceof MappingStopped)) (opts.onError ?? ((e) => console.error(`${this.label} stream mapping:`, e)))(err);
      },
    });
  }

  /** Reads everything the stream holds now; returns how many records were read (filtered ones too). */
  drain(): Promise<number> {
    return this.props.Enabled === false ? Promise.resolve(0) : this.reader.drain();
  }

  start(intervalMs = 250): void {
    if (this.props.Enabled === false) return;
    this.stopping = false;
    this.reader.start(intervalMs);
  }

  /** Stops polling; a batch waiting to be retried is given up for now and read again at the next start. */
  async stop(): Promise<void> {
    this.stopping = true;
    try {
      await this.reader.stop();
    } finally {
      this.stopping = false;
    }
  }

  private async handle(records: _Record[], shardId: string): Promise<void> {
    const matching = records.map((r) => lambdaRecord(r, this.props.EventSourceArn)).filter(this.matches);
    for (let i = 0; i < matching.length; i += this.batchSize) {
      await this.deliver(matching.slice(i, i + this.batchSize), shardId);
    }
  }

  /** One batch until every record is handed over or given up, in order. */
  private async deliver(batch: DynamoDBRecord[], shardId: string): Promise<void> {
    const pending: Attempt[] = [{ records: batch, invoked: 0, functionError: false }];
    while (pending.length) {
      const a = pending.shift()!;
      a.records = await this.dropExpired(a, shardId);
      if (!a.records.length) continue;
      const inv = await this.opts.invoke(this.props.FunctionName, { Records: a.records });
      a.invoked++;
      a.functionError = !inv.ok;
      const seqs = a.records.map(seqOf);
      const out = batchOutcome(inv, new Set(seqs), reportsItemFailures(this.props));
      const what = `${this.label} ← stream batch of ${a.records.length}`;
      if (out.kind === "ok") {
        this.say(`${what} (ok)`);
      } else if (out.kind === "partial") {
        // Lambda checkpoints at the lowest failed sequence number: what came before it is done.
        const lowest = out.failed.reduce((x, y) => (compareSeq(x, y) <= 0 ? x : y));
        const rest = { ...a, records: a.records.slice(seqs.indexOf(lowest)) };
        await this.retry(pending, rest, shardId, `${what}: ${out.failed.length} failed from seq ${lowest}`);
      } else if (out.kind === "error" && this.props.BisectBatchOnFunctionError && a.records.length > 1) {
        // Splitting is not a retry: each half starts its count again.
        const half = Math.ceil(a.records.length / 2);
        pending.unshift({ records: a.records.slice(0, half), invoked: 0, functionError: false }, { records: a.records.slice(half), invoked: 0, functionError: false });
        this.say(`${what}: ${out.errorType}: ${out.errorMessage}, bisected`);
      } else {
        const why = out.kind === "error" ? `${out.errorType}: ${out.errorMessage}` : out.why;
        await this.retry(pending, a, shardId, `${what}: ${why}`);
      }
    }
  }

  /** Back to the front of the line after a pause, or to the destination once the retries are spent. */
  private async retry(pending: Attempt[], a: Attempt, shardId: string, what: string): Promise<void> {
    const max = this.props.MaximumRetryAttempts ?? -1;
    if (max >= 0 && a.invoked > max) {
      this.say(`${what}, ${await this.giveUp(a, "RetryAttemptsExhausted", shardId)} after ${a.invoked} attempts`);
      return;
    }
    this.say(`${what}, retried`);
    if (this.stopping) throw new MappingStopped("stopped");
    await sleep((this.opts.retryDelayMs ?? defaultDelay)(a.invoked));
    if (this.stopping) throw new MappingStopped("stopped");
    pending.unshift(a);
  }

  /** Records older than MaximumRecordAgeInSeconds (a prefix: a shard is in order) go to the destination. */
  private async dropExpired(a: Attempt, shardId: string): Promise<DynamoDBRecord[]> {
    const maxAge = this.props.MaximumRecordAgeInSeconds ?? -1;
    if (maxAge < 0) return a.records;
    const now = (this.opts.now ?? Date.now)() / 1000;
    const fresh = a.records.findIndex((r) => now - (r.dynamodb?.ApproximateCreationDateTime ?? now) <= maxAge);
    const expired = fresh === -1 ? a.records.length : fresh;
    if (expired) {
      const sent = await this.giveUp({ ...a, records: a.records.slice(0, expired) }, "RecordAgeExceeded", shardId);
      this.say(`${this.label} ← stream: ${sent}, older than ${maxAge} s`);
    }
    return a.records.slice(expired);
  }

  /** Sends Lambda's record of the batch to the on-failure queue; says where the records went. */
  private async giveUp(a: Attempt, condition: FailureCondition, shardId: string): Promise<string> {
    const n = `${a.records.length} record${a.records.length === 1 ? "" : "s"}`;
    const destination = this.props.DestinationConfig?.OnFailure?.Destination;
    if (!destination) return `${n} dropped (no on-failure destination)`;
    const record = failureRecord(this.props, a, condition, shardId, (this.opts.now ?? Date.now)());
    await this.opts.sqs.send(new SendMessageCommand({ QueueUrl: this.opts.queueUrlOf(destination), MessageBody: JSON.stringify(record) }));
    return `${n} to ${arnName(destination)}`;
  }

  private say(line: string): void {
    this.opts.activity?.(line);
  }
}

const seqOf = (r: DynamoDBRecord) => r.dynamodb?.SequenceNumber ?? "";

/** An ISO time without milliseconds, as Lambda writes a DynamoDB record's arrival. */
const arrivalOf = (r: DynamoDBRecord) => new Date((r.dynamodb?.ApproximateCreationDateTime ?? 0) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

function failureRecord(props: StreamMappingProperties, a: Attempt, condition: FailureCondition, shardId: string, now: number): StreamFailureRecord {
  const first = a.records[0]!;
  const last = a.records[a.records.length - 1]!;
  return {
    requestContext: { requestId: randomUUID(), functionArn: props.FunctionName, condition, approximateInvokeCount: a.invoked },
    responseContext: { statusCode: 200, executedVersion: "$LATEST", ...(a.functionError ? { functionError: "Unhandled" } : {}) },
    version: "1.0",
    timestamp: new Date(now).toISOString(),
    DDBStreamBatchInfo: {
      shardId,
      startSequenceNumber: seqOf(first),
      endSequenceNumber: seqOf(last),
      approximateArrivalOfFirstRecord: arrivalOf(first),
      approximateArrivalOfLastRecord: arrivalOf(last),
      batchSize: a.records.length,
      streamArn: props.EventSourceArn,
    },
  };
}

/**
 * A GetRecords record in the shape Lambda hands a function. The SDK leaves the images in DynamoDB JSON
 * (numbers stay strings) but decodes binary values to bytes and the creation time to a Date: Lambda's
 * event has base64 and epoch seconds.
 */
export function lambdaRecord(r: _Record, streamArn: string): DynamoDBRecord {
  const d = r.dynamodb ?? {};
  return {
    eventID: r.eventID,
    eventName: r.eventName,
    eventVersion: r.eventVersion,
    eventSource: r.eventSource,
    awsRegion: r.awsRegion,
    dynamodb: {
      ...(d.ApproximateCreationDateTime ? { ApproximateCreationDateTime: Math.floor(d.ApproximateCreationDateTime.getTime() / 1000) } : {}),
      ...(d.Keys ? { Keys: jsonImage(d.Keys) } : {}),
      ...(d.NewImage ? { NewImage: jsonImage(d.NewImage) } : {}),
      ...(d.OldImage ? { OldImage: jsonImage(d.OldImage) } : {}),
      SequenceNumber: d.SequenceNumber,
      SizeBytes: d.SizeBytes,
      StreamViewType: d.StreamViewType,
    },
    eventSourceARN: streamArn,
    // A TTL deletion's; the Streams API spells its keys capitalized, Lambda's event does not.
    ...(r.userIdentity ? { userIdentity: { type: r.userIdentity.Type, principalId: r.userIdentity.PrincipalId } } : {}),
  };
}

function jsonImage(image: Record<string, SdkAttributeValue>): Record<string, AttributeValue> {
  return Object.fromEntries(Object.entries(image).map(([k, v]) => [k, jsonValue(v)]));
}

function jsonValue(v: SdkAttributeValue): AttributeValue {
  if (v.B) return { B: base64(v.B) };
  if (v.BS) return { BS: v.BS.map(base64) };
  if (v.M) return { M: jsonImage(v.M) };
  if (v.L) return { L: v.L.map(jsonValue) };
  return v as AttributeValue; // S, N, SS, NS, NULL, BOOL: strings and booleans already
}
