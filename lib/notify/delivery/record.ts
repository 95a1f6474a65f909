/**
 * Record: what became of a delivery, on its record and in the receiver's run of failures. A failure
 * is told (health, fallback) before its record is settled, so the record names the health event.
 */
import pMap from "p-map";
import { isClosing } from "../../model/event.js";
import type { DeliveryRecord, DeliverySettlement, HeldAlert } from "../../model/notify-store.js";
import type { DeliveryError, Sent } from "../types.js";
import {
  type AlertAttempt,
  answerOf,
  asDeliveryError,
  claimedBy,
  type DeliveryOutcome,
  type DigestAttempt,
  sentFields,
  type Stage,
} from "./stage.js";

/** The failed record's fields: permanent when retries cannot fix it, naming the health event it raised. */
const failedFields = (error: DeliveryError, told?: { healthId?: string } | void) => ({
  state: "failed" as const,
  error: error.message,
  ...(error.retryable ? {} : { permanent: true }),
  ...(told?.healthId ? { health_id: told.healthId } : {}),
});

export const recordAlertStage: Stage<AlertAttempt, DeliveryOutcome> = async (a) => {
  const { store, log } = a.deps;
  const mine = claimedBy(a);
  const answer = answerOf(a);
  if ("failed" in answer) {
    const error = answer.failed;
    log.error("receiver failed after its retries", { alert: a.id, receiver: a.channel.label, error: error.message, retryable: error.retryable });
    const run = await store.receiverFailed(a.channel.id, a.channel.label, error.message);
    const told = await a.deps.onReceiverFailed?.(a.detail, a.channel, error, run);
    await store.settle(mine, failedFields(error, told));
    return error.retryable ? "failed" : "rejected";
  }
  await store.settle(mine, { state: "sent", ...sentFields(answer.sent, a.deps.now().toISOString()) });
  await store.receiverSucceeded(a.channel.id);
  await recordRoot(a, answer.sent);
  return "sent";
};

/**
 * An incident's alert sent as a message of its own where the receiver showed nothing of the incident
 * (its opening, or a follow-up standing in for it) is that receiver's root: later follow-ups reply to it
 * and the close resolves it. Closes and amendments never are: nothing follows a close, and an amendment
 * edits or follows what it amends.
 */
export async function recordRoot(a: AlertAttempt, sent: Sent): Promise<void> {
  const d = a.detail;
  if (!d.incident_id || d.amends || isClosing(d.transition)) return;
  if ((await a.incident())?.shown) return;
  await a.deps.store.putRoot({
    incident_id: d.incident_id, receiver_id: a.channel.id, alert_id: d.id, at: a.deps.now().toISOString(),
    ...(sent.ts ? { ts: sent.ts } : {}), ...(sent.channel ? { channel: sent.channel } : {}), ...(sent.messageId ? { message_id: sent.messageId } : {}),
  });
}

/** Each alert a digest carried: its record settled as `settlement` says, and no longer held (undefined: left held). */
export async function settleHeld(a: DigestAttempt, settlement: (h: HeldAlert) => Promise<DeliverySettlement | undefined>): Promise<void> {
  // A flood's digest carries thousands: settled a few at a time, not one after another.
  await pMap(a.held, async (h) => {
    const outcome = await settlement(h);
    if (!outcome) return;
    const record = await a.deps.store.getDelivery(h.detail.id, a.channel.id);
    if (record) await a.deps.store.settle(record, outcome);
    await a.deps.store.release(h);
  }, { concurrency: 16 });
}

/** What a settled record says the receiver answered. */
export const sentOf = (r: DeliveryRecord): Sent => ({
  ...(r.ts ? { ts: r.ts } : {}), ...(r.channel ? { channel: r.channel } : {}), ...(r.message_id ? { messageId: r.message_id } : {}),
});

/** The alerts a digest carried: each recorded as sent in it. Returns how many went out. */
export async function sentInDigest(a: DigestAttempt, sent: Sent): Promise<number> {
  await settleHeld(a, async () => ({ state: "sent", digest_id: a.id, ...sentFields(sent) }));
  return a.held.length;
}

export const recordDigestStage: Stage<DigestAttempt, number> = async (a) => {
  const answer = answerOf(a);
  if ("failed" in answer) return digestFailed(a, answer.failed);
  try {
    await a.deps.store.settle(claimedBy(a), { state: "sent", ...sentFields(answer.sent) });
    const count = await sentInDigest(a, answer.sent);
    await a.deps.store.receiverSucceeded(a.channel.id);
    return count;
  } catch (err) {
    // What cannot be recorded counts as not delivered: the digest stays held, to be read back or resent.
    return digestFailed(a, asDeliveryError(err));
  }
};

/**
 * A digest that failed stays held when a later try may work. One retrying cannot fix (a revoked
 * webhook, a missing secret) sends what it held where any alert goes when its receiver fails — health
 * and the fallback — and records it so, rather than holding it forever; what the fallback could not take
 * for now stays held, for the next flush.
 */
async function digestFailed(a: DigestAttempt, error: DeliveryError): Promise<number> {
  const { store, log, onReceiverFailed } = a.deps;
  await store.settle(claimedBy(a), failedFields(error));
  if (error.retryable || !onReceiverFailed) {
    log.error("digest not delivered; it stays held", { receiver: a.channel.label, held: a.held.length, error: error.message });
    return 0;
  }
  log.error("digest refused; what it held goes to the fallback", { receiver: a.channel.label, held: a.held.length, error: error.message });
  const run = await store.receiverFailed(a.channel.id, a.channel.label, error.message);
  await settleHeld(a, async (h) => {
    const told = await onReceiverFailed(h.detail, a.channel, error, run);
    // The fallback failed too, for now: it stays held, to go to the fallback again at the next flush.
    if (told?.fallbackFailed) return undefined;
    return { state: "failed", error: error.message, permanent: true, digest_id: a.id, ...(told?.healthId ? { health_id: told.healthId } : {}) };
  });
  return 0;
}
