/**
 * An SQS event source mapping, played as Lambda plays it (docs/cloud-local.md), from the template's
 * resolved properties: pollers receive batches of up to BatchSize, hand them to the function in Lambda's
 * SQS event shape, and delete what was handled. A message the function failed (ReportBatchItemFailures)
 * or a batch that failed whole is not deleted: the queue shows it again after its visibility timeout,
 * counting the receive (its redrive policy dead-letters it in the end). moto_server keeps both rules
 * this relies on: a received message is invisible until its visibility timeout ends, and a FIFO group
 * with a message in flight gives out nothing more until that message is deleted or visible again.
 */
import { setTimeout as sleep } from "node:timers/promises";
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { SQSMessageAttributes, SQSRecord, SQSRecordAttributes } from "aws-lambda";
import { compileFilters, type Matcher } from "./event-pattern.js";
import { type Activity, functionNameOf, type Invoke } from "./call-function.js";
import { arnName, arnRegion, base64, batchOutcome, bodyValue, type MappingProperties, reportsItemFailures } from "./mapping.js";

/** BatchSize above 10 is played as 10: one receive a batch (Lambda gathers more over its batching window). */
export interface SqsMappingProperties extends MappingProperties {
  ScalingConfig?: { MaximumConcurrency?: number };
}

export interface SqsMappingOptions {
  invoke: Invoke;
  sqs: SQSClient;
  queueUrlOf: (arn: string) => string;
  activity?: Activity;
  /** Errors of the continuous pollers (start); a poller carries on after a second. */
  onError?: (err: unknown) => void;
}

/**
 * Pollers when the template sets no ScalingConfig. Lambda starts with five and scales up to a thousand
 * and more: five is its start, and enough for one machine.
 */
export const DEFAULT_POLLERS = 5;

/** A long poll short enough that stop() returns promptly. */
const WAIT_SECONDS = 1;

export class SqsMapping {
  readonly label: string;
  readonly pollers: number;
  private readonly queueUrl: string;
  private readonly queueName: string;
  private readonly matches: Matcher;
  private readonly inFlight = new Set<Promise<void>>();
  private loops: Promise<void>[] = [];
  private running = false;
  private visibility: Promise<string> | undefined;

  constructor(
    readonly props: SqsMappingProperties,
    private readonly opts: SqsMappingOptions,
  ) {
    this.label = functionNameOf(props.FunctionName);
    this.pollers = props.ScalingConfig?.MaximumConcurrency ?? DEFAULT_POLLERS;
    this.queueUrl = opts.queueUrlOf(props.EventSourceArn);
    this.queueName = arnName(props.EventSourceArn);
    this.matches = compileFilters(props.FilterCriteria?.Filters);
  }

  /**
   * Hands over what the queue gives out now, with every poller, until a receive finds nothing and no
   * batch is in flight; returns how many messages the function was given. Messages a failure left
   * invisible (and, on a FIFO queue, the rest of their group) are not waited for.
   */
  async drain(): Promise<number> {
    if (this.props.Enabled === false) return 0;
    let handed = 0;
    for (;;) {
      const counts = await Promise.all(Array.from({ length: this.pollers }, () => this.pollUntilEmpty()));
      handed += counts.reduce((a, b) => a + b, 0);
      if (!this.inFlight.size) return handed;
      // The started pollers' batches: one that ends may free a FIFO group whose next messages wait.
      await Promise.allSettled([...this.inFlight]);
    }
  }

  start(): void {
    if (this.props.Enabled === false || this.running) return;
    this.running = true;
    this.loops = Array.from({ length: this.pollers }, () => this.poll());
  }

