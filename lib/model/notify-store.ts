/**
 * The notify stage's port to its state: one delivery record per (alert, receiver) — the idempotency
 * record and the audit of who was told —, mutes, a token bucket per receiver (storm control), the
 * alerts held back for a digest, and each receiver's run of failures. Adapters: DynamoDB
 * (lib/store/notify-store.ts) and in memory (test/support/memory-notify-store.ts), held to the same
 * contract by test/support/notify-store-contract.ts.
 */
import type { LookoutEventDetail } from "./event.js";
import type { SuppressionReason } from "./alert-item.js";
import type { IncidentActionKind } from "./incident-action.js";
import type { AuditRow } from "./audit-row.js";

export type DeliveryState = "sending" | "sent" | "failed" | "suppressed" | "held";

export interface DeliveryRecord {
  alert_id: string;
  receiver_id: string;
  receiver_label: string;
  route: string;
  state: DeliveryState;
  attempts: number;
  /** While `sending`: another worker may take over after this (epoch ms): the sender died. */
  lease_until?: number;
  /** ISO: when the first attempt began; a retry reads the receiver back from then (Slack history). */
  first_attempt_at?: string;
  /** Slack: the message ts (Web API form) — follow-ups thread under it. */
  ts?: string;
  channel?: string;
  message_id?: string;
  /** Delivered as part of a digest: the digest's id. */
  digest_id?: string;
  error?: string;
  /** The failure was one retries cannot fix (a secret missing, a revoked webhook): not retried. */
  permanent?: boolean;
  /** The `Lookout Health` event (receiver_failing) this failure raised. */
  health_id?: string;
  suppression?: { reason: Exclude<SuppressionReason, "backfill">; detail: string; mute_id?: string };
  /**
   * The earlier message this delivery replaced in place (Slack chat.update): an incident's first message
   * turned to its resolved form, or an amended alert's message. A retry updates it again, which is harmless.
   */
  updated_message?: { ts: string; channel: string; at: string };
  /** An escalation's delivery (docs/actions.md, "Escalation"): the route that escalated the alert's incident. */
  escalation?: string;
  /**
   * The receiver only shows what it is sent and tells nobody (a preview on screen, as one machine's
   * terminal Slack preview): the audit says shown, nobody told (docs/audit.md, "Onlookers").
   */
  onlooker?: boolean;
  updated_at: string;
}

export interface MuteScope {
  organization?: string;
  project?: string;
  environment?: string;
  service?: string;
  /** By id: a cluster's errors, a webhook's failed deliveries (a mute set from their incident's message). */
  cluster?: string;
  webhook?: string;
}

export interface Mute {
  id: string;
  scope: MuteScope;
  /** ISO: the mute ends then. */
  until: string;
  reason: string;
  created_by: string;
  created_at: string;
  /** ISO, when it was lifted early by `lookout unmute`, or when the incident it was set until closed. */
  lifted_at?: string;
  /** "Mute until resolved": the incident whose close lifts it (its close itself is not muted). */
  until_resolved?: string;
}

export interface HeldAlert {
  receiver_id: string;
  held_at: string;
  detail: LookoutEventDetail;
  route: string;
  /**
   * The digest that carries it, from when that digest got the budget to go out: until it is released,
   * that digest alone carries it, so a digest sent again after a crash holds what it held the first time.
   */
  digest_id?: string;
}

/** A receiver's current run of failed deliveries, kept in the table so every worker counts the same run. */
export interface ReceiverFailures {
  receiver_id: string;
  receiver_label: string;
  consecutive_failures: number;
  /** ISO: the first failure of this run (the health episode's anchor). */
  since: string;
  last_error: string;
  updated_at: string;
}

/**
 * The message a receiver shows as an incident's root: the first of its alerts that receiver displayed
 * as a message of its own (the opening, or a follow-up when the receiver never showed the opening:
 * backfilled, another route, muted, held, failed, the receiver new). Follow-ups thread under it and
 * the close turns it to its resolved form. One per (incident, receiver); the first writer keeps it.
 */
export interface IncidentRoot {
  incident_id: string;
  receiver_id: string;
  /** The alert whose message is the root. */
  alert_id: string;
  /** Slack (Web API form): the root message's ts and channel id; email: its Message-ID. */
  ts?: string;
  channel?: string;
  message_id?: string;
  at: string;
}

/** Who is looking at an incident: the first person to press Acknowledge (docs/actions.md). */
export interface IncidentAcknowledgement {
  incident_id: string;
  /** Slack's user id and name. */
  by: { id: string; name: string };
  at: string;
  /** The alert whose message was clicked. */
  alert_id: string;
  /** The click that made it: a retry of that click finds it its own, and finishes what it began. */
  click_id?: string;
}

