/**
 * The NotifyStore port in memory, with the DynamoDB adapter's semantics (the contract tests in
 * test/support/notify-store-contract.ts hold both to them): conditional claims and settlements, leases,
 * counters, token buckets; TTL is ignored. Each call reads and writes without awaiting in between, so
 * one process's concurrent deliveries race as they would on the table's conditional writes. Records go
 * in and out as copies, with undefined attributes dropped as the table's marshalling drops them.
 */
import type { LookoutEventDetail } from "../../lib/model/event.js";
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
} from "../../lib/model/notify-store.js";

export interface MemoryNotifyStoreOptions {
  now?: () => Date;
}

/** A stored value's copy: JSON keeps what DynamoDB keeps (undefined attributes dropped, nothing shared). */
const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** A copy of what `key` holds, as a read from the table gives. */
const read = <T>(items: Map<string, T>, key: string): T | undefined => {
  const item = items.get(key);
  return item && copy(item);
};

/** Writes `value` unless `key` holds one (DynamoDB's attribute_not_exists): whether it was written. */
const putOnce = <T>(items: Map<string, T>, key: string, value: T): boolean => {
  if (items.has(key)) return false;
  items.set(key, copy(value));
  return true;
};

/** Sort keys in DynamoDB's order (UTF-8 bytes), so queries list what the table lists, in its order. */
const byKey = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

const sortedValues = <T>(items: Map<string, T>): T[] => [...items.keys()].sort(byKey).map((k) => copy(items.get(k)!));

interface Bucket {
  tokens: number;
  at: number;
}

export class MemoryNotifyStore implements NotifyStore {
  /** Delivery records by alert id, then receiver id. */
  private readonly deliveries = new Map<string, Map<string, DeliveryRecord>>();
  private readonly mutes = new Map<string, Mute>();
  private readonly buckets = new Map<string, Bucket>();
  /** Held alerts by receiver id, then `${held_at}#${alert id}` (the table's sort key). */
  private readonly held = new Map<string, Map<string, HeldAlert>>();
  private readonly failures = new Map<string, ReceiverFailures>();
  /** Incident roots by `${incident id}#${receiver id}`. */
  private readonly roots = new Map<string, IncidentRoot>();
  private readonly acks = new Map<string, IncidentAcknowledgement>();
  private readonly actions = new Map<string, IncidentActionRecord>();
  private readonly closed = new Map<string, IncidentClosed>();
  /** Escalations by incident id, then route; due entries by kind, then the table's sort key. */
  private readonly escalations = new Map<string, Map<string, Escalation>>();
  private readonly due = new Map<ReceiverKind, Map<string, DueEscalation>>();
  /** The outbox's alerts, which `getAlert` reads: the ingest side raises them (`putAlert` here). */
  private readonly alerts = new Map<string, { detail: LookoutEventDetail; quiet: boolean }>();

  constructor(private readonly opts: MemoryNotifyStoreOptions = {}) {}

  private now(): Date {
    return this.opts.now?.() ?? new Date();
  }

  private deliveryMap(alertId: string): Map<string, DeliveryRecord> {
    let m = this.deliveries.get(alertId);
    if (!m) this.deliveries.set(alertId, (m = new Map()));
    return m;
  }

  /** What the outbox holds for an alert raised elsewhere (the ingest store's `raiseAlert`); `quiet`: kept quiet (backfill). */
  putAlert(detail: LookoutEventDetail, quiet = false): void {
    this.alerts.set(detail.id, copy({ detail, quiet }));
  }

  async getDelivery(alertId: string, receiverId: string): Promise<DeliveryRecord | undefined> {
    const record = this.deliveries.get(alertId)?.get(receiverId);
    return record && copy(record);
  }

  async claim(alertId: string, receiverId: string, init: ClaimInit, leaseMs: number): Promise<ClaimResult> {
    const now = this.now();
    const records = this.deliveryMap(alertId);
    const old = records.get(receiverId);
    const free = !old || old.state === "failed" || (old.state === "sending" && old.lease_until !== undefined && old.lease_until < now.getTime());
    if (!free) return { claimed: false, record: copy(old) };
    const record: DeliveryRecord = copy({
      ...old,
      state: "sending",
      lease_until: now.getTime() + leaseMs,
      attempts: (old?.attempts ?? 0) + 1,
      first_attempt_at: old?.first_attempt_at ?? now.toISOString(),
      alert_id: alertId,
      receiver_id: receiverId,
      receiver_label: init.receiver_label,
      route: init.route,
      ...(init.escalation ? { escalation: init.escalation } : {}),
      ...(init.onlooker ? { onlooker: true } : {}),
      updated_at: now.toISOString(),
    });
    records.set(receiverId, record);
    return { claimed: true, record: copy(record) };
  }

