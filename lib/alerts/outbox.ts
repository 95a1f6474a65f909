/**
 * The outbox side of the table's stream: which stream records are alerts to publish, and publishing
 * them. Shared by the Lambda handler (functions/publish.ts) and the local stream reader's consumer.
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { LookoutEventDetail } from "./event.js";
import type { EventBus } from "./bus.js";
import { type PublishOptions, type PublishResult, publishAlerts } from "./publish.js";
import { isPendingAlert } from "../store/items.js";

/**
 * What is read of a stream record. Both aws-lambda's `DynamoDBRecord` and the Streams API's `_Record`
 * fit; their attribute-value types differ only in how binaries are typed, which alert items do not use.
 */
export interface StreamRecordLike {
  eventName?: string;
  dynamodb?: { NewImage?: Record<string, unknown>; SequenceNumber?: string };
}

export interface OutboxAlert {
  sequenceNumber: string;
  detail: LookoutEventDetail;
}

/**
 * The alerts to publish: alert items INSERTed as pending. A MODIFY or REMOVE (TTL expiry) never
 * publishes again, and an alert kept quiet at first sight (backfill) stays in the audit trail only;
 * mutes and storm budgets apply later, per receiver, when notifying.
 */
export function selectPendingAlerts(records: readonly StreamRecordLike[]): OutboxAlert[] {
  const out: OutboxAlert[] = [];
  for (const r of records) {
    const image = r.dynamodb?.NewImage;
    const sequenceNumber = r.dynamodb?.SequenceNumber;
    if (r.eventName !== "INSERT" || !image || !sequenceNumber) continue;
    // Cheap check before unmarshalling: most of the stream is records and states, not alerts.
    if ((image.item_type as { S?: string } | undefined)?.S !== "alert") continue;
    const item = unmarshall(image as Record<string, AttributeValue>);
    if (isPendingAlert(item) && item.detail) out.push({ sequenceNumber, detail: item.detail });
  }
  return out;
}

export interface OutboxPublishResult extends PublishResult {
  /** The pending alerts found in the records, in stream order. */
  alerts: OutboxAlert[];
  /** Sequence numbers of the records whose alert was not published, in stream order. */
  failedSequenceNumbers: string[];
}

/** Selects the pending alerts of a batch of stream records and publishes them. */
export async function publishOutbox(
  records: readonly StreamRecordLike[],
  bus: EventBus,
  opts: PublishOptions,
): Promise<OutboxPublishResult> {
  const alerts = selectPendingAlerts(records);
  const result = await publishAlerts(alerts.map((a) => a.detail), bus, opts);
  const failedIds = new Set(result.failed.map((f) => f.id));
  return {
    ...result,
    alerts,
    failedSequenceNumbers: alerts.filter((a) => failedIds.has(String(a.detail.id))).map((a) => a.sequenceNumber),
  };
}
