/**
 * The item kinds of the one table, each with its own key prefix (DESIGN.md, "Storage").
 * Keys are built only here. Platform values in keys go through keyPart: a long one is hashed, so no id
 * can exceed DynamoDB's key limits (the full value stays a plain attribute of the item).
 */
import type { LookoutEventDetail } from "../model/event.js";
import type { AuditRow } from "../audit/model.js";
import { alertRow, auditAttributes, recordRow } from "../audit/entries.js";
import { instantOr } from "../model/time.js";
import { keyPart } from "./bounds.js";
import { clipDetail } from "../alerts/publish.js";

export type ItemType = "cursor" | "record" | "execution" | "service" | "alert" | "directory" | "dispatch" | "quarantine";

export const keys = {
  /** Per polled source: what was seen, paging state, budget facts. */
  cursor: (sourceKey: string) => ({ pk: `SRC#${keyPart(sourceKey)}`, sk: "CURSOR" }),
  /** A record as read (normalized, redacted): a webhook delivery, a cluster log entry. */
  record: (recordKind: string, recordId: string) => ({ pk: `REC#${recordKind}#${keyPart(recordId)}`, sk: "RECORD" }),
  /** The state machine of one deployment execution. */
  execution: (serviceId: string, executionId: string) => ({ pk: `EXEC#${keyPart(serviceId)}#${keyPart(executionId)}`, sk: "STATE" }),
  /** Per service: whether it is failing, since when, and the alert that opened the incident. */
  service: (serviceId: string) => ({ pk: `SVC#${keyPart(serviceId)}`, sk: "STATE" }),
  /** The outbox: one item per alert, published from the table's stream. */
  alert: (alertId: string) => ({ pk: `ALERT#${keyPart(alertId)}`, sk: "ALERT" }),
  /** What Lookout learned about a service (names, project, environment) from the change feed. */
  directory: (serviceId: string) => ({ pk: `DIR#${keyPart(serviceId)}`, sk: "SERVICE" }),
  dispatch: (name: string) => ({ pk: `DISPATCH#${name}`, sk: "STATE" }),
  /** A record that could not be stored or an alert that could not be published (lib/store/quarantine.ts). */
  quarantine: (id: string, stage: "ingest" | "publish") => ({ pk: `QUAR#${keyPart(id)}`, sk: stage.toUpperCase() }),
} as const;

export type AlertState = "pending" | "suppressed";

export type SuppressionReason = "backfill" | "mute" | "storm";

export interface Suppression {
  reason: SuppressionReason;
  /** Why, for people: "older than the 15m backfill window at first sight", "muted by …". */
  detail: string;
}

/**
 * What an audited item (record, execution, alert) carries for the audit indexes: the row and one key
 * per index it is in (lib/audit/entries.ts, docs/audit.md).
 */
export interface AuditAttributes {
  audit?: AuditRow;
  ix_at?: string;
  [indexKey: `ix_${string}`]: string | undefined;
}

/** An outbox item. The publisher publishes items whose state is `pending` when they are inserted. */
export interface AlertItem extends AuditAttributes {
  pk: string;
  sk: "ALERT";
  item_type: "alert";
  alert_id: string;
  state: AlertState;
  suppression?: Suppression;
  detail: LookoutEventDetail;
  /** ISO time the item was written. */
  created_at: string;
  expires_at: number;
}

export const isPendingAlert = (item: Record<string, unknown> | undefined): item is AlertItem & Record<string, unknown> =>
  !!item && item.item_type === "alert" && item.state === "pending" && typeof item.detail === "object" && item.detail !== null;

/** An alert's detail as stored: well under the 400 KB item limit, and so under EventBridge's 256 KB. */
export const MAX_STORED_DETAIL_BYTES = 128 * 1024;

export function newAlertItem(
  detailIn: LookoutEventDetail,
  createdAt: string,
  expiresAt: number,
  suppression?: Suppression,
): AlertItem {
  const detail = clipDetail(detailIn, MAX_STORED_DETAIL_BYTES);
  const key = keys.alert(detail.id);
  return {
    ...key,
    sk: "ALERT",
    item_type: "alert",
    alert_id: detail.id,
    state: suppression ? "suppressed" : "pending",
    ...(suppression ? { suppression } : {}),
    detail,
    created_at: createdAt,
    expires_at: expiresAt,
    ...auditAttributes(alertRow(detail, suppression), key.pk),
  };
}

/** The stored form of a record read from the platform (deliveries, cluster log entries). */
export function recordItem(
  record: { record_kind: string; id: string; organization_id: string },
  occurredAt: string | undefined,
  observedAt: string,
): Record<string, unknown> & { pk: string; sk: string } {
  const key = keys.record(record.record_kind, record.id);
  return {
    ...key,
    item_type: "record",
    record_kind: record.record_kind,
    organization_id: record.organization_id,
    // An instant (lib/model/time.ts); the platform's own text stays in `record`.
    occurred_at: instantOr(occurredAt, observedAt),
    observed_at: observedAt,
    record,
    ...auditAttributes(recordRow(record, occurredAt ?? observedAt, observedAt), key.pk),
  };
}
