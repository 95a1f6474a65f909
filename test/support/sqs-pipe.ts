/**
 * What an EventBridge pipe from an SQS queue to an SQS queue does, for moto_server, which stores pipes but
 * does not run them: it reads the source a batch at a time (a FIFO source in order), evaluates the
 * target's dynamic path parameters (`$.body.…`, on a body that is JSON) and its input template on each
 * record, sends the messages on in that order, and deletes the batch. Only what infra/pipes.yml uses:
 * dotted paths, and an input template that is one whole path (`<$.body>`).
 */
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";

export interface SqsPipeDefinition {
  SourceParameters?: { SqsQueueParameters?: { BatchSize?: number } };
  TargetParameters?: { InputTemplate?: string; SqsQueueParameters?: { MessageGroupId?: string; MessageDeduplicationId?: string } };
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
      let body: unknown = m.Body;
      try {
        body = JSON.parse(m.Body!);
      } catch {
        // a body that is not JSON stays a string
      }
      const record = { messageId: m.MessageId, receiptHandle: m.ReceiptHandle, body, attributes: m.Attributes ?? {}, eventSource: "aws:sqs" };
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
