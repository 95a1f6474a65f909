/**
 * Quarantine: a record that cannot be stored, or an alert that cannot be published, for a reason no
 * retry fixes, is set aside instead of blocking what comes after it (docs/audit.md, "Quarantine"). It
 * is kept as an item of its own (redacted excerpt, reason, TTL) with an audit row, and reported once as
 * a `Lookout Health` event (check `quarantined`) written to the outbox in the same transaction.
 */
import { ConditionalCheckFailedException, type DynamoDBClient, TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { EventKind } from "../model/event.js";
import { type QuarantinedThing, quarantinedHealth } from "../alerts/health.js";
import { auditAttributes } from "../audit/entries.js";
import { type AuditRow, KINDS, type Ref } from "../audit/model.js";
import { redact } from "../platform/redact.js";
import { keys, newAlertItem } from "./items.js";
import { TTL_ATTRIBUTE } from "./table.js";
import { CLIP_MARKER, prefixWithin } from "./bounds.js";

/** A quarantined thing's excerpt: enough to see what it was, small enough to always store. */
export const MAX_EXCERPT_BYTES = 4 * 1024;

export interface QuarantineEntry extends QuarantinedThing {
  /** The record or alert detail as it was: redacted and clipped before it is kept. */
  content: unknown;
  /** Names it carries, for the audit filters (a service, cluster or webhook). */
  refs?: { service?: Ref; cluster?: Ref; webhook?: Ref; project?: Ref; environment?: Ref };
}

/** The quarantine port: true when the thing was set aside now, false when it already was. */
export interface QuarantinePort {
  quarantine(entry: QuarantineEntry): Promise<boolean>;
}

/**
 * A write DynamoDB refuses for what it is (item or key too large, nesting too deep, an invalid value):
 * writing it again fails again. Throttling, network and conflicts are not this.
 */
export function isUnwritable(err: unknown): boolean {
  const e = err as { name?: string; CancellationReasons?: Array<{ Code?: string }> } | undefined;
  if (e?.name === "ValidationException") return true;
  return err instanceof TransactionCanceledException && (e?.CancellationReasons ?? []).some((r) => r.Code === "ValidationError");
}

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
export function quarantineItems(e: QuarantineEntry, now: Date, expiresAt: number) {
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

export interface DynamoQuarantineOptions {
  client: DynamoDBClient;
  tableName: string;
  retentionMs: number;
  now?: () => Date;
}

export class DynamoQuarantine implements QuarantinePort {
  private readonly doc: DynamoDBDocumentClient;

  constructor(private readonly opts: DynamoQuarantineOptions) {
    this.doc = DynamoDBDocumentClient.from(opts.client, { marshallOptions: { removeUndefinedValues: true } });
  }

  async quarantine(entry: QuarantineEntry): Promise<boolean> {
    const now = this.opts.now?.() ?? new Date();
    const { item, health } = quarantineItems(entry, now, Math.floor((now.getTime() + this.opts.retentionMs) / 1000));
    const TableName = this.opts.tableName;
    try {
      // Both or neither: the health event is raised exactly when the thing is first set aside.
      await this.doc.send(new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName, Item: item, ConditionExpression: "attribute_not_exists(pk)" } },
          { Put: { TableName, Item: health, ConditionExpression: "attribute_not_exists(pk)" } },
        ],
      }));
      return true;
    } catch (err) {
      const conflict = err instanceof ConditionalCheckFailedException ||
        (err instanceof TransactionCanceledException && (err.CancellationReasons ?? []).some((r) => r.Code === "ConditionalCheckFailed"));
      if (conflict) return false;
      throw err;
    }
  }
}
