/**
 * The NotifyStore port (lib/model/notify-store.ts) on the DynamoDB table: conditional writes make claims,
 * settlements and token buckets safe between workers; every item carries the table's TTL.
 */
import { ConditionalCheckFailedException, type DynamoDBClient, TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import type { LookoutEventDetail } from "../model/event.js";
import type {
  ClaimInit,
  ClaimResult,
  DeliveryRecord,
  DeliverySettlement,
  DueEscalation,
  Escalation,
  HeldAlert,
  IncidentAcknowledgement,
  IncidentActionRecord,
  IncidentClosed,
  IncidentRoot,
  Mute,
  NotifyStore,
  ReceiverFailures,
  ReceiverKind,
  SuppressedDelivery,
} from "../model/notify-store.js";
import { TTL_ATTRIBUTE, keys } from "../model/items.js";

import type { AuditRow } from "../model/audit-row.js";
import { auditAttributes } from "../model/audit-index.js";

export interface NotifyStoreOptions {
  client: DynamoDBClient;
  tableName: string;
  retentionMs: number;
  now?: () => Date;
}

/** An item without the table's own attributes: the record the port speaks of. */
function stripKeys<T = DeliveryRecord>(item: Record<string, unknown> | undefined): T {
  const { pk: _pk, sk: _sk, item_type: _t, [TTL_ATTRIBUTE]: _ttl, ...rest } = item ?? {};
  return rest as unknown as T;
}

/** A click as recorded, without the audit attributes its item carries. */
const actionOf = (item: Record<string, unknown>): IncidentActionRecord => {
  const { id, kind, incident_id, alert_id, by, at, channel, message_ts, outcome } = item as unknown as IncidentActionRecord;
  return { id, kind, incident_id, alert_id, by, at, channel, message_ts, ...(outcome ? { outcome } : {}) };
};

const conditionFailed = (err: unknown) => err instanceof ConditionalCheckFailedException;

/** A conditional write: whether its condition held (and it was written); any other error is thrown. */
async function writtenIf(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (err) {
    if (conditionFailed(err)) return false;
    throw err;
  }
}

/** A bucket's tokens at `now`: refilled since it was written, never past the burst; full when it has no item. */
const tokensAt = (item: Record<string, unknown> | undefined, now: number, perSecond: number, burst: number) =>
  item ? Math.min(burst, (item.tokens as number) + ((now - (item.at as number)) / 1000) * perSecond) : burst;

export class DynamoNotifyStore implements NotifyStore {
  private readonly doc: DynamoDBDocumentClient;
  private readonly table: string;

  constructor(private readonly opts: NotifyStoreOptions) {
    this.doc = DynamoDBDocumentClient.from(opts.client, { marshallOptions: { removeUndefinedValues: true } });
    this.table = opts.tableName;
  }

  private now(): Date {
    return this.opts.now?.() ?? new Date();
  }

  private expiresAt(from = this.now().getTime()): number {
    return Math.floor((from + this.opts.retentionMs) / 1000);
  }

  async getDelivery(alertId: string, receiverId: string): Promise<DeliveryRecord | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.delivery(alertId, receiverId), ConsistentRead: true }));
    return Item ? stripKeys(Item) : undefined;
  }

  async claim(alertId: string, receiverId: string, init: ClaimInit, leaseMs: number): Promise<ClaimResult> {
    const now = this.now();
    try {
      const res = await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: keys.delivery(alertId, receiverId),
          UpdateExpression:
            `SET #state = :sending, lease_until = :lease, attempts = if_not_exists(attempts, :zero) + :one, first_attempt_at = if_not_exists(first_attempt_at, :now), alert_id = :a, receiver_id = :r, receiver_label = :label, #route = :route, updated_at = :now, item_type = :type, #ttl = :ttl${init.escalation ? ", escalation = :esc" : ""}${init.onlooker ? ", onlooker = :onlooker" : ""}`,
          ConditionExpression: "attribute_not_exists(pk) OR #state = :failed OR (#state = :sending AND lease_until < :nowMs)",
          ExpressionAttributeNames: { "#state": "state", "#route": "route", "#ttl": TTL_ATTRIBUTE },
          ExpressionAttributeValues: {
            ":sending": "sending", ":failed": "failed", ":lease": now.getTime() + leaseMs, ":nowMs": now.getTime(),
            ":zero": 0, ":one": 1, ":a": alertId, ":r": receiverId, ":label": init.receiver_label, ":route": init.route,
            ":now": now.toISOString(), ":type": "delivery", ":ttl": this.expiresAt(), ...(init.escalation ? { ":esc": init.escalation } : {}),
            ...(init.onlooker ? { ":onlooker": true } : {}),
          },
          ReturnValues: "ALL_NEW",
        }),
      );
      return { claimed: true, record: stripKeys(res.Attributes) };
    } catch (err) {
      if (!conditionFailed(err)) throw err;
      const record = await this.getDelivery(alertId, receiverId);
      return { claimed: false, record: record! };
    }
  }

  async renewLease(held: DeliveryRecord, leaseMs: number): Promise<boolean> {
    return writtenIf(this.doc.send(new UpdateCommand({
      TableName: this.table,
      Key: keys.delivery(held.alert_id, held.receiver_id),
      UpdateExpression: "SET lease_until = :lease",
      ConditionExpression: "#state = :sending AND attempts = :attempts",
      ExpressionAttributeNames: { "#state": "state" },
      ExpressionAttributeValues: { ":lease": this.now().getTime() + leaseMs, ":sending": "sending", ":attempts": held.attempts },
    })));
  }

  async settle(held: DeliveryRecord, outcome: DeliverySettlement): Promise<boolean> {
    const next: DeliveryRecord = { ...held, ...outcome, updated_at: this.now().toISOString() };
    delete next.lease_until;
    return writtenIf(this.doc.send(
      new PutCommand({
        TableName: this.table,
        Item: { ...keys.delivery(held.alert_id, held.receiver_id), item_type: "delivery", ...next, [TTL_ATTRIBUTE]: this.expiresAt() },
        // A missing record is written whole; a present one only if it is still the one we hold.
        ConditionExpression: "attribute_not_exists(pk) OR (#state = :state AND attempts = :attempts)",
        ExpressionAttributeNames: { "#state": "state" },
        ExpressionAttributeValues: { ":state": held.state, ":attempts": held.attempts },
      }),
    ));
  }

  async recordSuppressed(alertId: string, receiverId: string, record: SuppressedDelivery): Promise<boolean> {
    return writtenIf(this.doc.send(
      new PutCommand({
        TableName: this.table,
        Item: {
          ...keys.delivery(alertId, receiverId), item_type: "delivery", alert_id: alertId, receiver_id: receiverId,
          attempts: 0, ...record, updated_at: this.now().toISOString(), [TTL_ATTRIBUTE]: this.expiresAt(),
        },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    ));
  }

  async deliveriesOf(alertId: string): Promise<DeliveryRecord[]> {
    const res = await this.doc.send(new QueryCommand({
      TableName: this.table, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": keys.deliveries(alertId).pk }, ConsistentRead: true,
    }));
    return (res.Items ?? []).map(stripKeys);
  }

  // ---- Mutes --------------------------------------------------------------------------------------

  async putMute(mute: Mute): Promise<void> {
    await this.doc.send(new PutCommand({
      TableName: this.table,
      // Kept past its end for the audit trail ("muted by whom, why"), then expired with everything else.
      Item: { ...keys.mute(mute.id), item_type: "mute", mute, [TTL_ATTRIBUTE]: this.expiresAt(Date.parse(mute.until)) },
    }));
  }

  async listMutes(opts: { consistent?: boolean } = {}): Promise<Mute[]> {
    // Consistent for a close: a mute written just before it must be read by the close that lifts it.
    return (await this.partition(keys.mutes().pk, opts.consistent ?? false)).map((item) => item.mute as Mute);
  }

  /** Every item of a partition, page after page. */
  private async partition(pk: string, consistent = false): Promise<Array<Record<string, unknown>>> {
    const out: Array<Record<string, unknown>> = [];
    let start: Record<string, unknown> | undefined;
    do {
      const res = await this.doc.send(new QueryCommand({
        TableName: this.table, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": pk }, ExclusiveStartKey: start, ConsistentRead: consistent,
      }));
      out.push(...(res.Items ?? []));
      start = res.LastEvaluatedKey;
    } while (start);
    return out;
  }

  async getMute(id: string): Promise<Mute | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.mute(id), ConsistentRead: true }));
    return Item?.mute as Mute | undefined;
  }

  // ---- Storm control ------------------------------------------------------------------------------

  async peekTokens(receiverId: string, perSecond: number, burst: number): Promise<number> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.bucket(receiverId), ConsistentRead: true }));
    return tokensAt(Item, this.now().getTime(), perSecond, burst);
  }

  /** Read, then written on the version read: a worker that lost the race reads again (five times at most). */
  async takeToken(receiverId: string, perSecond: number, burst: number): Promise<boolean> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const now = this.now().getTime();
      const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.bucket(receiverId), ConsistentRead: true }));
      const tokens = tokensAt(Item, now, perSecond, burst);
      if (tokens < 1) return false;
      try {
        await this.doc.send(new PutCommand({
          TableName: this.table,
          // Live state: its TTL is refreshed on each write, so a receiver no longer used leaves no item behind.
          Item: {
            ...keys.bucket(receiverId), item_type: "bucket", tokens: tokens - 1, at: now, version: ((Item?.version as number) ?? 0) + 1,
            [TTL_ATTRIBUTE]: this.expiresAt(now),
          },
          ConditionExpression: Item ? "version = :v" : "attribute_not_exists(pk)",
          ExpressionAttributeValues: Item ? { ":v": Item.version } : undefined,
        }));
        return true;
      } catch (err) {
        if (!conditionFailed(err)) throw err;
      }
    }
    return false;
  }

  async hold(held: HeldAlert): Promise<void> {
    await writtenIf(this.doc.send(new PutCommand({
      TableName: this.table,
      Item: { ...keys.held(held.receiver_id, held.held_at, held.detail.id), item_type: "held", ...held, [TTL_ATTRIBUTE]: this.expiresAt() },
      // Held already: kept as it is, with the digest that may carry it.
      ConditionExpression: "attribute_not_exists(pk)",
    })));
  }

  async markHeld(held: HeldAlert, digestId: string): Promise<boolean> {
    return writtenIf(this.doc.send(new UpdateCommand({
      TableName: this.table,
      Key: keys.held(held.receiver_id, held.held_at, held.detail.id),
      UpdateExpression: "SET digest_id = :d",
      ConditionExpression: "attribute_exists(pk) AND (attribute_not_exists(digest_id) OR digest_id = :d)",
      ExpressionAttributeValues: { ":d": digestId },
    })));
  }

  async heldFor(receiverId: string, limit?: number): Promise<HeldAlert[]> {
    const out: HeldAlert[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const res = await this.doc.send(new QueryCommand({
        TableName: this.table, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": keys.heldFor(receiverId).pk }, ConsistentRead: true, ExclusiveStartKey: start,
        ...(limit ? { Limit: limit - out.length } : {}),
      }));
      out.push(...(res.Items ?? []).map((item) => stripKeys<HeldAlert>(item)));
      start = res.LastEvaluatedKey;
    } while (start && (!limit || out.length < limit));
    return out;
  }

  async release(held: HeldAlert): Promise<void> {
    await this.doc.send(new DeleteCommand({ TableName: this.table, Key: keys.held(held.receiver_id, held.held_at, held.detail.id) }));
  }

  // ---- Receiver health ----------------------------------------------------------------------------

  async receiverFailed(receiverId: string, label: string, error: string): Promise<ReceiverFailures> {
    const now = this.now();
    const res = await this.doc.send(new UpdateCommand({
      TableName: this.table,
      Key: keys.receiver(receiverId),
      UpdateExpression:
        "SET consecutive_failures = if_not_exists(consecutive_failures, :zero) + :one, since = if_not_exists(since, :now), last_error = :error, receiver_id = :r, receiver_label = :label, updated_at = :now, item_type = :type, #ttl = :ttl",
      ExpressionAttributeNames: { "#ttl": TTL_ATTRIBUTE },
      ExpressionAttributeValues: {
        ":zero": 0, ":one": 1, ":now": now.toISOString(), ":error": error, ":r": receiverId, ":label": label,
        ":type": "receiver_failures", ":ttl": this.expiresAt(),
      },
      ReturnValues: "ALL_NEW",
    }));
    return stripKeys<ReceiverFailures>(res.Attributes);
  }

  async receiverSucceeded(receiverId: string): Promise<void> {
    await writtenIf(this.doc.send(new DeleteCommand({ TableName: this.table, Key: keys.receiver(receiverId), ConditionExpression: "attribute_exists(pk)" })));
  }

  async receiverFailures(receiverId: string): Promise<ReceiverFailures | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.receiver(receiverId), ConsistentRead: true }));
    return Item ? stripKeys<ReceiverFailures>(Item) : undefined;
  }

  // ---- Incident roots -----------------------------------------------------------------------------

  async getRoot(incidentId: string, receiverId: string): Promise<IncidentRoot | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.root(incidentId, receiverId), ConsistentRead: true }));
    return Item ? stripKeys<IncidentRoot>(Item) : undefined;
  }

  putRoot(root: IncidentRoot): Promise<boolean> {
    return this.putOnce(keys.root(root.incident_id, root.receiver_id), "incident_root", root);
  }

  // ---- Actions from Slack (docs/actions.md) ------------------------------------------------------------

  async acknowledge(ack: IncidentAcknowledgement): Promise<{ ack: IncidentAcknowledgement; first: boolean }> {
    if (await this.putOnce(keys.ack(ack.incident_id), "incident_ack", ack)) return { ack, first: true };
    return { ack: (await this.getAcknowledgement(ack.incident_id)) ?? ack, first: false };
  }

  async getAcknowledgement(incidentId: string): Promise<IncidentAcknowledgement | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.ack(incidentId), ConsistentRead: true }));
    return Item ? stripKeys<IncidentAcknowledgement>(Item) : undefined;
  }

  recordAction(action: IncidentActionRecord, row?: AuditRow): Promise<boolean> {
    const key = keys.action(action.incident_id, action.id);
    // An incident's clicks share a partition: the sort key takes the whole key, so it stays unique.
    return this.putOnce(key, "incident_action", action, row ? auditAttributes(row, `${key.pk}#${key.sk}`) : {});
  }

  async getAction(incidentId: string, id: string): Promise<IncidentActionRecord | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.action(incidentId, id), ConsistentRead: true }));
    return Item ? actionOf(Item) : undefined;
  }

  markClosed(closed: IncidentClosed): Promise<boolean> {
    return this.putOnce(keys.closed(closed.incident_id), "incident_closed", closed);
  }

  async getClosed(incidentId: string): Promise<IncidentClosed | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.closed(incidentId), ConsistentRead: true }));
    return Item ? stripKeys<IncidentClosed>(Item) : undefined;
  }

  async actionsOn(incidentId: string): Promise<IncidentActionRecord[]> {
    const items = await this.partition(keys.actions(incidentId).pk, true);
    return items.map(actionOf).sort((a, b) => a.at.localeCompare(b.at));
  }

  // ---- Escalations (docs/actions.md, "Escalation") ----------------------------------------------------

  async scheduleEscalation(escalation: Escalation): Promise<Escalation> {
    // Read first: every follow-up of a scheduled incident asks again, and most find it there.
    const kept = await this.getEscalation(escalation.incident_id, escalation.route);
    if (kept) return kept;
    const e = escalation;
    const due = (kind: Escalation["kinds"][number]): DueEscalation => ({ kind, due_at: e.due_at, incident_id: e.incident_id, route: e.route });
    try {
      // In one transaction: an escalation is never written without the due entries its tick looks for.
      await this.doc.send(new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: this.table, Item: { ...keys.escalation(e.incident_id, e.route), item_type: "escalation", ...e, [TTL_ATTRIBUTE]: this.expiresAt() }, ConditionExpression: "attribute_not_exists(pk)" } },
          ...e.kinds.map((kind) => ({ Put: { TableName: this.table, Item: { ...keys.due(due(kind)), item_type: "escalation_due", ...due(kind), [TTL_ATTRIBUTE]: this.expiresAt() } } })),
        ],
      }));
      return e;
    } catch (err) {
      // Another worker scheduled it first (the other kind's notify function): the first stands.
      if (!(err instanceof TransactionCanceledException) || !(err.CancellationReasons ?? []).some((r) => r.Code === "ConditionalCheckFailed" || r.Code === "TransactionConflict")) throw err;
      return (await this.getEscalation(e.incident_id, e.route)) ?? e;
    }
  }

  async getEscalation(incidentId: string, route: string): Promise<Escalation | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.escalation(incidentId, route), ConsistentRead: true }));
    return Item ? stripKeys<Escalation>(Item) : undefined;
  }

  async escalationsOf(incidentId: string): Promise<Escalation[]> {
    return (await this.partition(keys.escalations(incidentId).pk, true)).map((item) => stripKeys<Escalation>(item));
  }

  async dueEscalations(kind: ReceiverKind, until: string, limit?: number): Promise<DueEscalation[]> {
    const out: DueEscalation[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const res = await this.doc.send(new QueryCommand({
        TableName: this.table,
        // `<due at>#…` sorts by time: every entry due at or before `until` (`~` sorts after any id character).
        KeyConditionExpression: "pk = :pk AND sk <= :until",
        ExpressionAttributeValues: { ":pk": keys.dueFor(kind).pk, ":until": `${until}~` },
        ConsistentRead: true, ExclusiveStartKey: start, ...(limit ? { Limit: limit - out.length } : {}),
      }));
      out.push(...(res.Items ?? []).map((item) => stripKeys<DueEscalation>(item)));
      start = res.LastEvaluatedKey;
    } while (start && (!limit || out.length < limit));
    return out;
  }

  async settleEscalation(incidentId: string, route: string, next: Required<Pick<Escalation, "state" | "settled_at">> & Pick<Escalation, "reason">): Promise<boolean> {
    return writtenIf(this.doc.send(new UpdateCommand({
      TableName: this.table,
      Key: keys.escalation(incidentId, route),
      UpdateExpression: `SET #state = :state, settled_at = :at${next.reason ? ", reason = :reason" : ""}`,
      // Once: two ticks racing, or a tick and a close, leave pending one way only.
      ConditionExpression: "#state = :pending",
      ExpressionAttributeNames: { "#state": "state" },
      ExpressionAttributeValues: { ":state": next.state, ":at": next.settled_at, ":pending": "pending", ...(next.reason ? { ":reason": next.reason } : {}) },
    })));
  }

  async releaseDueEscalation(due: DueEscalation): Promise<void> {
    await this.doc.send(new DeleteCommand({ TableName: this.table, Key: keys.due(due) }));
  }

  /** Writes an item unless one is there: false when one was (the first writer keeps it). */
  private async putOnce(key: { pk: string; sk: string }, itemType: string, fields: object, extra: object = {}): Promise<boolean> {
    return writtenIf(this.doc.send(new PutCommand({
      TableName: this.table,
      Item: { ...key, item_type: itemType, ...fields, ...extra, [TTL_ATTRIBUTE]: this.expiresAt() },
      ConditionExpression: "attribute_not_exists(pk)",
    })));
  }

  /** Read from the outbox's alert item (lib/model/items.ts). */
  async getRaised(alertId: string): Promise<{ detail: LookoutEventDetail; quiet: boolean } | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.alert(alertId), ProjectionExpression: "detail, #state", ExpressionAttributeNames: { "#state": "state" } }));
    return Item?.detail ? { detail: Item.detail as LookoutEventDetail, quiet: Item.state === "suppressed" } : undefined;
  }

  async getAlert(alertId: string): Promise<LookoutEventDetail | undefined> {
    return (await this.getRaised(alertId))?.detail;
  }
}
