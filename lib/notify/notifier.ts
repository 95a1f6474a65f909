/**
 * From a published event to its receivers: the routes' decisions, one delivery per receiver (mutes,
 * once-only, storm budget, threads), and when a receiver fails after its retries, a `Lookout Health`
 * event and the fallback receiver. Shared by the local bus subscriber and the notify functions.
 */
import { isClosing, type LookoutEventDetail } from "../model/event.js";
import { activeMute, closesItsIncident, isActive } from "./mutes.js";
import { receiverFailing } from "../alerts/health.js";
import type { Log } from "../model/log.js";
import { receiverLabel } from "../config/receivers.js";
import type { IngestStore } from "../model/ingest-store.js";
import { newAlertItem } from "../alerts/outbox-item.js";
import { type DueEscalation, type Escalation, kindOf, type Mute, type NotifyStore, type ReceiverFailures, type ReceiverKind } from "../model/notify-store.js";
import {
  escalationReceivers, FALLBACK_ROUTE, type NotifySettings, reAnnounces, type Receiver, receiversOf, type Route, routeReceivers,
} from "../config/route-types.js";
import { distinctReceivers, receiverId } from "../config/receivers.js";
import { decideRoutes, type RouteDelivery } from "../routes/match.js";
import { plainPresenter, type Presenter, slackMentionToken } from "./presentation.js";
import { deliverEscalation, escalationId, escalationPresentation, newEscalation, nextStep, onClose, schedules, shownAt } from "./escalation.js";
import type { EscalationNotice } from "./types.js";
import { deliver, flushHeld, type Channel, type DeliverDeps, type DeliveryOutcome } from "./deliver.js";
import { DIGEST_EVERY_MS } from "./delivery/rate.js";

export interface NotifierDeps {
  settings: NotifySettings;
  /** The routes events are delivered by: an incident's opening goes ahead of its follow-up only where they route it. */
  routes?: readonly Route[];
  /**
   * Receivers shown every event besides what the routes decide, each under a route name of its own (one
   * machine's terminal preview of Slack): their follow-ups go to them as they do to a route's receivers.
   */
  everyEventTo?: readonly RouteDelivery[];
  store: NotifyStore;
  /** Where health events go: the table's outbox. */
  outbox: Pick<IngestStore, "raiseAlert" | "expiresAt">;
  /** A receiver as a channel: secrets resolved, sender or transport attached. */
  channelFor(receiver: Receiver): Promise<Channel>;
  now: () => Date;
  log: Log;
  /** How each route shows an event (severity override, mentions, links); absent: the event as raised. */
  present?: Presenter;
  /** Waits in delivery (a follow-up for its opening); default a timer. */
  sleep?: (ms: number) => Promise<void>;
}

export interface Delivery {
  route: string;
  receiver: string;
  outcome: DeliveryOutcome;
  /** An escalation's delivery: the alert it escalated. */
  escalated?: LookoutEventDetail;
}

/**
 * Whether an event must be delivered again later: a receiver failed for a reason that may pass (its
 * fallback was told), the fallback itself did (else a receiver that refused for good and a fallback down
 * for a minute would leave it shown to no one), or another sender holds a delivery that is not settled
 * yet. SQS redelivers in the cloud, a retry file locally. A `rejected` delivery alone is not retried:
 * retrying cannot fix it.
 */
export const unfinished = (deliveries: readonly Delivery[]): boolean =>
  deliveries.some((d) => d.outcome === "in_flight" || d.outcome === "failed");

/**
 * Whether the routes send an event to a route's receiver, as the rules and the local bus decide; those
 * shown every event get it. The fallback gets only what failed elsewhere, so never an opening ahead.
 */
function routedBy(routes: readonly Route[], settings: NotifySettings, everyEventTo: readonly RouteDelivery[] = []): NonNullable<DeliverDeps["routedHere"]> {
  const to = (decisions: readonly RouteDelivery[], route: string, channelId: string) =>
    decisions.some((d) => d.route === route && d.receivers.some((r) => receiverId(r) === channelId));
  return (detail, route, channelId) => to(everyEventTo, route, channelId) || to(decideRoutes(detail, routes, settings), route, channelId);
}

