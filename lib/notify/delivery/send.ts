/** Send: the receiver is asked once (its adapter retries what may pass); its answer goes on the attempt. */
import type { LookoutEventDetail } from "../../model/event.js";
import type { DigestWindow, IncidentRef, Sent } from "../types.js";
import { type AlertAttempt, asDeliveryError, type Attempt, type DigestAttempt, leaseMsOf, type Stage } from "./stage.js";

/** How many leases a send in progress keeps its claim for, at most (five minutes at the default lease). */
const RENEWED_LEASES = 5;

export async function ask(a: Attempt, send: () => Promise<Sent>): Promise<undefined> {
  // A send that takes long (a receiver's retries, a slow answer) keeps its claim: renewed three times a
  // lease, so no other worker takes this sender for a dead one and sends the same message again.
  // Up to RENEWED_LEASES leases: a send stuck for ever (a server trickling its replies) then lapses, and
  // another worker delivers again — a possible repeat rather than an alert held by a stuck sender.
  const lease = leaseMsOf(a.deps);
  const held = a.claimed;
  const until = Date.now() + lease * RENEWED_LEASES;
  const renewing = held
    ? setInterval(() => {
        if (Date.now() > until) return clearInterval(renewing);
        void a.deps.store.renewLease(held, lease).catch(() => undefined);
      }, lease / 3)
    : undefined;
  renewing?.unref();
  try {
    a.answer = { sent: await send() };
  } catch (err) {
    a.answer = { failed: asDeliveryError(err) };
  } finally {
    clearInterval(renewing);
  }
  return undefined;
}

/**
 * The incident goes with the alert only where the receiver shows it (or shows the alert it amends):
 * elsewhere the alert is the receiver's opening, a message of its own.
 */
export const incidentToSend = (ref: IncidentRef | undefined): IncidentRef | undefined =>
  ref && (ref.shown !== false || ref.amended?.ts) ? ref : undefined;

export const sendAlertStage: Stage<AlertAttempt, never> = (a) =>
  ask(a, async () => a.channel.send(a.detail, incidentToSend(await a.incident()), a.presentation));

export const sendDigestStage: Stage<DigestAttempt, never> = (a) => {
  const { held } = a;
  const window: DigestWindow = {
    from: held[0]!.held_at, to: held[held.length - 1]!.held_at, id: a.id,
    heldAt: Object.fromEntries(held.map((h) => [h.detail.id, h.held_at])), at: a.deps.now().toISOString(),
  };
  const present = a.deps.present;
  const routeOf = new Map(held.map((h) => [h.detail.id, h.route]));
  // Each held alert as its own route shows it.
  const presentationOf = present ? (d: LookoutEventDetail) => present(d, routeOf.get(d.id) ?? a.route) : undefined;
  return ask(a, () => a.channel.sendDigest(held.map((h) => h.detail), window, presentationOf));
};
