/**
 * Delivering one alert to one receiver, once: mutes, idempotency per (alert, receiver), the storm
 * budget with digests, threading of follow-ups, and what happens when a receiver keeps failing.
 * Channel-agnostic: Slack and email are `Channel` adapters. Composed of small stages (delivery/), as
 * Alertmanager's notify pipeline is (silence → dedup → rate → send → record), with the state behind
 * the NotifyStore port so any worker may deliver.
 */
import type { LookoutEventDetail } from "../model/event.js";
import { contentHash } from "../model/hash.js";
import { isClosing } from "../model/event.js";
import { changesAlertId } from "../alerts/changes-listed.js";
import type { DeliveryRecord, HeldAlert, Mute, NotifyStore } from "../model/notify-store.js";
import { DIGEST_ROUTE } from "../config/route-types.js";
import type { AmendedRef, Channel, IncidentRef } from "./types.js";
import { claimDigestStage, claimStage } from "./delivery/claim.js";
import { markCarriedStage } from "./delivery/carry.js";
import { incidentStage } from "./delivery/incident.js";
import { muteStage } from "./delivery/mute.js";
import { readBackStage } from "./delivery/read-back.js";
import { digestBudgetStage, digestDue, digestGatherMs, rateOrHoldStage } from "./delivery/rate.js";
import { recordAlertStage, recordDigestStage, recordRoot, sentInDigest } from "./delivery/record.js";
import { sendAlertStage, sendDigestStage } from "./delivery/send.js";
import { type AlertAttempt, chain, type DeliverDeps, type DeliveryOutcome, type DigestAttempt } from "./delivery/stage.js";

export type { Channel, DigestWindow, Sent } from "./types.js";
export type { DeliverDeps, DeliveryOutcome } from "./delivery/stage.js";

const deliverAlert = chain<AlertAttempt, DeliveryOutcome>(
  muteStage,
  incidentStage,
  claimStage((record) => (record.state === "sending" ? "in_flight" : "duplicate")),
  // Found sent by an earlier attempt: settled as sent, and the root it may be, recorded.
  readBackStage(async (a, sent): Promise<DeliveryOutcome> => (await recordRoot(a, sent), "duplicate")),
  // What a storm held back goes out first, as one digest, when the budget allows and the storm has gathered.
  async (a) => void (await flushHeld(a.channel, a.deps, { gather: true })),
  rateOrHoldStage,
  sendAlertStage,
  recordAlertStage,
);

/** Whether `held` was held at least `digestGatherMs` ago. */
function gathered(held: HeldAlert, deps: DeliverDeps): boolean {
  const at = Date.parse(held.held_at);
  return Number.isNaN(at) || at <= deps.now().getTime() - digestGatherMs(deps);
}

/**
 * A digest is claimed like an alert (keyed by what it first held), so two workers never send the same one.
 * Once it has its budget it marks what it carries; a digest sent again (its sender died, or the receiver
 * failed) carries what it did the first time, so the receiver's copy is found by its id (read back), and
 * what was held since goes in the next one: never shown twice.
 */
const deliverDigest = chain<DigestAttempt, number>(
  claimDigestStage,
  digestBudgetStage,
  markCarriedStage,
  readBackStage(sentInDigest),
  sendDigestStage,
  recordDigestStage,
);

/** How many alerts deep one delivery may deliver what it follows first (an amendment of a follow-up, then its opening). */
const PREDECESSORS_DEEP = 2;

export function deliver(
  detail: LookoutEventDetail,
  route: string,
  channel: Channel,
  mutes: readonly Mute[],
  deps: DeliverDeps,
  depth = 0,
): Promise<DeliveryOutcome> {
  // Read only when needed (a retry, a send): a storm holds most alerts without looking.
  let incident: Promise<IncidentRef | undefined> | undefined;
  const presentation = deps.present?.(detail, route);
  return deliverAlert({
    id: detail.id, route, channel, deps, detail, mutes, now: deps.now(),
    ...(presentation ? { presentation } : {}),
    incident: () => (incident ??= incidentOf(detail, channel, deps.store)),
    rereadIncident: () => void (incident = undefined),
    ...(depth < PREDECESSORS_DEEP ? { deliverFirst: (p: LookoutEventDetail) => deliver(p, route, channel, mutes, deps, depth + 1) } : {}),
  });
}

/**
 * The incident as this receiver shows it (docs/events.md, "Incidents"): its first alert, and the root
 * message the receiver shows for it — the root recorded for (incident, receiver), else the opening's own
 * message (or the digest that carried it) — with what became of the opening's delivery there. For an
 * amendment, also the alert it amends and that alert's own message. Undefined: not in an incident, or
 * nothing of it is known (its opening was backfilled and this receiver shows no root).
 */