/** An incident's close, as the notifier first took it: what a later click finds (docs/actions.md). */
export interface IncidentClosed {
  incident_id: string;
  /** The closing alert (its resolved form is drawn from it). */
  alert_id: string;
  at: string;
}

/** A click on an incident's button, kept once: the audit's record of who did what, from where. */
export interface IncidentActionRecord {
  /** The click's own id (Slack's retry of a request and a replay carry the same). */
  id: string;
  kind: IncidentActionKind;
  incident_id: string;
  alert_id: string;
  by: { id: string; name: string };
  at: string;
  /** The Slack channel id and message ts the button was on. */
  channel: string;
  message_ts: string;
  /** What came of it: acknowledged, muted, already_acknowledged, already_resolved, … (lib/actions/act.ts). */
  outcome?: string;
}

/** The kinds of receiver, each with a notify function of its own in the cloud; `http`: PagerDuty, generic webhooks and Teams. */
export type ReceiverKind = "slack" | "email" | "http";

/** The notify function that carries a receiver. */
export const kindOf = (r: { type: string }): ReceiverKind => (r.type === "slack" || r.type === "email" ? r.type : "http");

/**
 * An escalation of a critical incident a route opened (docs/actions.md, "Escalation"): scheduled when
 * the route delivers the incident, due `after` later; then escalated, or cancelled by an acknowledgement
 * or the close. One per (incident, route): the first writer keeps it, and it leaves `pending` once.
 */
export interface Escalation {
  incident_id: string;
  route: string;
  /** The incident's alert the route delivered first: re-announced, and the escalation's deliveries are its. */
  alert_id: string;
  /** ISO: when the escalation is due unless acknowledged or closed before. */
  due_at: string;
  /** The kinds of receiver it goes to: one due entry each, so each notify function finds its own. */
  kinds: ReceiverKind[];
  state: "pending" | "escalated" | "cancelled";
  scheduled_at: string;
  /** ISO: when it was escalated or cancelled. */
  settled_at?: string;
  /** Why it was cancelled (acknowledged by whom, closed by which alert), for the audit trail. */
  reason?: string;
}

/** An escalation due for one kind of receiver, as listed by due time. */
export interface DueEscalation {
  kind: ReceiverKind;
  due_at: string;
  incident_id: string;
  route: string;
}

/** What a claim writes besides the lease: the receiver's label, the route, an escalation's route, and whether the receiver is an onlooker. */
export type ClaimInit = Pick<DeliveryRecord, "receiver_label" | "route" | "escalation" | "onlooker">;

export type ClaimResult =
  | { claimed: true; record: DeliveryRecord }
  | { claimed: false; record: DeliveryRecord };

/** What a delivery outcome may set on its record; `settle` keeps the rest of the record as it was. */
export type DeliverySettlement = Partial<DeliveryRecord> & { state: DeliveryState };

/** A record decided without sending (muted): the store adds the ids, `attempts: 0` and the time. */
export type SuppressedDelivery = Omit<DeliveryRecord, "alert_id" | "receiver_id" | "updated_at" | "attempts">;

export interface NotifyStore {
  getDelivery(alertId: string, receiverId: string): Promise<DeliveryRecord | undefined>;
  /**
   * Takes the right to send an alert to a receiver: granted when nobody has, when an earlier attempt
   * failed, or when an earlier sender's lease ran out (it died); the record keeps what earlier attempts
   * wrote, counts one more attempt and keeps its first attempt's time. Otherwise says what it holds.
   */
  claim(alertId: string, receiverId: string, init: ClaimInit, leaseMs: number): Promise<ClaimResult>;
  /**
   * Extends the lease of a claim still held as claimed (`held`: sending, at that attempt) to `leaseMs`
   * from now: a send that takes long is not taken for a dead one. False when the claim is no longer held.
   */
  renewLease(held: DeliveryRecord, leaseMs: number): Promise<boolean>;
  /**
   * Records the outcome of a delivery (the lease dropped), only while `held` still describes it (the
   * state and attempt the caller saw when it claimed or held it): a sender whose lease ran out and was
   * taken over does not overwrite the new sender's record. Returns false when the record had moved on.
   */
  settle(held: DeliveryRecord, outcome: DeliverySettlement): Promise<boolean>;
  /** Records a delivery that was decided without sending (muted): never overwrites an existing one. */
  recordSuppressed(alertId: string, receiverId: string, record: SuppressedDelivery): Promise<boolean>;
  /** Every delivery of an alert, by receiver id, for `lookout explain` and the audit trail. */
  deliveriesOf(alertId: string): Promise<DeliveryRecord[]>;