/** What the delivery core needs, from the notifier's dependencies. */
const deliverDepsOf = (deps: NotifierDeps): DeliverDeps => ({
  store: deps.store, now: deps.now, rate: deps.settings.slackRate, log: deps.log, present: deps.present ?? plainPresenter,
  ...(deps.sleep ? { sleep: deps.sleep } : {}),
  ...(deps.routes ? { routedHere: routedBy(deps.routes, deps.settings, deps.everyEventTo) } : {}),
  // Digests at most a minute apart, closer when the configuration wants them sooner.
  digestEveryMs: Math.min(DIGEST_EVERY_MS, deps.settings.digestWithinMs),
});

/** One route's receivers for an event; `escalateTo`: its `escalate.to` (of the kinds this process sends), told of a close after an escalation. */
export interface RouteDecision {
  route: string;
  receivers: readonly Receiver[];
  escalateTo?: readonly Receiver[];
}

export async function notifyEvent(detail: LookoutEventDetail, decisions: readonly RouteDecision[], deps: NotifierDeps): Promise<Delivery[]> {
  const closes = !!detail.incident_id && isClosing(detail.transition);
  // A close cancels its incident's pending escalations; where one went out, whoever was paged sees it resolve.
  const paged = closes ? await closeEscalations(detail, deps) : new Set<string>();
  const targets = decisions.map((d) => ({
    route: d.route,
    receivers: paged.has(d.route) && d.escalateTo?.length ? distinctReceivers([...d.receivers, ...d.escalateTo]) : d.receivers,
  }));
  const anyone = targets.some((d) => d.receivers.length);
  if (!anyone && !closes) return [];
  // Before any receiver turns the incident's message to its resolved form: a click from then on finds
  // it closed, and one that edited the open form meanwhile draws the resolved form again (docs/actions.md).
  if (closes) await deps.store.markClosed({ incident_id: detail.incident_id!, alert_id: detail.id, at: deps.now().toISOString() });
  // Read once: a close lifts its incident's until-resolved mutes in them, then they judge its deliveries.
  const mutes = await liftResolvedMutes(detail, await deps.store.listMutes({ consistent: closes }), deps);
  if (!anyone) return [];
  const out: Delivery[] = [];
  const deliverDeps = withFallback(deps, out, (failed, fallback) => deliver(failed, FALLBACK_ROUTE, fallback, mutes, deliverDepsOf(deps)));
  for (const decision of targets) {
    const outcomes: DeliveryOutcome[] = [];
    for (const receiver of decision.receivers) {
      const channel = await deps.channelFor(receiver);
      const outcome = await deliver(detail, decision.route, channel, mutes, deliverDeps);
      outcomes.push(outcome);
      out.push({ route: decision.route, receiver: channel.label, outcome });
    }
    await scheduleEscalation(detail, decision.route, outcomes, deps);
  }
  return out;
}

/** A critical incident a route delivered is escalated later unless acknowledged or closed (docs/actions.md, "Escalation"). */
async function scheduleEscalation(detail: LookoutEventDetail, routeName: string, outcomes: DeliveryOutcome[], deps: NotifierDeps): Promise<void> {
  const route = deps.routes?.find((r) => r.name === routeName);
  if (!route?.escalate) return;
  const severity = (deps.present ?? plainPresenter)(detail, routeName).severity;
  if (!schedules(detail, route, severity, outcomes)) return;
  await deps.store.scheduleEscalation(newEscalation(detail, route, deps.now()));
}

/** The routes whose escalation of this incident went out (their `to` is told of the close); pending ones are cancelled. */
async function closeEscalations(detail: LookoutEventDetail, deps: NotifierDeps): Promise<Set<string>> {
  const paged = new Set<string>();
  if (!deps.routes?.some((r) => r.escalate)) return paged;
  for (const e of await deps.store.escalationsOf(detail.incident_id!)) {
    const what = onClose(e, detail);
    if (what === "nothing") continue;
    if (what === "tell_paged") {
      paged.add(e.route);
    } else if (await deps.store.settleEscalation(e.incident_id, e.route, { state: "cancelled", settled_at: deps.now().toISOString(), reason: what.cancel })) {
      deps.log.info("escalation cancelled: the incident closed in time", { incident: e.incident_id, route: e.route });
    } else if ((await deps.store.getEscalation(e.incident_id, e.route))?.state === "escalated") {
      paged.add(e.route); // a tick escalated it meanwhile
    }
  }
  return paged;
}

