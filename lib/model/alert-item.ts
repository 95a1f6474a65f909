/** The outbox item of an alert: what the publisher reads from the stream and the audit trail lists. */
import type { LookoutEventDetail } from "./event.js";
import type { AuditAttributes } from "./audit-index.js";

export type AlertState = "pending" | "suppressed";

/**
 * Why an alert (or one delivery of it) was kept quiet: `repeat` — the same error again within an
 * incident, counted in its thread where there is one, not re-posted; `not_told` — an amendment for a
 * receiver that never got the alert it amends.
 */
export type SuppressionReason = "backfill" | "mute" | "storm" | "repeat" | "not_told";

export interface Suppression {
  reason: SuppressionReason;
  /** Why, for people: "older than the 15m backfill window at first sight", "muted by …". */
  detail: string;
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