  /** Kept past its end for the audit trail ("muted by whom, why"). */
  putMute(mute: Mute): Promise<void>;
  /** Every mute, lifted and ended ones included, by id. */
  /** Every mute; `consistent`: with a strongly consistent read (an incident's close, which must see a mute set just before it). */
  listMutes(opts?: { consistent?: boolean }): Promise<Mute[]>;
  getMute(id: string): Promise<Mute | undefined>;

  /**
   * Takes one message from a receiver's token bucket (refill `perSecond`, at most `burst`, full at
   * first). Returns false when the bucket is empty: the caller holds the alert for a digest.
   */
  takeToken(receiverId: string, perSecond: number, burst: number): Promise<boolean>;
  /** How many tokens `takeToken` would find now, without taking one. */
  peekTokens(receiverId: string, perSecond: number, burst: number): Promise<number>;
  /** Holds an alert for a receiver's digest; holding the same (receiver, time, alert) again changes nothing. */
  hold(held: HeldAlert): Promise<void>;
  /** What is held for a receiver, oldest first; the first `limit` only when given. */
  heldFor(receiverId: string, limit?: number): Promise<HeldAlert[]>;
  /**
   * Marks a held alert as carried by `digestId`. False when it is no longer held, or another digest
   * carries it: then this one must not.
   */
  markHeld(held: HeldAlert, digestId: string): Promise<boolean>;
  release(held: HeldAlert): Promise<void>;

  /** Counts one more failure in a row for a receiver; the run's first failure anchors its episode. */
  receiverFailed(receiverId: string, label: string, error: string): Promise<ReceiverFailures>;
  /** A delivery got through: the receiver's run of failures (if any) is over. */
  receiverSucceeded(receiverId: string): Promise<void>;
  receiverFailures(receiverId: string): Promise<ReceiverFailures | undefined>;

  /** The message this receiver shows as the incident's root, when it shows one. */
  getRoot(incidentId: string, receiverId: string): Promise<IncidentRoot | undefined>;
  /** Records a receiver's root message for an incident unless one is recorded; false when one was. */
  putRoot(root: IncidentRoot): Promise<boolean>;

  /** Records who acknowledged an incident unless someone did: the first stands, and is returned with whether it was this one. */
  acknowledge(ack: IncidentAcknowledgement): Promise<{ ack: IncidentAcknowledgement; first: boolean }>;
  getAcknowledgement(incidentId: string): Promise<IncidentAcknowledgement | undefined>;
  /**
   * Records a click, once it was acted on; false when the same click was recorded before (Slack's retry,
   * a replay). With its audit row, it is in the audit trail's indexes (docs/audit.md).
   */
  recordAction(action: IncidentActionRecord, row?: AuditRow): Promise<boolean>;
  /** A click recorded before: it was acted on, and its retry does nothing. */
  getAction(incidentId: string, id: string): Promise<IncidentActionRecord | undefined>;
  /** Every click recorded on an incident's messages, oldest first (`lookout explain`). */
  actionsOn(incidentId: string): Promise<IncidentActionRecord[]>;
  /** Records that an incident closed unless it was recorded; the first close stands. */
  markClosed(closed: IncidentClosed): Promise<boolean>;
  getClosed(incidentId: string): Promise<IncidentClosed | undefined>;

  /**
   * Schedules an escalation unless one is kept for its (incident, route): returns the one kept. It is
   * written with its due entries, one per kind, at once.
   */
  scheduleEscalation(escalation: Escalation): Promise<Escalation>;
  getEscalation(incidentId: string, route: string): Promise<Escalation | undefined>;
  /** An incident's escalations, one per route that scheduled one. */
  escalationsOf(incidentId: string): Promise<Escalation[]>;
  /** Due entries of one kind due at or before `until` (ISO), earliest first; the first `limit` only when given. */
  dueEscalations(kind: ReceiverKind, until: string, limit?: number): Promise<DueEscalation[]>;
  /** Moves a pending escalation on (escalated or cancelled); false when it was no longer pending (another tick, a close). */
  settleEscalation(incidentId: string, route: string, next: Required<Pick<Escalation, "state" | "settled_at">> & Pick<Escalation, "reason">): Promise<boolean>;
  /** Drops a due entry once its kind's part of the escalation is done. */
  releaseDueEscalation(due: DueEscalation): Promise<void>;

  /**
   * The alert as raised, from the outbox, and whether it was kept quiet there (backfill): such an alert
   * is never published, so it is on its way to no receiver.
   */
  getRaised(alertId: string): Promise<{ detail: LookoutEventDetail; quiet: boolean } | undefined>;
  /** The alert as raised, from the outbox (a follow-up quotes the first alert of its incident). */
  getAlert(alertId: string): Promise<LookoutEventDetail | undefined>;
}