/**
 * The close of an incident lifts the mutes set until it resolved ("Mute until resolved"), whether or
 * not the close itself goes to any receiver (a route may keep recoveries quiet).
 */
async function liftResolvedMutes(detail: LookoutEventDetail, mutes: Mute[], deps: NotifierDeps): Promise<Mute[]> {
  const now = deps.now();
  return Promise.all(mutes.map(async (m) => {
    if (!isActive(m, now) || !closesItsIncident(m, detail)) return m;
    const lifted = { ...m, lifted_at: now.toISOString() };
    await deps.store.putMute(lifted);
    return lifted;
  }));
}

/**
 * The delivery core's dependencies, with what happens when a receiver fails: a health event, and
 * `toFallback` for each fallback receiver (the alert, or the escalation, that failed), whose deliveries
 * are added to `out`.
 */
function withFallback(
  deps: NotifierDeps,
  out: Delivery[],
  toFallback: (failed: LookoutEventDetail, fallback: Channel) => Promise<DeliveryOutcome>,
): DeliverDeps {
  return {
    ...deliverDepsOf(deps),
    onReceiverFailed: async (failed: LookoutEventDetail, channel: Channel, error: Error, run: ReceiverFailures) => {
      // One health event per episode of failures (its id is anchored on the run's first failure, which
      // the table keeps); a health event that fails to deliver raises nothing more (no loops).
      let healthId: string | undefined;
      if (failed.kind !== "health") {
        const health = receiverFailing(failed, channel.label, error.message, deps.now(), run);
        await deps.outbox.raiseAlert(newAlertItem(health, deps.now().toISOString(), deps.outbox.expiresAt()));
        healthId = health.id;
      }
      let fallbackFailed = false;
      for (const fb of receiversOf(deps.settings.fallback)) {
        const fallback = await deps.channelFor(fb);
        if (fallback.id === channel.id) continue;
        const outcome = await toFallback(failed, fallback);
        fallbackFailed ||= outcome === "failed";
        out.push({ route: FALLBACK_ROUTE, receiver: fallback.label, outcome });
      }
      return { ...(healthId ? { healthId } : {}), ...(fallbackFailed ? { fallbackFailed } : {}) };
    },
  };
}

/**
 * Sends what storms held back for these receivers, one digest each as its budget allows, without
 * waiting for another alert: the local run loop and, in the cloud, dispatch's tick (when alerts are held) call this at least
 * every `notify.digest_within`. Returns how many held alerts went out.
 */
export async function flushDigests(receivers: readonly Receiver[], deps: NotifierDeps): Promise<number> {
  const mutes = await deps.store.listMutes();
  const deliverDeps = withFallback(deps, [], (failed, fallback) => deliver(failed, FALLBACK_ROUTE, fallback, mutes, deliverDepsOf(deps)));
  let sent = 0;
  let failed: unknown;
  // One receiver's failure does not hold the others' digests; it fails the call after they were tried.
  for (const r of receivers) {
    try {
      sent += await flushHeld(await deps.channelFor(r), deliverDeps);
    } catch (err) {
      deps.log.error("digest flush failed for a receiver; the others were flushed", { receiver: receiverLabel(r), error: (err as Error).message });
      failed ??= err;
    }
  }
  if (failed) throw failed;
  return sent;
}

/**
 * Escalates what is due for receivers of these kinds (docs/actions.md, "Escalation"): each due entry's
 * escalation moves on once (escalated or cancelled, by a conditional write) and an escalated one is
 * delivered to this kind's receivers, each once, however many ticks race. The local run loop and, in the
 * cloud, the notify function of each kind (invoked by dispatch's tick when something is due) call this.
 * Returns the deliveries made.
 */
export async function flushEscalations(kinds: readonly ReceiverKind[], deps: NotifierDeps): Promise<Delivery[]> {
  const out: Delivery[] = [];
  if (!deps.routes?.some((r) => r.escalate)) return out;
  let failed: unknown;
  // The mutes, read once for the flush (only if some escalation is pending and due).
  let mutes: Promise<Mute[]> | undefined;
  const readMutes = () => (mutes ??= deps.store.listMutes());
  for (const kind of kinds) {
    for (const due of await deps.store.dueEscalations(kind, deps.now().toISOString())) {
      // One escalation's failure does not hold back the others; it fails the call after they were tried.
      try {
        await flushEscalation(due, deps, out, readMutes);
      } catch (err) {
        deps.log.error("escalation failed; it is tried again at the next tick", { incident: due.incident_id, route: due.route, error: (err as Error).message });
        failed ??= err;
      }
    }
  }
  if (failed) throw failed;
  return out;
}

