/**
 * Escalation (docs/actions.md, "Escalation"): a critical incident a route with `escalate` delivered, and
 * that nobody acknowledged or closed within `escalate.after`, is escalated once — re-announced where the
 * route's receivers show it, mentioning `escalate.mention`, and sent to `escalate.to`. No process waits for
 * it: delivering the incident schedules it (an item with its due time), and the tick that flushes digests
 * (dispatch's in the cloud, the run loop's on one machine) escalates what is due. Here: the pure decisions,
 * and the delivery of an escalation to one receiver; the notifier (notifier.ts) puts them together.
 */
import { isClosing, type LookoutEventDetail, type Severity } from "../model/event.js";
import { contentHash } from "../model/hash.js";
import type { Escalation, IncidentAcknowledgement, Mute, NotifyStore } from "../model/notify-store.js";
import { escalationKinds, type Route } from "../config/route-types.js";
import { DeliveryError, type Channel, type EscalationNotice, type IncidentRef, type Presentation, type Sent } from "./types.js";
import { claimStage } from "./delivery/claim.js";
import { readBackStage } from "./delivery/read-back.js";
import { recordAlertStage, recordRoot } from "./delivery/record.js";
import { ask } from "./delivery/send.js";
import { type AlertAttempt, chain, type DeliverDeps, type DeliveryOutcome, type Stage } from "./delivery/stage.js";

// ---------------------------------------------------------------------------------------------- decisions

/** What a route's deliveries of an alert must have come to for it to schedule: someone was, or is being, told. */
const TOLD: ReadonlySet<DeliveryOutcome> = new Set(["sent", "held", "duplicate", "failed", "rejected", "in_flight"]);

/**
 * Whether delivering this alert by this route schedules an escalation: the route escalates, the alert is
 * part of an incident and opens or continues it (not its close, not an amendment), it is critical as the
 * route shows it (after its `severity`), and some receiver of the route was told of it (a muted one was not).
 */
export function schedules(detail: LookoutEventDetail, route: Route | undefined, severity: Severity, outcomes: readonly DeliveryOutcome[]): route is Route & { escalate: NonNullable<Route["escalate"]> } {
  return !!route?.escalate && !!detail.incident_id && !isClosing(detail.transition) && !detail.amends && severity === "critical" && outcomes.some((o) => TOLD.has(o));
}

/** The escalation a route's delivery of an incident's alert schedules: due `after` from now. */
export function newEscalation(detail: LookoutEventDetail, route: Route & { escalate: NonNullable<Route["escalate"]> }, now: Date): Escalation {
  return {
    incident_id: detail.incident_id!, route: route.name, alert_id: detail.id, state: "pending", kinds: escalationKinds(route),
    due_at: new Date(now.getTime() + route.escalate.afterMs).toISOString(), scheduled_at: now.toISOString(),
  };
}

/**
 * What a tick does with a due entry, from its escalation as stored:
 *  - `escalate`: pending, due, neither acknowledged nor closed: it is escalated now (once: a conditional write);
 *  - `cancel`: due but acknowledged or muted (before the escalation went out), or its route no longer escalates;
 *  - `deliver`: escalated (by this tick or another): its deliveries are made, each once;
 *  - `wait`: not due yet;
 *  - `release`: cancelled (by the close, or an acknowledgement), or gone: nothing to do but drop the entry.
 */
export type EscalationStep = { step: "escalate" } | { step: "cancel"; reason: string } | { step: "deliver" } | { step: "wait" } | { step: "release" };

export function nextStep(
  e: Escalation | undefined,
  route: Route | undefined,
  seen: { ack?: IncidentAcknowledgement | undefined; mute?: Mute | undefined; alertGone?: boolean },
  now: Date,
): EscalationStep {
  if (!e || e.state === "cancelled") return { step: "release" };
  if (e.state === "escalated") return { step: "deliver" };
  if (Date.parse(e.due_at) > now.getTime()) return { step: "wait" };
  if (!route?.escalate) return { step: "cancel", reason: `route ${e.route} no longer escalates` };
  // Nothing to show anyone (its retention ended): cancelled, saying so, never marked escalated with nobody paged.
  if (seen.alertGone) return { step: "cancel", reason: `its alert ${e.alert_id} is no longer stored` };
  if (seen.ack) return { step: "cancel", reason: `acknowledged by ${seen.ack.by.name} at ${seen.ack.at}` };
  // Muted since (Mute 1h, Mute until resolved, `lookout mute`): someone chose not to be called about it.
  if (seen.mute) return { step: "cancel", reason: `muted until ${seen.mute.until} by ${seen.mute.created_by}: ${seen.mute.reason}` };
  return { step: "escalate" };
}

