/**
 * Delivering one alert to one receiver, once: mutes, idempotency per (alert, receiver), the storm
 * budget with digests, threading of follow-ups, and what happens when a receiver keeps failing.
 * Channel-agnostic: Slack and email are `Channel` adapters. Modelled on Alertmanager's notify pipeline
 * (inhibit/silence → dedup → rate → send → record), with the state in DynamoDB so any worker may deliver.
 */
import type { LookoutEventDetail } from "../model/event.js";
import type { Log } from "../ingest/poll.js";
import { contentHash } from "../model/hash.js";
import type { DeliveryRecord, DynamoNotifyStore, HeldAlert, Mute, ReceiverFailures } from "../store/notify-store.js";
import { DeliveryError, type IncidentRef } from "./types.js";
import { activeMute } from "./mutes.js";

export interface Sent {
  ts?: string;
  channel?: string;
  messageId?: string;
}

/** One receiver, able to send an alert and a digest. */
export interface Channel {
  /** Stable id of the receiver (never its secret). */
  id: string;
  /** For people and logs: `slack #oncall`, `email oncall@example.com`. */
  label: string;
  send(detail: LookoutEventDetail, incident?: IncidentRef): Promise<Sent>;
  /**
   * `window.id` is the digest's delivery id, carried like an alert id; `heldAt` says when each alert
   * (by id) was held and `at` when the digest goes out, so the digest can say how long each waited.
   */
  sendDigest(held: LookoutEventDetail[], window: DigestWindow): Promise<Sent>;
  /**
   * Where the receiver can be read back (Slack's Web API): the message an earlier attempt posted for
   * this alert (or digest) id since `since`, if it got through. Absent: a resend cannot be detected.
   */
  findSent?(alertId: string, since: Date, incident?: IncidentRef): Promise<Sent | undefined>;
}

export interface DigestWindow {
  from: string;
  to: string;
  id: string;
  heldAt?: Record<string, string>;
  at?: string;
}

export interface DeliverDeps {
  store: DynamoNotifyStore;
  now: () => Date;
  /** Per receiver: messages per second and burst (DESIGN.md: default 1/s, burst 10). */
  rate: { perSecond: number; burst: number };
  /** How long a sender may take before another worker assumes it died and sends again. */
  leaseMs?: number;
  log: Log;
  /**
   * Told when a receiver failed after its own retries, with its run of failures so far (kept in the
   * table): raise health, try the fallback. Returns the health event's id, recorded on the delivery.
   */
  onReceiverFailed?: (detail: LookoutEventDetail, channel: Channel, error: DeliveryError, run: ReceiverFailures) => Promise<{ healthId?: string } | void>;
}

/**
 * `duplicate`: settled before (sent, suppressed or held). `in_flight`: another sender holds the lease;
 * not settled yet, so whoever delivers the event must come back (the holder may have died): an alert
 * is only done when its record says what became of it. `failed`: may work later (retried);
 * `rejected`: failed for a reason retries cannot fix (a secret missing, a revoked webhook, another
 * 4xx), so it is not retried: the fallback and a health event say so at once.
 */
export type DeliveryOutcome = "sent" | "duplicate" | "in_flight" | "muted" | "held" | "failed" | "rejected";

const DEFAULT_LEASE_MS = 60_000;

