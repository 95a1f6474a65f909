/**
 * The item kinds of the one table, each with its own key prefix (docs/architecture.md, "Storage").
 * Keys are built only here. Platform values in keys go through keyPart: a long one is hashed, so no id
 * can exceed DynamoDB's key limits (the full value stays a plain attribute of the item).
 */
import { recordRow } from "./audit-row.js";
import { auditAttributes } from "./audit-index.js";
import { instantOr } from "./time.js";
import { keyPart } from "./bounds.js";

/** Epoch seconds after which DynamoDB deletes the item (retention). */
export const TTL_ATTRIBUTE = "expires_at";

/** The TTL of an item written at `atMs` and kept for `retentionMs`, in epoch seconds. */
export const expiresAfter = (atMs: number, retentionMs: number): number => Math.floor((atMs + retentionMs) / 1000);

export type ItemType = "cursor" | "seen" | "record" | "record_ref" | "routine_batch" | "execution" | "service" | "incident" | "alert" | "directory" | "names" | "dispatch" | "feed_loop" | "quarantine";

/** The key prefix of a batch of records that raised nothing (lib/store/routine-batches.ts): an index entry whose pk starts with it is a batch to expand. */
export const BATCH_PREFIX = "RTN#";

/** An item's key as one string, for maps and sets of items. */
export const itemKeyString = (k: { pk?: unknown; sk?: unknown }): string => `${String(k.pk)}\u0000${String(k.sk)}`;

/** Partitions read whole (Query on `pk`): their items' keys are built from them below. */
const partitions = {
  deliveries: (alertId: string) => ({ pk: `DLV#${alertId}` }),
  mutes: () => ({ pk: "MUTES" }),
  heldFor: (receiverId: string) => ({ pk: `HELD#${receiverId}` }),
  actions: (incidentId: string) => ({ pk: `ACTION#${incidentId}` }),
  escalations: (incidentId: string) => ({ pk: `ESC#${incidentId}` }),
  dueFor: (kind: string) => ({ pk: `ESCDUE#${kind}` }),
};

export const keys = {
  /** Per polled source: what was seen, paging state, budget facts. */
  cursor: (sourceKey: string) => ({ pk: `SRC#${keyPart(sourceKey)}`, sk: "CURSOR" }),
  /** A part of a source's seen ids, by the hash of its ids (lib/poll/seen.ts): in the cursor's partition. */
  seenPart: (sourceKey: string, part: string) => ({ pk: `SRC#${keyPart(sourceKey)}`, sk: `SEEN#${part}` }),
  /** A record as read (normalized, redacted): a webhook delivery, a cluster log entry. */
  record: (recordKind: string, recordId: string) => ({ pk: `REC#${recordKind}#${keyPart(recordId)}`, sk: "RECORD" }),
  /** The state machine of one deployment execution. */
  execution: (serviceId: string, executionId: string) => ({ pk: `EXEC#${keyPart(serviceId)}#${keyPart(executionId)}`, sk: "STATE" }),
  /** Per service: whether it is failing, since when, and the alert that opened the incident. */
  service: (serviceId: string) => ({ pk: `SVC#${keyPart(serviceId)}`, sk: "STATE" }),
  /** A webhook target's or a cluster's incident (lib/poll/incidents.ts), by subject. */
  incident: (subject: string) => ({ pk: `INC#${keyPart(subject)}`, sk: "STATE" }),
  /** The outbox: one item per alert, published from the table's stream. */
  alert: (alertId: string) => ({ pk: `ALERT#${keyPart(alertId)}`, sk: "ALERT" }),
  /** What Lookout learned about a service (names, project, environment) from the change feed. */
  directory: (serviceId: string) => ({ pk: `DIR#${keyPart(serviceId)}`, sk: "SERVICE" }),
  /** Per organization: its project and member names from the platform, cached (lib/poll/platform-names.ts). */
  names: (organizationId: string) => ({ pk: `NAMES#${keyPart(organizationId)}`, sk: "ORGANIZATION" }),
  dispatch: (name: string) => ({ pk: `DISPATCH#${name}`, sk: "STATE" }),
  /** The change feed's loop: its lease and the webhooks it read (lib/dispatch/feed-loop.ts). */
  feedLoop: (name: string) => ({ pk: `DISPATCH#${name}`, sk: "FEED_LOOP" }),
  /** A record that could not be stored or an alert that could not be published (lib/alerts/quarantine.ts). */
  quarantine: (id: string, stage: "ingest" | "publish") => ({ pk: `QUAR#${keyPart(id)}`, sk: stage.toUpperCase() }),
  /** A batch of records that raised nothing (lib/store/routine-batches.ts), by its id or its `pk` as a pointer names it. */
  routineBatch: (idOrPk: string) => ({ pk: idOrPk.startsWith(BATCH_PREFIX) ? idOrPk : `${BATCH_PREFIX}${idOrPk}`, sk: "BATCH" }),
  // Notification (lib/store/notify-store.ts; read by the audit trail, lib/store/audit-store.ts).
  /** What one receiver was told of an alert: an alert's deliveries share a partition (`deliveries`). */
  delivery: (alertId: string, receiverId: string) => ({ ...partitions.deliveries(alertId), sk: receiverId }),
  mute: (id: string) => ({ ...partitions.mutes(), sk: id }),
  bucket: (receiverId: string) => ({ pk: `RATE#${receiverId}`, sk: "BUCKET" }),
  held: (receiverId: string, heldAt: string, alertId: string) => ({ ...partitions.heldFor(receiverId), sk: `${heldAt}#${alertId}` }),
  receiver: (receiverId: string) => ({ pk: `RCV#${receiverId}`, sk: "FAILURES" }),
  root: (incidentId: string, receiverId: string) => ({ pk: `ROOT#${incidentId}`, sk: receiverId }),
  ack: (incidentId: string) => ({ pk: `ACK#${incidentId}`, sk: "ACK" }),
  closed: (incidentId: string) => ({ pk: `ACK#${incidentId}`, sk: "CLOSED" }),
  // An incident's clicks in one partition: `lookout explain` reads them with one query.
  action: (incidentId: string, id: string) => ({ ...partitions.actions(incidentId), sk: id }),
  escalation: (incidentId: string, route: string) => ({ ...partitions.escalations(incidentId), sk: route }),
  // Listed by due time, one partition per kind: each notify function queries its own (few items: critical incidents).
  due: (d: { kind: string; due_at: string; incident_id: string; route: string }) => ({ ...partitions.dueFor(d.kind), sk: `${d.due_at}#${d.incident_id}#${d.route}` }),
  ...partitions,
} as const;

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
