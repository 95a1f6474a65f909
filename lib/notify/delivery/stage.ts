/**
 * Delivery as a chain of small stages, in the shape of Alertmanager's notify pipeline (its Stage passes
 * the alerts on or stops; its MultiStage runs stages in order). Here a stage reads and adds to one
 * attempt, and either ends the delivery with its result or returns undefined to pass it on.
 */
import type { LookoutEventDetail } from "../../model/event.js";
import type { Log } from "../../model/log.js";
import type { DeliveryRecord, HeldAlert, Mute, NotifyStore, ReceiverFailures } from "../../model/notify-store.js";
import { type Channel, DeliveryError, type IncidentRef, type Presentation, type Sent } from "../types.js";
import type { Presenter } from "../presentation.js";

export interface DeliverDeps {
  store: NotifyStore;
  now: () => Date;
  /**
   * Per receiver: messages per second and burst, and at most `perHour` an hour (default 1/s, burst 10,
   * 60/h: docs/architecture.md, "Receivers' rate").
   */
  rate: { perSecond: number; burst: number; perHour?: number };
  /** A receiver's digests go out at most this often (default a minute, lib/notify/delivery/rate.ts). */
  digestEveryMs?: number;
  /** How long a sender may take before another worker assumes it died and sends again. */
  leaseMs?: number;
  /** Waits (a follow-up waiting seconds for its opening); default a timer. Tests move their clock instead. */
  sleep?: (ms: number) => Promise<void>;
  log: Log;
  /** How each route shows an event (severity, mentions, links); absent: the event as raised. */
  present?: Presenter;
  /**
   * Whether the routes send `detail` to this route's receiver `channelId`: an opening (or an amended
   * alert) is delivered ahead of what follows it only where it is routed. Absent: never delivered ahead.
   */
  routedHere?: (detail: LookoutEventDetail, route: string, channelId: string) => boolean;
  /**
   * Told when a receiver failed after its own retries, with its run of failures so far (kept in the
   * table): raise health, try the fallback. Returns the health event's id, recorded on the delivery, and
   * whether the fallback failed too, for now (then what a digest held stays held).
   */
  onReceiverFailed?: (detail: LookoutEventDetail, channel: Channel, error: DeliveryError, run: ReceiverFailures) => Promise<{ healthId?: string; fallbackFailed?: boolean } | void>;
}

/**
 * `duplicate`: settled before (sent, suppressed or held). `in_flight`: another sender holds the lease;
 * not settled yet, so whoever delivers the event must come back (the holder may have died): an alert
 * is only done when its record says what became of it. `failed`: may work later (retried);
 * `rejected`: failed for a reason retries cannot fix (a secret missing, a revoked webhook, another
 * 4xx), so it is not retried: the fallback and a health event say so at once. `suppressed`: kept
 * quiet for its incident's sake (a repeat where no thread counts it, an amendment of an alert the
 * receiver was not told of), recorded with the reason.
 */
export type DeliveryOutcome = "sent" | "duplicate" | "in_flight" | "muted" | "suppressed" | "held" | "failed" | "rejected";

/** One delivery under way, to one receiver: what the stages have learned so far. */
export interface Attempt {
  /** The alert's id, or the digest's: what the delivery record is keyed by. */
  readonly id: string;
  readonly route: string;
  readonly channel: Channel;
  readonly deps: DeliverDeps;
  /** The first alert of the incident, for a follow-up: read once, when a stage first asks. */
  readonly incident: () => Promise<IncidentRef | undefined>;
  /** Forgets what `incident` read, so the next call reads the store again (a stage waiting for an opening). */
  readonly rereadIncident?: () => void;
  /**
   * Where the delivery is recorded, when not under its own id and the receiver's: an escalation is
   * recorded with the alert it escalates (so the alert's audit row and `explain` show it), apart per route.
   */
  readonly recordAs?: { alertId: string; receiverId: string; escalation: string };
  /** Set by the claim stage: the record whose lease this attempt holds. */
  claimed?: DeliveryRecord;
  /** Set by the send stage: what the receiver answered. */
  answer?: { sent: Sent } | { failed: DeliveryError };
}

/** Whom a delivery record names: the receiver's label, the route, and, for a receiver that tells nobody, that it is an onlooker. */
export const recordedFor = (a: Attempt): { receiver_label: string; route: string; onlooker?: boolean } =>
  ({ receiver_label: a.channel.label, route: a.route, ...(a.channel.onlooker ? { onlooker: true } : {}) });

export interface AlertAttempt extends Attempt {
  readonly detail: LookoutEventDetail;
  readonly mutes: readonly Mute[];
  /** How the alert's route shows it. */
  readonly presentation?: Presentation;
  /** When the delivery began: mutes are judged and holds stamped at this instant. */
  readonly now: Date;
  /**
   * Delivers, to the same receiver by the same route, the alert this one follows (its incident's opening,
   * or the alert it amends) when that one has not reached it yet; absent past a few levels of nesting.
   */
  readonly deliverFirst?: (predecessor: LookoutEventDetail) => Promise<DeliveryOutcome>;
}

export interface DigestAttempt extends Attempt {
  /** What the digest carries, oldest first: once it has its budget, only what it could mark as its own. */
  held: readonly HeldAlert[];
}

const DEFAULT_LEASE_MS = 60_000;

/** How long a claim holds before another worker may take its sender for dead. */
export const leaseMsOf = (deps: Pick<DeliverDeps, "leaseMs">): number => deps.leaseMs ?? DEFAULT_LEASE_MS;

/** One step: ends the delivery with its result, or returns undefined to pass the attempt on. */
export type Stage<A extends Attempt, R> = (attempt: A) => Promise<R | undefined>;

/** The stages in order, until one ends the delivery (Alertmanager's MultiStage). */
export function chain<A extends Attempt, R>(...stages: Stage<A, R>[]): (attempt: A) => Promise<R> {
  return async (attempt) => {
    for (const stage of stages) {
      const result = await stage(attempt);
      if (result !== undefined) return result;
    }
    throw new Error(`the delivery of ${attempt.id} ended without a result: its chain must end in a stage that decides`);
  };
}

/** The record this attempt claimed; a stage placed after the claim may count on it. */
export function claimedBy(attempt: Attempt): DeliveryRecord {
  if (!attempt.claimed) throw new Error(`a stage after the claim ran without one for ${attempt.id}`);
  return attempt.claimed;
}

/** What the send stage recorded; a stage placed after it may count on it. */
export function answerOf(attempt: Attempt): NonNullable<Attempt["answer"]> {
  if (!attempt.answer) throw new Error(`a stage after the send ran without an answer for ${attempt.id}`);
  return attempt.answer;
}

/** Anything a sender threw, as a DeliveryError; what it does not classify may pass (retryable). */
export const asDeliveryError = (err: unknown): DeliveryError =>
  err instanceof DeliveryError ? err : new DeliveryError((err as Error).message, true);

/** What a receiver's answer adds to a delivery record; `at` stamps a message it updated in place. */
export const sentFields = (s: Sent, at?: string) => ({
  ...(s.ts ? { ts: s.ts } : {}),
  ...(s.channel ? { channel: s.channel } : {}),
  ...(s.messageId ? { message_id: s.messageId } : {}),
  ...(s.updated && at ? { updated_message: { ...s.updated, at } } : {}),
});