export async function deliver(
  detail: LookoutEventDetail,
  route: string,
  channel: Channel,
  mutes: Mute[],
  deps: DeliverDeps,
): Promise<DeliveryOutcome> {
  const { store } = deps;
  const now = deps.now();
  const mute = activeMute(detail, mutes, now);
  if (mute) {
    const recorded = await store.recordSuppressed(detail.id, channel.id, {
      receiver_label: channel.label, route, state: "suppressed",
      suppression: { reason: "mute", mute_id: mute.id, detail: `muted until ${mute.until} by ${mute.created_by}: ${mute.reason}` },
    });
    return recorded ? "muted" : "duplicate";
  }

  const claim = await store.claim(detail.id, channel.id, { receiver_label: channel.label, route }, deps.leaseMs ?? DEFAULT_LEASE_MS);
  if (!claim.claimed) return claim.record.state === "sending" ? "in_flight" : "duplicate";
  const mine = claim.record;
  // Read only when needed (a retry, a send): a storm holds most alerts without looking.
  let incident: Promise<IncidentRef | undefined> | undefined;
  const incidentRef = () => (incident ??= incidentOf(detail, channel, store));
  if (await sentEarlier(detail.id, mine, channel, deps, incidentRef)) return "duplicate";

  // What a storm held back goes out first, as one digest, when the budget allows.
  await flushHeld(channel, deps);
  if (!(await store.takeToken(channel.id, deps.rate.perSecond, deps.rate.burst))) {
    await store.hold({ receiver_id: channel.id, held_at: now.toISOString(), detail, route });
    await store.settle(mine, {
      state: "held",
      suppression: { reason: "storm", detail: `over ${deps.rate.perSecond}/s (burst ${deps.rate.burst}) for ${channel.label}: held for a digest` },
    });
    return "held";
  }

  let sent: Sent;
  try {
    sent = await channel.send(detail, await incidentRef());
  } catch (err) {
    const error = asDeliveryError(err);
    deps.log.error("receiver failed after its retries", { alert: detail.id, receiver: channel.label, error: error.message, retryable: error.retryable });
    const run = await store.receiverFailed(channel.id, channel.label, error.message);
    const told = await deps.onReceiverFailed?.(detail, channel, error, run);
    await store.settle(mine, {
      state: "failed", error: error.message,
      ...(error.retryable ? {} : { permanent: true }),
      ...(told?.healthId ? { health_id: told.healthId } : {}),
    });
    return error.retryable ? "failed" : "rejected";
  }
  await store.settle(mine, { state: "sent", ...sentFields(sent) });
  await store.receiverSucceeded(channel.id);
  return "sent";
}

/** Anything a sender threw, as a DeliveryError; what it does not classify may pass (retryable). */
const asDeliveryError = (err: unknown): DeliveryError => (err instanceof DeliveryError ? err : new DeliveryError((err as Error).message, true));

/** Clocks differ between us and the receiver: look this much further back than our first attempt. */
const CLOCK_SKEW_MS = 60_000;

/**
 * A retry (an earlier attempt failed, or its sender died holding the lease) first asks the receiver
 * whether that attempt got through after all, and records it as sent if it did: so a crash between
 * the receiver's answer and our record, or a timeout after Slack accepted, posts nothing twice. When
 * the receiver cannot say, the alert is sent again: a repeat is better than a missed failure.
 */
async function sentEarlier(
  id: string,
  mine: DeliveryRecord,
  channel: Channel,
  deps: DeliverDeps,
  incident: () => Promise<IncidentRef | undefined> = async () => undefined,
): Promise<Sent | undefined> {
  if (mine.attempts <= 1 || !channel.findSent) return undefined;
  const since = new Date(Date.parse(mine.first_attempt_at ?? mine.updated_at) - CLOCK_SKEW_MS);
  try {
    const sent = await channel.findSent(id, since, await incident());
    if (!sent) return undefined;
    await deps.store.settle(mine, { state: "sent", ...sentFields(sent) });
    deps.log.info("an earlier attempt had been delivered; not sent again", { alert: id, receiver: channel.label, attempts: mine.attempts });
    return sent;
  } catch (err) {
    deps.log.warn("could not read back earlier attempts; sending again", { alert: id, receiver: channel.label, error: (err as Error).message });
    return undefined;
  }
}

/** The first alert of this alert's incident, and its message ts for this receiver when there is one. */
async function incidentOf(detail: LookoutEventDetail, channel: Channel, store: DynamoNotifyStore): Promise<IncidentRef | undefined> {
  if (!detail.incident_id || detail.incident_id === detail.id) return undefined;
  const [first, delivery] = await Promise.all([store.getAlert(detail.incident_id), store.getDelivery(detail.incident_id, channel.id)]);
  if (!first) return undefined;
  return {
    first,
    ...(delivery?.ts ? { ts: delivery.ts } : {}),
    ...(delivery?.message_id ? { messageId: delivery.message_id } : {}),
  };
}

