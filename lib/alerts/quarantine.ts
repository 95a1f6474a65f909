/**
 * What quarantining a record or an alert writes: the quarantine item (redacted excerpt, reason, audit row)
 * and its `Lookout Health` alert, which the quarantine port writes in one transaction.
 */
import { type EventKind, KINDS } from "../model/event.js";
import type { QuarantineEntry, QuarantinePort, QuarantineWrite } from "../model/quarantine.js";
import type { AuditRow } from "../model/audit-row.js";
import { auditAttributes } from "../model/audit-index.js";
import { TTL_ATTRIBUTE, keys } from "../model/items.js";
import { CLIP_MARKER, prefixWithin } from "../model/bounds.js";
import { redact } from "../platform/redact.js";
import { quarantinedHealth } from "./health.js";
import { newAlertItem } from "./outbox-item.js";

/** A quarantined thing's excerpt: enough to see what it was, small enough to always store. */
export const MAX_EXCERPT_BYTES = 4 * 1024;

/** Redacted JSON of the content, clipped to MAX_EXCERPT_BYTES. */
export function excerptOf(content: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(redact(content)) ?? String(content);
  } catch (err) {
    json = `(not JSON: ${(err as Error).message})`;
  }
  return clipText(json, MAX_EXCERPT_BYTES);
}

const clipText = (s: string, maxBytes: number) =>
  Buffer.byteLength(s) <= maxBytes ? s : `${prefixWithin(s, maxBytes - 16)}${CLIP_MARKER}`;

/** The quarantine item and its health alert, as written. */
export function quarantineItems(e: QuarantineEntry, now: Date, expiresAt: number): QuarantineWrite {
  const at = now.toISOString();
  const key = keys.quarantine(e.id, e.stage);
  const health = newAlertItem(quarantinedHealth(e, now), at, expiresAt);
  const row: AuditRow = {
    // An alert of no known kind is Lookout's own problem: listed with health.
    type: "quarantine", id: e.id, kind: KINDS.includes(e.kind as EventKind) ? (e.kind as EventKind) : "health", at, observed_at: at,
    organization: e.organization, stage: e.stage, reason: clipText(e.reason, 1024),
    ...e.refs,
    summary: health.detail.summary.slice(0, 240),
  };
  const item = {
    // Found by its key (the id hashed when long); what is shown is bounded, so the item always fits.
    ...key, item_type: "quarantine", stage: e.stage, kind: clipText(e.kind, 200), source: clipText(e.source, 2048),
    subject_id: clipText(e.id, 8192), organization_id: clipText(e.organization, 2048), reason: clipText(e.reason, 4096), excerpt: excerptOf(e.content),
    health_alert_id: health.alert_id, quarantined_at: at, [TTL_ATTRIBUTE]: expiresAt,
    ...auditAttributes(row, key.pk),
  };
  return { item, health };
}

/** Sets a record or an alert aside through the port, with its health alert; true when it was set aside now. */
export async function setAside(port: QuarantinePort, entry: QuarantineEntry, now: Date): Promise<boolean> {
  return port.quarantine(quarantineItems(entry, now, await port.expiresAt()));
}