async function flushEscalation(due: DueEscalation, deps: NotifierDeps, out: Delivery[], readMutes: () => Promise<Mute[]>): Promise<void> {
  const { store } = deps;
  const now = deps.now();
  const route = deps.routes?.find((r) => r.name === due.route);
  let e = await store.getEscalation(due.incident_id, due.route);
  const first = e && (await store.getAlert(e.alert_id));
  // What may cancel it, read only when it is pending and due.
  const deciding = e?.state === "pending" && Date.parse(e.due_at) <= now.getTime();
  const [ack, mutes] = deciding ? await Promise.all([store.getAcknowledgement(due.incident_id), readMutes()]) : [];
  const mute = first && mutes ? activeMute(first, mutes, now) : undefined;
  const step = nextStep(e, route, { ack, mute, alertGone: !!e && !first }, now);
  if (step.step === "wait") return;
  if (step.step === "release") return store.releaseDueEscalation(due);
  if (step.step === "cancel") {
    // Another tick (or the close) may have moved it on first: the next tick reads what it became.
    if (await store.settleEscalation(due.incident_id, due.route, { state: "cancelled", settled_at: now.toISOString(), reason: step.reason })) await store.releaseDueEscalation(due);
    return;
  }
  if (step.step === "escalate") {
    const settled = { state: "escalated" as const, settled_at: now.toISOString() };
    if (await store.settleEscalation(due.incident_id, due.route, settled)) {
      deps.log.info("escalated: not acknowledged in time", { incident: due.incident_id, route: due.route });
      e = { ...e!, ...settled };
    } else {
      // Another tick escalated it, or the close cancelled it, first: what it became is read.
      e = await store.getEscalation(due.incident_id, due.route);
      if (e?.state !== "escalated") return; // cancelled meanwhile by the close: the next tick releases it
    }
  }
  // Its route no longer escalates (a deploy in between), or the alert is gone: nothing to send.
  if (!route?.escalate || !first) return store.releaseDueEscalation(due);
  const outcomes = await deliverEscalations(e!, route as Route & { escalate: NonNullable<Route["escalate"]> }, first, due.kind, deps, out);
  // Done for this kind once every receiver's delivery is settled; else the next tick comes back to it.
  if (!unfinished(outcomes)) await store.releaseDueEscalation(due);
}

/** The escalation to this kind's receivers: the route's that show the incident, and `to`. */
async function deliverEscalations(
  e: Escalation,
  route: Route & { escalate: NonNullable<Route["escalate"]> },
  first: LookoutEventDetail,
  kind: ReceiverKind,
  deps: NotifierDeps,
  out: Delivery[],
): Promise<Delivery[]> {
  const notice: EscalationNotice = { id: escalationId(e), first, after: route.escalate.after };
  const presentation = escalationPresentation((deps.present ?? plainPresenter)(first, route.name), (route.escalate.mention ?? []).map(slackMentionToken));
  const paged = new Set(escalationReceivers(route).map(receiverId));
  const mine: Delivery[] = [];
  const failover = withFallback(deps, mine, (_failed, fallback) =>
    deliverEscalation(e, notice, FALLBACK_ROUTE, fallback, { first, shown: false }, presentation, deliverDepsOf(deps)));
  for (const r of distinctReceivers([...routeReceivers(route), ...escalationReceivers(route)]).filter((x) => kindOf(x) === kind && reAnnounces(x))) {
    const channel = await deps.channelFor(r);
    const incident = await shownAt(deps.store, first, channel.id);
    // Re-announced where the incident is shown; `to` is paged whether or not it showed it.
    if (!incident.shown && !paged.has(receiverId(r))) continue;
    mine.push({ route: route.name, receiver: channel.label, outcome: await deliverEscalation(e, notice, route.name, channel, incident, presentation, failover) });
  }
  out.push(...mine.map((d) => ({ ...d, escalated: first })));
  return mine;
}