const sentFields = (s: Sent) => ({
  ...(s.ts ? { ts: s.ts } : {}),
  ...(s.channel ? { channel: s.channel } : {}),
  ...(s.messageId ? { message_id: s.messageId } : {}),
});

/**
 * Sends one digest of everything held for a receiver, when the budget has a token for it. The digest is
 * claimed like an alert (keyed by what it holds), so two workers never send the same digest.
 */
export async function flushHeld(channel: Channel, deps: DeliverDeps): Promise<number> {
  const { store } = deps;
  const held = await store.heldFor(channel.id);
  if (!held.length) return 0;
  const digestId = `digest-${contentHash(channel.id, ...held.map((h) => h.detail.id))}`;
  const claim = await store.claim(digestId, channel.id, { receiver_label: channel.label, route: "digest" }, deps.leaseMs ?? DEFAULT_LEASE_MS);
  if (!claim.claimed) return 0;
  const mine = claim.record;
  // The budget first: a storm retries its digest at every alert, and a digest with no budget yet was
  // never sent, so only one that may go out now is worth reading the receiver back for.
  if (!(await store.takeToken(channel.id, deps.rate.perSecond, deps.rate.burst))) {
    await store.settle(mine, { state: "failed", error: "no budget yet; the next delivery or flush retries" });
    return 0;
  }
  const earlier = await sentEarlier(digestId, mine, channel, deps);
  if (earlier) {
    await settleHeld(held, digestId, earlier, channel, deps);
    return held.length;
  }
  const window: DigestWindow = {
    from: held[0]!.held_at, to: held[held.length - 1]!.held_at, id: digestId,
    heldAt: Object.fromEntries(held.map((h) => [h.detail.id, h.held_at])), at: deps.now().toISOString(),
  };
  try {
    const sent = await channel.sendDigest(held.map((h) => h.detail), window);
    await store.settle(mine, { state: "sent", ...sentFields(sent) });
    await settleHeld(held, digestId, sent, channel, deps);
    await store.receiverSucceeded(channel.id);
    return held.length;
  } catch (err) {
    const error = asDeliveryError(err);
    await store.settle(mine, { state: "failed", error: error.message, ...(error.retryable ? {} : { permanent: true }) });
    if (error.retryable || !deps.onReceiverFailed) {
      deps.log.error("digest not delivered; it stays held", { receiver: channel.label, held: held.length, error: error.message });
      return 0;
    }
    // Retrying cannot fix it (a revoked webhook, a missing secret): what it held goes where any alert
    // goes when its receiver fails — health and the fallback — and is recorded so, not held forever.
    deps.log.error("digest refused; what it held goes to the fallback", { receiver: channel.label, held: held.length, error: error.message });
    const run = await store.receiverFailed(channel.id, channel.label, error.message);
    for (const h of held) {
      const told = await deps.onReceiverFailed(h.detail, channel, error, run);
      const record = await store.getDelivery(h.detail.id, channel.id);
      if (record) {
        await store.settle(record, { state: "failed", error: error.message, permanent: true, digest_id: digestId, ...(told?.healthId ? { health_id: told.healthId } : {}) });
      }
      await store.release(h);
    }
    return 0;
  }
}

/** The alerts a digest carried: each recorded as sent in it, and no longer held. */
async function settleHeld(held: HeldAlert[], digestId: string, sent: Sent, channel: Channel, deps: DeliverDeps): Promise<void> {
  for (const h of held) {
    const record = await deps.store.getDelivery(h.detail.id, channel.id);
    if (record) await deps.store.settle(record, { state: "sent", digest_id: digestId, ...sentFields(sent) });
    await deps.store.release(h);
  }
}