async function incidentOf(detail: LookoutEventDetail, channel: Channel, store: NotifyStore): Promise<IncidentRef | undefined> {
  const incidentId = detail.incident_id;
  const followUp = !!incidentId && incidentId !== detail.id;
  if (!incidentId && !detail.amends) return undefined;
  const [opening, delivery, recorded, amended, changes, ack] = await Promise.all([
    followUp ? store.getRaised(incidentId!) : undefined,
    followUp ? store.getDelivery(incidentId!, channel.id) : undefined,
    incidentId ? store.getRoot(incidentId, channel.id) : undefined,
    detail.amends ? amendedOf(detail.amends, channel, store) : undefined,
    // The resolved form of the opening keeps what changed before it failed.
    followUp && isClosing(detail.transition) ? store.getAlert(changesAlertId(incidentId!)) : undefined,
    // An amendment redraws the message it amends, and a close draws it resolved: who acknowledged the incident stays on it.
    (detail.amends || isClosing(detail.transition)) && incidentId ? store.getAcknowledgement(incidentId) : undefined,
  ]);
  const first = opening?.detail;
  // A root of another alert: this event follows it (an opening too, when it came after a follow-up took the root).
  const root = recorded && recorded.alert_id !== detail.id ? recorded : undefined;
  const rootAlert = root ? (root.alert_id === incidentId ? first : await store.getAlert(root.alert_id)) : undefined;
  const base = first ?? rootAlert ?? amended?.alert;
  if (!base || (!followUp && !root)) return undefined;
  const ref: IncidentRef = {
    first: base,
    shown: false,
    ...(delivery ? { told: delivery.state } : {}),
    ...(opening?.quiet ? { quiet: true } : {}),
    ...(amended ? { amended } : {}),
    ...(changes ? { changes } : {}),
    ...(ack ? { acknowledged: { userId: ack.by.id, at: ack.at } } : {}),
  };
  if (root) {
    Object.assign(ref, { shown: true }, rootAlert && rootAlert.id !== base.id ? { root: rootAlert } : {});
    if (root.ts) ref.ts = root.ts;
    if (root.channel) ref.channel = root.channel;
    if (root.message_id) ref.messageId = root.message_id;
  } else if (first && delivery?.state === "sent") {
    ref.shown = true;
    if (delivery.ts) ref.ts = delivery.ts;
    if (delivery.channel) ref.channel = delivery.channel;
    if (delivery.digest_id) ref.inDigest = true;
    if (delivery.message_id) ref.messageId = delivery.message_id;
  }
  return ref;
}

/** A delivery's own Slack message: not one it shared in a digest (updating that would replace the digest). */
const messageOf = (d: DeliveryRecord): { ts?: string; channel?: string } =>
  d.state === "sent" && d.ts && !d.digest_id ? { ts: d.ts, ...(d.channel ? { channel: d.channel } : {}) } : {};

async function amendedOf(alertId: string, channel: Channel, store: NotifyStore): Promise<AmendedRef | undefined> {
  const [alert, delivery] = await Promise.all([store.getAlert(alertId), store.getDelivery(alertId, channel.id)]);
  return alert ? { alert, ...(delivery ? messageOf(delivery) : {}) } : undefined;
}

/**
 * Sends one digest for a receiver, when the budget has a token for it: a digest that must go again,
 * else one of everything held. Returns how many held alerts went out. `gather`: asked before an alert's
 * delivery, in the middle of a storm, a new digest waits until its first alert was held
 * `digestGatherMs` (so one pass's storm is one digest); a scheduled flush (the tick, the loop, the end of
 * `run --once`) comes after the pass and sends what is held.
 */
export async function flushHeld(channel: Channel, deps: DeliverDeps, opts: { gather?: boolean } = {}): Promise<number> {
  // Asked before every delivery: a look at the oldest held item (held items are kept in the order they
  // were held), then the digest's budget, then whether the storm has gathered, before reading all.
  const [oldest] = await deps.store.heldFor(channel.id, 1);
  if (!oldest) return 0;
  if (!(await digestDue({ channel, deps }))) return 0;
  // A new digest gathers what a storm holds in one pass: its first alert must have waited a little (a
  // time that does not parse counts as long ago: a bad item never holds the digest back). A digest
  // that must go again does not wait.
  if (opts.gather && !oldest.digest_id && !gathered(oldest, deps)) return 0;
  const held = await deps.store.heldFor(channel.id);
  if (!held.length) return 0;
  // A digest that got its budget and was not settled (its sender died, or the receiver failed) goes
  // again first, with what it carried; what is held besides waits for the next one.
  const pending = held.find((h) => h.digest_id)?.digest_id;
  const carried = pending ? held.filter((h) => h.digest_id === pending) : held.filter((h) => !h.digest_id);
  const id = pending ?? `digest-${contentHash(channel.id, ...carried.map((h) => h.detail.id))}`;
  return deliverDigest({ id, route: DIGEST_ROUTE, channel, deps, held: carried, incident: async () => undefined });
}