/**
 * What an incident's close does to an escalation: one still pending is cancelled (it closed in time);
 * one that went out has its `to` told of the close too, so whoever was paged sees it resolve.
 */
export function onClose(e: Escalation, closing: LookoutEventDetail): { cancel: string } | "tell_paged" | "nothing" {
  if (e.state === "pending") return { cancel: `closed by alert ${closing.id} (${closing.transition})` };
  return e.state === "escalated" ? "tell_paged" : "nothing";
}

/** An escalation's own id: what its messages carry, so a retry reads them back. */
export const escalationId = (e: Pick<Escalation, "incident_id" | "route">): string => `esc-${contentHash(e.incident_id, e.route)}`;

/** The presentation of an escalation: the route's, mentioning the escalation's mentions instead of its own. */
export const escalationPresentation = (p: Presentation, mentions: readonly string[]): Presentation => ({ ...p, severity: "critical", mentions: [...mentions] });

// ---------------------------------------------------------------------------------------------- delivery

/**
 * How a receiver shows the incident: its root message, else the delivery of the escalated alert there (a
 * digest, a message the root was not recorded for). Not shown: a receiver of the route that never showed
 * it is not re-announced to; `to` gets a message of its own.
 */
export async function shownAt(store: Pick<NotifyStore, "getRoot" | "getDelivery">, first: LookoutEventDetail, channelId: string): Promise<IncidentRef> {
  const [root, delivery] = await Promise.all([store.getRoot(first.incident_id!, channelId), store.getDelivery(first.id, channelId)]);
  if (root) {
    return { first, shown: true, ...(root.ts ? { ts: root.ts } : {}), ...(root.channel ? { channel: root.channel } : {}), ...(root.message_id ? { messageId: root.message_id } : {}) };
  }
  if (delivery?.state === "sent") return { first, shown: true, ...(delivery.message_id ? { messageId: delivery.message_id } : {}) };
  return { first, shown: false };
}

interface EscalationAttempt extends AlertAttempt {
  readonly notice: EscalationNotice;
  readonly presentation: Presentation;
}

const sendEscalationStage: Stage<EscalationAttempt, never> = (a) =>
  ask(a, async () => {
    if (!a.channel.sendEscalation) throw new DeliveryError(`${a.channel.label} cannot send an escalation`, false);
    return a.channel.sendEscalation(a.notice, await a.incident(), a.presentation);
  });

/**
 * One escalation to one receiver, once: claimed (recorded with the escalated alert, apart per route), read
 * back after a failed attempt, sent, recorded. A receiver that fails is told as any delivery is (its run of
 * failures, health and the fallback: `deps.onReceiverFailed`); `to`'s message becomes its root of the
 * incident, so the close resolves it there.
 */
const escalate = chain<EscalationAttempt, DeliveryOutcome>(
  claimStage((record) => (record.state === "sending" ? "in_flight" : "duplicate")),
  readBackStage(async (a, sent: Sent): Promise<DeliveryOutcome> => (await recordRoot(a, sent), "duplicate")),
  sendEscalationStage,
  recordAlertStage,
);

export function deliverEscalation(
  e: Escalation,
  notice: EscalationNotice,
  route: string,
  channel: Channel,
  incident: IncidentRef,
  presentation: Presentation,
  deps: DeliverDeps,
): Promise<DeliveryOutcome> {
  return escalate({
    id: notice.id, route, channel, deps, detail: notice.first, mutes: [], now: deps.now(), notice, presentation,
    recordAs: { alertId: e.alert_id, receiverId: `${channel.id}#escalation#${e.route}`, escalation: e.route },
    incident: async () => incident,
  });
}
