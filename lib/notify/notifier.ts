/**
 * From a published event to its receivers: the routes' decisions, one delivery per receiver (mutes,
 * once-only, storm budget, threads), and when a receiver fails after its retries, a `Lookout Health`
 * event and the fallback receiver. Shared by the local bus subscriber and the notify functions.
 */
import { isClosing, type LookoutEventDetail } from "../model/event.js";
import { closesItsIncident, isActive } from "./mutes.js";
import { receiverFailing } from "../alerts/health.js";
import type { Log } from "../model/log.js";
import { receiverLabel } from "../config/receivers.js";
import type { IngestStore } from "../model/ingest-store.js";
import { newAlertItem } from "../alerts/outbox-item.js";
import type { Mute, NotifyStore, ReceiverFailures } from "../model/notify-store.js";
import { FALLBACK_ROUTE, type NotifySettings, type Receiver, receiversOf, type Route, TERMINAL_PREVIEW_ROUTE } from "../config/route-types.js";
import { receiverId } from "../config/receivers.js";
import { decideRoutes } from "../routes/match.js";
import { plainPresenter, type Presenter } from "./presentation.js";
import { deliver, flushHeld, type Channel, type DeliverDeps, type DeliveryOutcome } from "./deliver.js";
import { DIGEST_EVERY_MS } from "./delivery/rate.js";

export interface NotifierDeps {
  settings: NotifySettings;
  /** The routes events are delivered by: an incident's opening goes ahead of its follow-up only where they route it. */
  routes?: readonly Route[];
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
}

/**
 * Whether an event must be delivered again later: a receiver failed for a reason that may pass (its
 * fallback was told), or another sender holds a delivery that is not settled yet. SQS redelivers in
 * the cloud, a retry file locally. A `rejected` delivery is not retried: retrying cannot fix it.
 */
export const unfinished = (deliveries: readonly Delivery[]): boolean =>
  deliveries.some((d) => d.outcome === "in_flight" || (d.outcome === "failed" && d.route !== FALLBACK_ROUTE));

/**
 * Whether the routes send an event to a route's receiver, as the rules and the local bus decide. The
 * terminal preview shows every event; the fallback only what failed elsewhere, so never an opening ahead.
 */
function routedBy(routes: readonly Route[], settings: NotifySettings): NonNullable<DeliverDeps["routedHere"]> {
  return (detail, route, channelId) =>
    route === TERMINAL_PREVIEW_ROUTE ||
    decideRoutes(detail, routes, settings).some((d) => d.route === route && d.receivers.some((r) => receiverId(r) === channelId));
}

/** What the delivery core needs, from the notifier's dependencies. */
const deliverDepsOf = (deps: NotifierDeps): DeliverDeps => ({
  store: deps.store, now: deps.now, rate: deps.settings.slackRate, log: deps.log, present: deps.present ?? plainPresenter,
  ...(deps.sleep ? { sleep: deps.sleep } : {}),
  ...(deps.routes ? { routedHere: routedBy(deps.routes, deps.settings) } : {}),
  // Digests at most a minute apart, closer when the configuration wants them sooner.
  digestEveryMs: Math.min(DIGEST_EVERY_MS, deps.settings.digestWithinMs),
});

export async function notifyEvent(
  detail: LookoutEventDetail,
  decisions: ReadonlyArray<{ route: string; receivers: readonly Receiver[] }>,
  deps: NotifierDeps,
): Promise<Delivery[]> {
  const anyone = decisions.some((d) => d.receivers.length);
  const closes = !!detail.incident_id && isClosing(detail.transition);
  if (!anyone && !closes) return [];
  // Before any receiver turns the incident's message to its resolved form: a click from then on finds
  // it closed, and one that edited the open form meanwhile draws the resolved form again (docs/actions.md).
  if (closes) await deps.store.markClosed({ incident_id: detail.incident_id!, alert_id: detail.id, at: deps.now().toISOString() });
  // Read once: a close lifts its incident's until-resolved mutes in them, then they judge its deliveries.
  const mutes = await liftResolvedMutes(detail, await deps.store.listMutes(), deps);
  if (!anyone) return [];
  const out: Delivery[] = [];
  const deliverDeps = withFallback(deps, mutes, out);
  for (const decision of decisions) {
    for (const receiver of decision.receivers) {
      const channel = await deps.channelFor(receiver);
      const outcome = await deliver(detail, decision.route, channel, deliverDeps.mutes, deliverDeps);
      out.push({ route: decision.route, receiver: channel.label, outcome });
    }
  }
  return out;
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
 * The delivery core's dependencies, with what happens when a receiver fails: a health event and the
 * fallback receivers, whose deliveries are added to `out`.
 */
function withFallback(deps: NotifierDeps, mutes: Mute[], out: Delivery[]): DeliverDeps & { mutes: Mute[] } {
  return {
    ...deliverDepsOf(deps),
    mutes,
    onReceiverFailed: async (failed: LookoutEventDetail, channel: Channel, error: Error, run: ReceiverFailures) => {
      // One health event per episode of failures (its id is anchored on the run's first failure, which
      // the table keeps); a health event that fails to deliver raises nothing more (no loops).
      let healthId: string | undefined;
      if (failed.kind !== "health") {
        const health = receiverFailing(failed, channel.label, error.message, deps.now(), run);
        await deps.outbox.raiseAlert(newAlertItem(health, deps.now().toISOString(), deps.outbox.expiresAt()));
        healthId = health.id;
      }
      for (const fb of receiversOf(deps.settings.fallback)) {
        const fallback = await deps.channelFor(fb);
        if (fallback.id === channel.id) continue;
        const outcome = await deliver(failed, FALLBACK_ROUTE, fallback, mutes, deliverDepsOf(deps));
        out.push({ route: FALLBACK_ROUTE, receiver: fallback.label, outcome });
      }
      return healthId ? { healthId } : {};
    },
  };
}

/**
 * Sends what storms held back for these receivers, one digest each as its budget allows, without
 * waiting for another alert: the local run loop and, in the cloud, dispatch's tick (when alerts are held) call this at least
 * every `notify.digest_within`. Returns how many held alerts went out.
 */
export async function flushDigests(receivers: readonly Receiver[], deps: NotifierDeps): Promise<number> {
  const deliverDeps = withFallback(deps, await deps.store.listMutes(), []);
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
