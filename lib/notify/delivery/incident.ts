/**
 * Incident: what an event's place in its incident decides before anything is claimed or sent
 * (docs/events.md, "Incidents"). What a receiver shows is the unit of truth:
 *  - a follow-up is a reply (or a counted repeat) only under a root message that receiver shows; when
 *    it shows none (the opening was backfilled, went to another route, was muted, held, failed, or the
 *    receiver is new), the follow-up is sent as that receiver's opening, at once;
 *  - when its opening is on its way to the same receiver but has not reached it (events reach the notify
 *    functions in no promised order: the table's stream shards, EventBridge), the opening is delivered
 *    first, then the follow-up replies to it: the receiver shows what it would have shown in order;
 *  - it waits, a few seconds at most, only while another sender is sending the opening;
 *  - an amendment is handled alike with the alert it amends, then edits it or goes out on its own; it is
 *    suppressed only where that alert was deliberately kept from the receiver (a mute).
 */
import type { Suppression } from "../../model/alert-item.js";
import type { LookoutEventDetail } from "../../model/event.js";
import type { DeliveryRecord } from "../../model/notify-store.js";
import type { IncidentRef } from "../types.js";
import { type AlertAttempt, type DeliveryOutcome, recordedFor, type Stage } from "./stage.js";

/** Records the delivery as suppressed for `suppression` (never over an existing record), and ends it. */
async function suppressed(a: AlertAttempt, suppression: Suppression): Promise<DeliveryOutcome> {
  const recorded = await a.deps.store.recordSuppressed(a.id, a.channel.id, {
    ...recordedFor(a), state: "suppressed",
    suppression: { reason: suppression.reason as "repeat" | "not_told", detail: suppression.detail },
  });
  return recorded ? "suppressed" : "duplicate";
}

/**
 * How long an event waits while another sender is sending its incident's opening (or the alert it
 * amends) to the same receiver. Seconds, in process: past this it goes as the receiver's opening.
 */
export const OPENING_WAIT_MS = 10_000;
/** How often a waiting event looks again. */
export const OPENING_POLL_MS = 500;
/**
 * An opening read this recently that a receiver it is routed to has no record of is still on its way
 * there (a queue's retries, a dead letter moved back), and is delivered ahead of its follow-up. One read
 * longer ago reached the receiver before it was configured, or never will: the follow-up is its opening.
 */
export const PREDECESSOR_WINDOW_MS = 15 * 60_000;

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Routed to this receiver, read within the window, and not delivered here in any way yet. */
const onItsWayHere = (a: AlertAttempt, alert: LookoutEventDetail | undefined): alert is LookoutEventDetail =>
  !!alert &&
  a.deps.now().getTime() - (Date.parse(alert.observed_at) || 0) < PREDECESSOR_WINDOW_MS &&
  // Without the routes to ask, nothing is known to be on its way here.
  (a.deps.routedHere?.(alert, a.route, a.channel.id) ?? false);

/** Go on; end with an outcome; wait for another sender; or deliver the alert this one follows, first. */
type Verdict = DeliveryOutcome | "go" | "wait" | { first: LookoutEventDetail };

/**
 * A delivery held by another sender is waited for. None at all, for an alert on its way here: that alert
 * goes first. One held for a digest is neither: a digest comes a minute later at the soonest and shows
 * no message to edit, so waiting for it only slows a storm.
 */
function predecessor(a: AlertAttempt, record: DeliveryRecord | undefined, alert: LookoutEventDetail | undefined): Verdict {
  if (record) return record.state === "sending" ? "wait" : "go";
  return onItsWayHere(a, alert) ? { first: alert } : "go";
}

async function amendment(a: AlertAttempt, amends: string): Promise<Verdict> {
  const told = await a.deps.store.getDelivery(amends, a.channel.id);
  if (told?.state === "sent") return "go";
  if (told?.state === "suppressed" && told.suppression?.reason === "mute") {
    return suppressed(a, { reason: "not_told", detail: `alert ${amends}, which this amends, was muted for ${a.channel.label}` });
  }
  return predecessor(a, told, (await a.incident())?.amended?.alert);
}

function followUp(a: AlertAttempt, ref: IncidentRef | undefined): Verdict {
  if (!ref || ref.shown || ref.quiet) return "go";
  if (ref.told === "sending") return "wait";
  // The opening, when this receiver has no record of it (a root of another alert means it showed one).
  const opening = ref.root ? undefined : ref.first;
  if (ref.told || opening?.id !== a.detail.incident_id) return "go";
  return predecessor(a, undefined, opening);
}

async function decide(a: AlertAttempt): Promise<Verdict> {
  const d = a.detail;
  if (d.amends) return amendment(a, d.amends);
  if (!d.incident_id || d.incident_id === d.id) return "go";
  const ref = await a.incident();
  const verdict = followUp(a, ref);
  if (verdict !== "go") return verdict;
  // A repeat is counted in the thread of a root this receiver shows; where it keeps no thread, not posted again.
  if (d.incident?.repeat && ref?.shown && !(a.channel.threads && ref.ts)) {
    const n = d.incident.failures;
    return suppressed(a, {
      reason: "repeat",
      detail: `the same error again in incident ${d.incident_id}${n ? ` (failure ${n})` : ""}: ${a.channel.label} shows the incident; counted at its close`,
    });
  }
  return "go";
}

export const incidentStage: Stage<AlertAttempt, DeliveryOutcome> = async (a) => {
  const sleep = a.deps.sleep ?? sleepFor;
  const until = a.now.getTime() + OPENING_WAIT_MS;
  let deliveredFirst = false;
  // Bounded by the clock and by the count of looks, whichever ends first (a clock that stands still too).
  for (let looks = OPENING_WAIT_MS / OPENING_POLL_MS; ; looks--) {
    const verdict = await decide(a);
    if (verdict === "go") return undefined;
    if (typeof verdict === "object") {
      // Once: whatever became of it (sent, held, muted, failed), its record now says, and decides again.
      if (deliveredFirst || !a.deliverFirst) return undefined;
      deliveredFirst = true;
      await a.deliverFirst(verdict.first);
      a.rereadIncident?.();
      continue;
    }
    if (verdict !== "wait") return verdict;
    // Past the wait, it goes as it is: the receiver's opening (or the amendment on its own).
    if (looks <= 0 || a.deps.now().getTime() >= until) return undefined;
    await sleep(OPENING_POLL_MS);
    a.rereadIncident?.();
  }
};
