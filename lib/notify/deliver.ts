/**
 * Delivering one alert to one receiver, once: mutes, idempotency per (alert, receiver), the storm
 * budget with digests, threading of follow-ups, and what happens when a receiver keeps failing.
 * Channel-agnostic: Slack and email are `Channel` adapters. Composed of small stages (delivery/), as
 * Alertmanager's notify pipeline is (silence → dedup → rate → send → record), with the state behind
 * the NotifyStore port so any worker may deliver.
 */
import type { LookoutEventDetail } from "../model/event.js";
import { contentHash } from "../model/hash.js";
import type { Mute, NotifyStore } from "../model/notify-store.js";
import { DIGEST_ROUTE } from "../config/route-types.js";
import type { Channel, IncidentRef } from "./types.js";
import { claimStage } from "./delivery/claim.js";
import { muteStage } from "./delivery/mute.js";
import { readBackStage } from "./delivery/read-back.js";
import { digestBudgetStage, rateOrHoldStage } from "./delivery/rate.js";
import { recordAlertStage, recordDigestStage, sentInDigest } from "./delivery/record.js";
import { sendAlertStage, sendDigestStage } from "./delivery/send.js";
import { type AlertAttempt, chain, type DeliverDeps, type DeliveryOutcome, type DigestAttempt } from "./delivery/stage.js";

export type { Channel, DigestWindow, Sent } from "./types.js";
export type { DeliverDeps, DeliveryOutcome } from "./delivery/stage.js";

const deliverAlert = chain<AlertAttempt, DeliveryOutcome>(
  muteStage,
  claimStage((record) => (record.state === "sending" ? "in_flight" : "duplicate")),
  readBackStage(async (): Promise<DeliveryOutcome> => "duplicate"),
  // What a storm held back goes out first, as one digest, when the budget allows.
  async (a) => void (await flushHeld(a.channel, a.deps)),
  rateOrHoldStage,
  sendAlertStage,
  recordAlertStage,
);

/** A digest is claimed like an alert (keyed by what it holds), so two workers never send the same one. */
const deliverDigest = chain<DigestAttempt, number>(
  claimStage(() => 0),
  digestBudgetStage,
  readBackStage(sentInDigest),
  sendDigestStage,
  recordDigestStage,
);

export function deliver(
  detail: LookoutEventDetail,
  route: string,
  channel: Channel,
  mutes: readonly Mute[],
  deps: DeliverDeps,
): Promise<DeliveryOutcome> {
  // Read only when needed (a retry, a send): a storm holds most alerts without looking.
  let incident: Promise<IncidentRef | undefined> | undefined;
  return deliverAlert({
    id: detail.id, route, channel, deps, detail, mutes, now: deps.now(),
    incident: () => (incident ??= incidentOf(detail, channel, deps.store)),
  });
}

/** The first alert of this alert's incident, and its message ts for this receiver when there is one. */
async function incidentOf(detail: LookoutEventDetail, channel: Channel, store: NotifyStore): Promise<IncidentRef | undefined> {
  if (!detail.incident_id || detail.incident_id === detail.id) return undefined;
  const [first, delivery] = await Promise.all([store.getAlert(detail.incident_id), store.getDelivery(detail.incident_id, channel.id)]);
  if (!first) return undefined;
  return {
    first,
    ...(delivery?.ts ? { ts: delivery.ts } : {}),
    ...(delivery?.message_id ? { messageId: delivery.message_id } : {}),
  };
}

/**
 * Sends one digest of everything held for a receiver, when the budget has a token for it. Returns how
 * many held alerts went out.
 */
export async function flushHeld(channel: Channel, deps: DeliverDeps): Promise<number> {
  const held = await deps.store.heldFor(channel.id);
  if (!held.length) return 0;
  const id = `digest-${contentHash(channel.id, ...held.map((h) => h.detail.id))}`;
  return deliverDigest({ id, route: DIGEST_ROUTE, channel, deps, held, incident: async () => undefined });
}
