/**
 * From a published event to its receivers: the routes' decisions, one delivery per receiver (mutes,
 * once-only, storm budget, threads), and when a receiver fails after its retries, a `Lookout Health`
 * event and the fallback receiver. Shared by the local bus subscriber and the notify functions.
 */
import type { LookoutEventDetail } from "../alerts/event.js";
import { receiverFailing } from "../alerts/health.js";
import type { Log } from "../ingest/poll.js";
import type { IngestStore } from "../store/ingest-store.js";
import { newAlertItem } from "../store/items.js";
import type { DynamoNotifyStore } from "../store/notify-store.js";
import type { NotifySettings, Receiver } from "../routes/types.js";
import { deliver, type Channel, type DeliveryOutcome } from "./deliver.js";

export interface NotifierDeps {
  settings: NotifySettings;
  store: DynamoNotifyStore;
  /** Where health events go: the table's outbox. */
  outbox: Pick<IngestStore, "raiseAlert" | "expiresAt">;
  /** A receiver as a channel: secrets resolved, sender or transport attached. */
  channelFor(receiver: Receiver): Promise<Channel>;
  now: () => Date;
  log: Log;
}

export interface Delivery {
  route: string;
  receiver: string;
  outcome: DeliveryOutcome;
}

/**
 * Whether an event must be delivered again later: a receiver failed (its fallback was told), or another
 * sender holds a delivery that is not settled yet. SQS redelivers in the cloud, a retry file locally.
 */
export const unfinished = (deliveries: readonly Delivery[]): boolean =>
  deliveries.some((d) => d.outcome === "in_flight" || (d.outcome === "failed" && d.route !== "fallback"));

export async function notifyEvent(
  detail: LookoutEventDetail,
  decisions: ReadonlyArray<{ route: string; receivers: readonly Receiver[] }>,
  deps: NotifierDeps,
): Promise<Delivery[]> {
  if (!decisions.some((d) => d.receivers.length)) return [];
  const mutes = await deps.store.listMutes();
  const out: Delivery[] = [];
  const deliverDeps = {
    store: deps.store,
    now: deps.now,
    rate: deps.settings.slackRate,
    log: deps.log,
    onReceiverFailed: async (failed: LookoutEventDetail, channel: Channel, error: Error) => {
      // Health about a failing receiver is raised once an hour; a health event that fails to deliver
      // raises nothing more (no loops).
      if (failed.kind !== "health") {
        const health = receiverFailing(failed, channel.label, error.message, deps.now());
        await deps.outbox.raiseAlert(newAlertItem(health, deps.now().toISOString(), deps.outbox.expiresAt()));
      }
      for (const fb of fallbackReceivers(deps.settings)) {
        const fallback = await deps.channelFor(fb);
        if (fallback.id === channel.id) continue;
        const outcome = await deliver(failed, "fallback", fallback, mutes, { ...deliverDeps, onReceiverFailed: undefined });
        out.push({ route: "fallback", receiver: fallback.label, outcome });
      }
    },
  };
  for (const decision of decisions) {
    for (const receiver of decision.receivers) {
      const channel = await deps.channelFor(receiver);
      const outcome = await deliver(detail, decision.route, channel, mutes, deliverDeps);
      out.push({ route: decision.route, receiver: channel.label, outcome });
    }
  }
  return out;
}

const fallbackReceivers = (s: NotifySettings): Receiver[] => [
  ...(s.fallback?.slack ? [s.fallback.slack] : []),
  ...(s.fallback?.email ? [s.fallback.email] : []),
];
