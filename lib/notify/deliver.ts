/**
 * Delivering one alert to one receiver, once: mutes, idempotency per (alert, receiver), the storm
 * budget with digests, threading of follow-ups, and what happens when a receiver keeps failing.
 * Channel-agnostic: Slack and email are `Channel` adapters. Modelled on Alertmanager's notify pipeline
 * (inhibit/silence → dedup → rate → send → record), with the state in DynamoDB so any worker may deliver.
 */
import type { LookoutEventDetail } from "../alerts/event.js";
import type { Log } from "../ingest/poll.js";
import { contentHash } from "../ingest/hash.js";
import type { DynamoNotifyStore, Mute } from "../store/notify-store.js";
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
  sendDigest(held: LookoutEventDetail[], window: { from: string; to: string }): Promise<Sent>;
}

export interface DeliverDeps {
  store: DynamoNotifyStore;
  now: () => Date;
  /** Per receiver: messages per second and burst (DESIGN.md: default 1/s, burst 10). */
  rate: { perSecond: number; burst: number };
  /** How long a sender may take before another worker assumes it died and sends again. */
  leaseMs?: number;
  log: Log;
  /** Told when a receiver failed after its own retries: raise health, try the fallback. */
  onReceiverFailed?: (detail: LookoutEventDetail, channel: Channel, error: DeliveryError) => Promise<void>;
}

export type DeliveryOutcome = "sent" | "duplicate" | "muted" | "held" | "failed";

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
  if (!claim.claimed) return "duplicate";
  const mine = claim.record;

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

  try {
    const sent = await channel.send(detail, await incidentOf(detail, channel, store));
    await store.settle(mine, { state: "sent", ...sentFields(sent) });
    return "sent";
  } catch (err) {
    const error = err instanceof DeliveryError ? err : new DeliveryError((err as Error).message, true);
    await store.settle(mine, { state: "failed", error: error.message });
    deps.log.error("receiver failed after its retries", { alert: detail.id, receiver: channel.label, error: error.message, retryable: error.retryable });
    await deps.onReceiverFailed?.(detail, channel, error);
    return "failed";
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
  if (!(await store.takeToken(channel.id, deps.rate.perSecond, deps.rate.burst))) {
    await store.settle(mine, { state: "failed", error: "no budget yet; the next delivery or flush retries" });
    return 0;
  }
  const window = { from: held[0]!.held_at, to: held[held.length - 1]!.held_at };
  try {
    const sent = await channel.sendDigest(held.map((h) => h.detail), window);
    await store.settle(mine, { state: "sent", ...sentFields(sent) });
    for (const h of held) {
      const record = await store.getDelivery(h.detail.id, channel.id);
      if (record) await store.settle(record, { state: "sent", digest_id: digestId, ...sentFields(sent) });
      await store.release(h);
    }
    return held.length;
  } catch (err) {
    await store.settle(mine, { state: "failed", error: (err as Error).message });
    deps.log.error("digest not delivered; it stays held", { receiver: channel.label, held: held.length, error: (err as Error).message });
    return 0;
  }
}
