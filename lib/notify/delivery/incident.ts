/**
 * Incident: what an event's place in its incident decides before anything is claimed or sent
 * (docs/events.md, "Incidents"). What a receiver shows is the unit of truth:
 *  - a follow-up is a reply (or a counted repeat) only under a root message that receiver shows; when
 *    it shows none (the opening was backfilled, went to another route, was muted, held, failed, or the
 *    receiver is new), the follow-up is sent as that receiver's opening, at once;
 *  - it waits, a few seconds at most, only for an opening genuinely on its way to the same receiver;
 *  - an amendment waits as briefly for the alert it amends, then edits it or goes out on its own; it is
 *    suppressed only where that alert was deliberately kept from the receiver (a mute).
 */
import type { Suppression } from "../../model/alert-item.js";
import type { LookoutEventDetail } from "../../model/event.js";
import type { DeliveryRecord } from "../../model/notify-store.js";
import type { IncidentRef } from "../types.js";
import type { AlertAttempt, DeliveryOutcome, Stage } from "./stage.js";

/** Records the delivery as suppressed for `suppression` (never over an existing record), and ends it. */
async function suppressed(a: AlertAttempt, suppression: Suppression): Promise<DeliveryOutcome> {
  const recorded = await a.deps.store.recordSuppressed(a.id, a.channel.id, {
    receiver_label: a.channel.label, route: a.route, state: "suppressed",
    suppression: { reason: suppression.reason as "repeat" | "not_told", detail: suppression.detail },
  });
  return recorded ? "suppressed" : "duplicate";
}

/**
 * How long an event waits for its incident's opening (or the alert it amends) to reach the same
 * receiver: events of one poll reach the notifiers in no set order (parallel writes, SQS), and a
 * follow-up told first would land outside the thread. Seconds, in process: past this it goes as the
 * receiver's opening. An opening counts as on its way while its delivery to this receiver is being
 * sent, or while it has none and was read less than this long ago.
 */
export const OPENING_WAIT_MS = 10_000;
/** How often a waiting event looks again. */
export const OPENING_POLL_MS = 500;

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Read recently enough that its delivery may still be on its way. */
const recent = (a: AlertAttempt, alert: LookoutEventDetail | undefined) =>
  !!alert && a.deps.now().getTime() - (Date.parse(alert.observed_at) || 0) < OPENING_WAIT_MS;

/**
 * A delivery on its way to the receiver within seconds: being sent, or not begun for a fresh alert. One
 * held for a digest is not: a digest comes a minute later at the soonest and shows no message to edit,
 * so waiting for it only slows a storm (every amendment of a held alert waited its ten seconds).
 */
const onItsWay = (a: AlertAttempt, record: DeliveryRecord | undefined, alert: LookoutEventDetail | undefined) =>
  record ? record.state === "sending" : recent(a, alert);

type Verdict = DeliveryOutcome | "go" | "wait";

async function amendment(a: AlertAttempt, amends: string): Promise<Verdict> {
  const told = await a.deps.store.getDelivery(amends, a.channel.id);
  if (told?.state === "sent") return "go";
  if (told?.state === "suppressed" && told.suppression?.reason === "mute") {
    return suppressed(a, { reason: "not_told", detail: `alert ${amends}, which this amends, was muted for ${a.channel.label}` });
  }
  return onItsWay(a, told, (await a.incident())?.amended?.alert) ? "wait" : "go";
}

function followUp(a: AlertAttempt, ref: IncidentRef | undefined): Verdict {
  if (!ref || ref.shown || ref.quiet) return "go";
  // The opening as this receiver's record of it says: sending, or none yet for an opening read just now.
  const opening = ref.root ? undefined : ref.first;
  if (ref.told === "sending" || (!ref.told && opening?.id === a.detail.incident_id && recent(a, opening))) return "wait";
  return "go";
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
  // Bounded by the clock and by the count of looks, whichever ends first (a clock that stands still too).
  for (let looks = OPENING_WAIT_MS / OPENING_POLL_MS; ; looks--) {
    const verdict = await decide(a);
    if (verdict === "go") return undefined;
    if (verdict !== "wait") return verdict;
    // Past the wait, it goes as it is: the receiver's opening (or the amendment on its own).
    if (looks <= 0 || a.deps.now().getTime() >= until) return undefined;
    await sleep(OPENING_POLL_MS);
    a.rereadIncident?.();
  }
};