  /** Stops the pollers; waits for their batches in flight (and a long poll of at most a second). */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    this.loops = [];
  }

  private async poll(): Promise<void> {
    while (this.running) {
      try {
        const batch = await this.receive(WAIT_SECONDS);
        if (batch.length) await this.track(this.handle(batch));
      } catch (err) {
        (this.opts.onError ?? ((e) => console.error(`${this.label} SQS mapping:`, e)))(err);
        await sleep(1_000);
      }
    }
  }

  private async pollUntilEmpty(): Promise<number> {
    let handed = 0;
    for (let batch = await this.receive(0); batch.length; batch = await this.receive(0)) {
      await this.track(this.handle(batch));
      handed += batch.length;
    }
    return handed;
  }

  private track(p: Promise<void>): Promise<void> {
    this.inFlight.add(p);
    return p.finally(() => this.inFlight.delete(p));
  }

  /**
   * One receive at a time across this mapping's pollers: moto_server answers concurrent receives of a
   * FIFO queue without holding a message group between them (two pollers got one incident's two
   * messages at once), which SQS never does. The invocations still run side by side.
   */
  private receiving: Promise<unknown> = Promise.resolve();

  private receive(waitSeconds: number): Promise<Message[]> {
    const turn = this.receiving.then(() => this.receiveNow(waitSeconds));
    this.receiving = turn.catch(() => undefined);
    return turn;
  }

  private async receiveNow(waitSeconds: number): Promise<Message[]> {
    const res = await this.opts.sqs.send(new ReceiveMessageCommand({
      QueueUrl: this.queueUrl,
      MaxNumberOfMessages: Math.min(10, this.props.BatchSize ?? 10),
      WaitTimeSeconds: waitSeconds,
      MessageSystemAttributeNames: ["All"],
      MessageAttributeNames: ["All"],
    }));
    return res.Messages ?? [];
  }

  private async handle(messages: Message[]): Promise<void> {
    const records = messages.map((m) => sqsRecord(m, this.props.EventSourceArn));
    // Lambda matches a JSON body as its value, and deletes what no filter matches.
    const kept = records.filter((r) => this.matches({ ...r, body: bodyValue(r.body) }));
    const dropped = records.filter((r) => !kept.includes(r));
    if (!kept.length) return this.remove(dropped);

    const inv = await this.opts.invoke(this.props.FunctionName, { Records: kept });
    const out = batchOutcome(inv, new Set(kept.map((r) => r.messageId)), reportsItemFailures(this.props));
    const what = `${this.label} ← SQS batch of ${kept.length} from ${this.queueName}`;
    if (out.kind === "ok") {
      await this.remove(records);
      this.say(`${what} (ok)`);
      return;
    }
    const failed = out.kind === "partial" ? new Set(out.failed) : new Set(kept.map((r) => r.messageId));
    await this.remove(records.filter((r) => !failed.has(r.messageId)));
    const why = out.kind === "partial" ? `${failed.size} failed` : out.kind === "error" ? `${out.errorType}: ${out.errorMessage}` : out.why;
    this.say(`${what}: ${why}, back after the visibility timeout (${await this.visibilityTimeout()} s)`);
  }

  private async remove(records: SQSRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += 10) {
      const chunk = records.slice(i, i + 10);
      const res = await this.opts.sqs.send(new DeleteMessageBatchCommand({
        QueueUrl: this.queueUrl,
        Entries: chunk.map((r, j) => ({ Id: String(j), ReceiptHandle: r.receiptHandle })),
      }));
      // A receipt that expired mid-batch: the message comes back and is handed over again.
      for (const f of res.Failed ?? []) this.say(`${this.label}: ${chunk[Number(f.Id)]?.messageId} not deleted from ${this.queueName} (${f.Code}), it comes back`);
    }
  }

  private visibilityTimeout(): Promise<string> {
    this.visibility ??= this.opts.sqs
      .send(new GetQueueAttributesCommand({ QueueUrl: this.queueUrl, AttributeNames: ["VisibilityTimeout"] }))
      .then((r) => r.Attributes?.VisibilityTimeout ?? "?");
    return this.visibility;
  }

  private say(line: string): void {
    this.opts.activity?.(line);
  }
}

/**
 * A received message in the shape Lambda hands a function: every system attribute SQS gave (on a FIFO
 * queue MessageGroupId, MessageDeduplicationId and SequenceNumber, which Powertools' FIFO processor
 * reads), message attributes in Lambda's lower-case form with binary values base64.
 */
export function sqsRecord(m: Message, queueArn: string): SQSRecord {
  return {
    messageId: m.MessageId!,
    receiptHandle: m.ReceiptHandle!,
    body: m.Body ?? "",
    attributes: (m.Attributes ?? {}) as unknown as SQSRecordAttributes,
    messageAttributes: lambdaMessageAttributes(m.MessageAttributes),
    md5OfBody: m.MD5OfBody ?? "",
    ...(m.MD5OfMessageAttributes ? { md5OfMessageAttributes: m.MD5OfMessageAttributes } : {}),
    eventSource: "aws:sqs",
    eventSourceARN: queueArn,
    awsRegion: arnRegion(queueArn),
  };
}

function lambdaMessageAttributes(attrs: Record<string, MessageAttributeValue> | undefined): SQSMessageAttributes {
  return Object.fromEntries(Object.entries(attrs ?? {}).map(([name, v]) => [name, {
    ...(v.StringValue !== undefined ? { stringValue: v.StringValue } : {}),
    ...(v.BinaryValue !== undefined ? { binaryValue: base64(v.BinaryValue) } : {}),
    stringListValues: v.StringListValues ?? [],
    binaryListValues: (v.BinaryListValues ?? []).map(base64),
    dataType: v.DataType as SQSMessageAttributes[string]["dataType"],
  }]));
}
