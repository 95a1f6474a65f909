/**
 * What an EventBridge pipe from an SQS queue to an SQS queue does, for moto_server, which stores pipes but
 * does not run them: it reads the source a batch at a time (a FIFO source in order), evaluates the
 * target's dynamic path parameters (`$.body.…`, on a body that is JSON) and its input template on each
 * record, sends the messages on in that order, and deletes the batch. Only what infra/pipes.yml uses:
 * dotted paths, and an input template that is one whole path (`<$.body>`). `SqsPipe` runs one pipe of
 * the template continuously, for `lookout cloud-local` (docs/cloud-local.md).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { Activity } from "./call-function.js";
import { arnName, bodyValue } from "./mapping.js";

export interface SqsPipeDefinition {
  SourceParameters?: { SqsQueueParameters?: { BatchSize?: number } };
  TargetParameters?: { InputTemplate?: string; SqsQueueParameters?: { MessageGroupId?: string; MessageDeduplicationId?: string } };
}

/** An `AWS::Pipes::Pipe`'s properties, resolved: its source and target are queue ARNs. */
export interface SqsPipeProperties extends SqsPipeDefinition {
  Name?: string;
  Source: string;
  Target: string;
}

function at(record: unknown, path: string): unknown {
  if (!/^\$(\.[A-Za-z0-9_-]+)+$/.test(path)) throw new Error(`${path}: not a path this emulation evaluates`);
  return path.split(".").slice(1).reduce<unknown>((v, k) => (v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined), record);
}

/** A dynamic path parameter is a whole path; anything else is a static value. */
const param = (record: unknown, value: string | undefined): string | undefined => {
  if (value === undefined || !value.startsWith("$.")) return value;
  const v = at(record, value);
  if (typeof v !== "string" || !v) throw new Error(`${value}: no string in the record`);
  return v;
};

/** Moves what the source holds now to the target, batch by batch; returns how many messages it moved. */
export async function runSqsPipe(sqs: SQSClient, pipe: SqsPipeDefinition, sourceUrl: string, targetUrl: string): Promise<number> {
  const t = pipe.TargetParameters ?? {};
  const template = t.InputTemplate;
  const whole = template === undefined ? undefined : /^<(\$[^>]+)>$/.exec(template)?.[1];
  if (template !== undefined && !whole) throw new Error(`${template}: not an input template this emulation evaluates`);
  let moved = 0;
  for (;;) {
    const res = await sqs.send(new ReceiveMessageCommand({
      QueueUrl: sourceUrl, MaxNumberOfMessages: pipe.SourceParameters?.SqsQueueParameters?.BatchSize ?? 10,
      MessageSystemAttributeNames: ["All"], WaitTimeSeconds: 0,
    }));
    const batch = res.Messages ?? [];
    if (!batch.length) return moved;
    for (const m of batch) {
      const record = { messageId: m.MessageId, receiptHandle: m.ReceiptHandle, body: bodyValue(m.Body), attributes: m.Attributes ?? {}, eventSource: "aws:sqs" };
      const out = whole ? at(record, whole) : record;
      await sqs.send(new SendMessageCommand({
        QueueUrl: targetUrl,
        MessageBody: typeof out === "string" ? out : JSON.stringify(out),
        MessageGroupId: param(record, t.SqsQueueParameters?.MessageGroupId),
        MessageDeduplicationId: param(record, t.SqsQueueParameters?.MessageDeduplicationId),
      }));
      moved++;
    }
    await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: sourceUrl, Entries: batch.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }));
  }
}

export interface SqsPipeOptions {
  sqs: SQSClient;
  queueUrlOf: (arn: string) => string;
  activity?: Activity;
  /** Errors of the continuous loop (start); it carries on at the next interval. */
  onError?: (err: unknown) => void;
}

/** One pipe of the template, run now (drain) or continuously (start); runs never overlap, which would mix the source's order. */
export class SqsPipe {
  readonly label: string;
  private chain: Promise<number> = Promise.resolve(0);
  private loop: Promise<void> | undefined;
  private running = false;

  constructor(
    readonly props: SqsPipeProperties,
    private readonly opts: SqsPipeOptions,
  ) {
    this.label = props.Name ?? `${arnName(props.Source)} pipe`;
  }

  /** Moves what the source holds now; returns how many messages it moved. A run asked for during another waits for it. */
  drain(): Promise<number> {
    this.chain = this.chain.catch(() => 0).then(() => this.move());
    return this.chain;
  }

  /** Moves now and then every `intervalMs` after the source was found empty. */
  start(intervalMs = 250): void {
    if (this.running) return;
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        try {
          if (await this.drain()) continue;
        } catch (err) {
          (this.opts.onError ?? ((e) => console.error(`${this.label}:`, e)))(err);
        }
        await sleep(intervalMs);
      }
    })();
  }

  /** Stops the loop and waits for a run in progress to end. */
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await this.chain.catch(() => 0);
  }

  private async move(): Promise<number> {
    const { props, opts } = this;
    const moved = await runSqsPipe(opts.sqs, props, opts.queueUrlOf(props.Source), opts.queueUrlOf(props.Target));
    if (moved) opts.activity?.(`${this.label}: ${moved} message${moved === 1 ? "" : "s"} ${arnName(props.Source)} → ${arnName(props.Target)}`);
    return moved;
  }
}