  async renewLease(held: DeliveryRecord, leaseMs: number): Promise<boolean> {
    const current = this.deliveryMap(held.alert_id).get(held.receiver_id);
    if (!current || current.state !== "sending" || current.attempts !== held.attempts) return false;
    current.lease_until = this.now().getTime() + leaseMs;
    return true;
  }

  async settle(held: DeliveryRecord, outcome: DeliverySettlement): Promise<boolean> {
    const records = this.deliveryMap(held.alert_id);
    const current = records.get(held.receiver_id);
    if (current && (current.state !== held.state || current.attempts !== held.attempts)) return false;
    const next: DeliveryRecord = copy({ ...held, ...outcome, updated_at: this.now().toISOString() });
    delete next.lease_until;
    records.set(held.receiver_id, next);
    return true;
  }

  async recordSuppressed(alertId: string, receiverId: string, record: SuppressedDelivery): Promise<boolean> {
    const records = this.deliveryMap(alertId);
    if (records.has(receiverId)) return false;
    records.set(receiverId, copy({ alert_id: alertId, receiver_id: receiverId, attempts: 0, ...record, updated_at: this.now().toISOString() }));
    return true;
  }

  async deliveriesOf(alertId: string): Promise<DeliveryRecord[]> {
    return sortedValues(this.deliveries.get(alertId) ?? new Map());
  }

  async putMute(mute: Mute): Promise<void> {
    this.mutes.set(mute.id, copy(mute));
  }

  async listMutes(): Promise<Mute[]> {
    return sortedValues(this.mutes);
  }

  async getMute(id: string): Promise<Mute | undefined> {
    const mute = this.mutes.get(id);
    return mute && copy(mute);
  }

  private tokens(receiverId: string, perSecond: number, burst: number): number {
    const bucket = this.buckets.get(receiverId);
    return bucket ? Math.min(burst, bucket.tokens + ((this.now().getTime() - bucket.at) / 1000) * perSecond) : burst;
  }

  async peekTokens(receiverId: string, perSecond: number, burst: number): Promise<number> {
    return this.tokens(receiverId, perSecond, burst);
  }

  async takeToken(receiverId: string, perSecond: number, burst: number): Promise<boolean> {
    const now = this.now().getTime();
    const tokens = this.tokens(receiverId, perSecond, burst);
    if (tokens < 1) return false;
    this.buckets.set(receiverId, { tokens: tokens - 1, at: now });
    return true;
  }

  async hold(held: HeldAlert): Promise<void> {
    let m = this.held.get(held.receiver_id);
    if (!m) this.held.set(held.receiver_id, (m = new Map()));
    const key = `${held.held_at}#${held.detail.id}`;
    if (!m.has(key)) m.set(key, copy(held));
  }

  async markHeld(held: HeldAlert, digestId: string): Promise<boolean> {
    const h = this.held.get(held.receiver_id)?.get(`${held.held_at}#${held.detail.id}`);
    if (!h || (h.digest_id !== undefined && h.digest_id !== digestId)) return false;
    h.digest_id = digestId;
    return true;
  }

  async heldFor(receiverId: string, limit?: number): Promise<HeldAlert[]> {
    const all = sortedValues(this.held.get(receiverId) ?? new Map());
    return limit ? all.slice(0, limit) : all;
  }

  async release(held: HeldAlert): Promise<void> {
    this.held.get(held.receiver_id)?.delete(`${held.held_at}#${held.detail.id}`);
  }

  async receiverFailed(receiverId: string, label: string, error: string): Promise<ReceiverFailures> {
    const now = this.now().toISOString();
    const old = this.failures.get(receiverId);
    const run: ReceiverFailures = {
      ...old,
      consecutive_failures: (old?.consecutive_failures ?? 0) + 1,
      since: old?.since ?? now,
      last_error: error,
      receiver_id: receiverId,
      receiver_label: label,
      updated_at: now,
    };
    this.failures.set(receiverId, copy(run));
    return copy(run);
  }

