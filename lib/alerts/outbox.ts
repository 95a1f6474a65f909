/**
 * The outbox side of the table's stream: which stream records are alerts to publish, and publishing
 * them. Shared by the Lambda handler (functions/publish.ts) and the local stream reader's consumer.
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { isClosing, type LookoutEventDetail } from "../model/event.js";
import type { EventBus } from "./bus.js";
import { type PublishFailure, type PublishOptions, type PublishResult, isAlertAtFault, publishAlerts } from "./publish.js";
import { isPendingAlert } from "../model/alert-item.js";
import type { QuarantinePort } from "../model/quarantine.js";
import { setAside } from "./quarantine.js";

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

/**
 * A batch's alerts in the order they happened, which is the order a receiver's thread shows them: by
 * when they occurred, then the failure count; an amendment right after the alert it amends, a close
 * after the failures of its moment; ties keep the stream's order. The stream has them in the order
 * they were written, and a poll writes a page as the platform lists it, newest first.
 */
export function inOrderOfHappening(details: readonly LookoutEventDetail[]): LookoutEventDetail[] {
  const byId = new Map(details.map((d) => [d.id, d]));
  const at = (d: LookoutEventDetail) => Date.parse(d.occurred_at) || 0;
  const failures = (d: LookoutEventDetail) => d.incident?.failures ?? 0;
  const key = (d: LookoutEventDetail): [number, number, number] => {
    const amended = d.amends ? byId.get(d.amends) : undefined;
    if (amended) return [at(amended), failures(amended), 1];
    return [at(d), failures(d), isClosing(d.transition) ? 2 : 0];
  };
  return details
    .map((d, i) => ({ k: key(d), i, d }))
    .sort((a, b) => a.k[0] - b.k[0] || a.k[1] - b.k[1] || a.k[2] - b.k[2] || a.i - b.i)
    .map((x) => x.d);
}

export interface OutboxPublishResult extends PublishResult {
  /** The pending alerts found in the records, in stream order. */
  alerts: OutboxAlert[];
  /** Alerts no retry can publish, set aside (with the quarantine port): they no longer hold the batch. */
  quarantined: PublishFailure[];
  /** Sequence numbers of the records whose alert was not published nor quarantined, in stream order: read them again. */
  failedSequenceNumbers: string[];
}

/**
 * Selects the pending alerts of a batch of stream records and publishes them. With a quarantine port,
 * an alert that fails for a reason of its own (isAlertAtFault) is quarantined, so that only passing
 * failures make the batch be read again; without one, every failure does.
 */
export async function publishOutbox(
  records: readonly StreamRecordLike[],
  bus: EventBus,
  opts: PublishOptions,
  quarantine?: QuarantinePort,
): Promise<OutboxPublishResult> {
  const alerts = selectPendingAlerts(records);
  const result = await publishAlerts(inOrderOfHappening(alerts.map((a) => a.detail)), bus, opts);
  const detailOf = new Map(alerts.map((a) => [String(a.detail.id), a.detail]));
  // A call refused as invalid names no entry: send its alerts one by one to find the one at fault.
  const refused = result.failed.filter((f) => f.errorCode === "ValidationException");
  if (quarantine && refused.length > 1) {
    result.failed = result.failed.filter((f) => f.errorCode !== "ValidationException");
    for (const f of refused) {
      const alone = await publishAlerts([detailOf.get(f.id)!], bus, opts);
      result.published.push(...alone.published);
      result.clipped.push(...alone.clipped);
      result.failed.push(...alone.failed);
    }
  }
  const quarantined: PublishFailure[] = [];
  if (quarantine) {
    for (const f of result.failed.filter((x) => isAlertAtFault(x.errorCode))) {
      const d = detailOf.get(f.id) as Partial<LookoutEventDetail> | undefined;
      await setAside(quarantine, {
        stage: "publish", kind: String(d?.kind ?? "unknown"), id: f.id, source: "outbox",
        organization: String(d?.organization?.id ?? "unknown"), reason: `EventBridge: ${f.errorCode}: ${f.errorMessage}`, content: d,
        refs: { ...(d?.service?.id ? { service: { id: d.service.id } } : {}), ...(d?.cluster?.id ? { cluster: { id: d.cluster.id } } : {}), ...(d?.webhook?.id ? { webhook: { id: d.webhook.id } } : {}) },
      }, new Date());
      quarantined.push(f);
    }
  }
  const retryIds = new Set(result.failed.filter((f) => !quarantined.includes(f)).map((f) => f.id));
  return {
    ...result,
    alerts,
    quarantined,
    failedSequenceNumbers: alerts.filter((a) => retryIds.has(String(a.detail.id))).map((a) => a.sequenceNumber),
  };
}
