/**
 * An alert raised into the outbox (lib/model/alert-item.ts): its detail clipped to what an item holds,
 * with its audit row, so the store writes it as given.
 */
import type { LookoutEventDetail } from "../model/event.js";
import type { AlertItem, Suppression } from "../model/alert-item.js";
import { MAX_STORED_DETAIL_BYTES } from "../model/alert-item.js";
import { keys } from "../model/items.js";
import { alertRow } from "../model/audit-row.js";
import { auditAttributes } from "../model/audit-index.js";
import { clipDetail } from "./publish.js";

/** The outbox item of an alert; suppressed (kept in the audit trail only) when `suppression` is given. */
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
