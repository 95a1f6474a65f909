/**
 * Incident: what an event's place in its incident decides before anything is claimed or sent
 * (docs/events.md, "Incidents"). A repeat of the same error is a counted reply in the incident's thread
 * where the receiver keeps one, and is not posted again anywhere else; an amendment goes only to a
 * receiver that was told of the alert it amends.
 */
import type { Suppression } from "../../model/alert-item.js";
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
 * How long a follow-up waits for its incident's opening to be told to the same receiver: events of one
 * poll reach the notifiers in no set order (parallel writes, SQS), and a follow-up told first would land
 * outside the thread. Past this, it goes out on its own (the opening may never come to this receiver:
 * another route took it, or a mute).
 */
export const OPENING_WAIT_MS = 2 * 60_000;

export const incidentStage: Stage<AlertAttempt, DeliveryOutcome> = async (a) => {
  const d = a.detail;
  if (d.amends) {
    const told = await a.deps.store.getDelivery(d.amends, a.channel.id);
    // Still being sent: decide when it has settled (whoever delivers this event comes back).
    if (told?.state === "sending") return "in_flight";
    if (told?.state === "sent") return undefined;
    return suppressed(a, { reason: "not_told", detail: `${a.channel.label} was not told of alert ${d.amends}, which this amends` });
  }
  // An amendment waits on the alert it amends (above); any other follow-up on its incident's opening.
  if (d.incident_id && d.incident_id !== d.id) {
    // The incident as the send will use it (read once): its opening, and what this receiver was told of it.
    const opening = await a.incident();
    // Not told yet (or being told): come back, as SQS or the local retry file will bring it.
    if (opening?.told === "sending") return "in_flight";
    const waited = a.now.getTime() - (Date.parse(d.observed_at) || 0);
    if (opening && !opening.told && waited < OPENING_WAIT_MS) return "in_flight";
  }
  if (d.incident?.repeat && d.incident_id && d.incident_id !== d.id) {
    if (a.channel.threads && (await a.incident())?.ts) return undefined;
    const n = d.incident.failures;
    return suppressed(a, {
      reason: "repeat",
      detail: `the same error again in incident ${d.incident_id}${n ? ` (failure ${n})` : ""}: counted in its thread where there is one, not posted again`,
    });
  }
  return undefined;
};