  async receiverSucceeded(receiverId: string): Promise<void> {
    this.failures.delete(receiverId);
  }

  async receiverFailures(receiverId: string): Promise<ReceiverFailures | undefined> {
    return read(this.failures, receiverId);
  }

  async getRoot(incidentId: string, receiverId: string): Promise<IncidentRoot | undefined> {
    return read(this.roots, `${incidentId}#${receiverId}`);
  }

  async putRoot(root: IncidentRoot): Promise<boolean> {
    return putOnce(this.roots, `${root.incident_id}#${root.receiver_id}`, root);
  }

  async acknowledge(ack: IncidentAcknowledgement): Promise<{ ack: IncidentAcknowledgement; first: boolean }> {
    const had = this.acks.get(ack.incident_id);
    if (had) return { ack: copy(had), first: false };
    this.acks.set(ack.incident_id, copy(ack));
    return { ack: copy(ack), first: true };
  }

  async getAcknowledgement(incidentId: string): Promise<IncidentAcknowledgement | undefined> {
    return read(this.acks, incidentId);
  }

  async getAction(incidentId: string, id: string): Promise<IncidentActionRecord | undefined> {
    return read(this.actions, `${incidentId}#${id}`);
  }

  async recordAction(action: IncidentActionRecord): Promise<boolean> {
    return putOnce(this.actions, `${action.incident_id}#${action.id}`, action);
  }

  async markClosed(closed: IncidentClosed): Promise<boolean> {
    if (this.closed.has(closed.incident_id)) return false;
    this.closed.set(closed.incident_id, copy(closed));
    return true;
  }

  async getClosed(incidentId: string): Promise<IncidentClosed | undefined> {
    const closed = this.closed.get(incidentId);
    return closed && copy(closed);
  }

  async actionsOn(incidentId: string): Promise<IncidentActionRecord[]> {
    return [...this.actions.values()].filter((a) => a.incident_id === incidentId).sort((a, b) => a.at.localeCompare(b.at)).map(copy);
  }

  async scheduleEscalation(escalation: Escalation): Promise<Escalation> {
    let m = this.escalations.get(escalation.incident_id);
    if (!m) this.escalations.set(escalation.incident_id, (m = new Map()));
    const had = m.get(escalation.route);
    if (had) return copy(had);
    m.set(escalation.route, copy(escalation));
    const e = escalation;
    for (const kind of e.kinds) {
      let d = this.due.get(kind);
      if (!d) this.due.set(kind, (d = new Map()));
      d.set(`${e.due_at}#${e.incident_id}#${e.route}`, { kind, due_at: e.due_at, incident_id: e.incident_id, route: e.route });
    }
    return copy(e);
  }

  async getEscalation(incidentId: string, route: string): Promise<Escalation | undefined> {
    const e = this.escalations.get(incidentId)?.get(route);
    return e && copy(e);
  }

  async escalationsOf(incidentId: string): Promise<Escalation[]> {
    return sortedValues(this.escalations.get(incidentId) ?? new Map());
  }

  async dueEscalations(kind: ReceiverKind, until: string, limit?: number): Promise<DueEscalation[]> {
    const all = sortedValues(this.due.get(kind) ?? new Map()).filter((d) => byKey(`${d.due_at}#${d.incident_id}#${d.route}`, `${until}~`) <= 0);
    return limit ? all.slice(0, limit) : all;
  }

  async settleEscalation(incidentId: string, route: string, next: Required<Pick<Escalation, "state" | "settled_at">> & Pick<Escalation, "reason">): Promise<boolean> {
    const e = this.escalations.get(incidentId)?.get(route);
    if (!e || e.state !== "pending") return false;
    this.escalations.get(incidentId)!.set(route, copy({ ...e, ...next }));
    return true;
  }

  async releaseDueEscalation(due: DueEscalation): Promise<void> {
    this.due.get(due.kind)?.delete(`${due.due_at}#${due.incident_id}#${due.route}`);
  }

  async getRaised(alertId: string): Promise<{ detail: LookoutEventDetail; quiet: boolean } | undefined> {
    const raised = this.alerts.get(alertId);
    return raised && copy(raised);
  }

  async getAlert(alertId: string): Promise<LookoutEventDetail | undefined> {
    return (await this.getRaised(alertId))?.detail;
  }
}
