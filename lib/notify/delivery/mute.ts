/**
 * Mute: a muted alert is recorded as suppressed, naming the mute, and not sent. The close of an
 * incident a mute was set until ("Mute until resolved") is sent, and lifts that mute.
 */
import { activeMute, closesItsIncident, isActive } from "../mutes.js";
import type { AlertAttempt, DeliveryOutcome, Stage } from "./stage.js";

export const muteStage: Stage<AlertAttempt, DeliveryOutcome> = async (a) => {
  for (const m of a.mutes) {
    if (isActive(m, a.now) && closesItsIncident(m, a.detail)) await a.deps.store.putMute({ ...m, lifted_at: a.now.toISOString() });
  }
  const mute = activeMute(a.detail, a.mutes, a.now);
  if (!mute) return undefined;
  const recorded = await a.deps.store.recordSuppressed(a.id, a.channel.id, {
    receiver_label: a.channel.label, route: a.route, state: "suppressed",
    suppression: { reason: "mute", mute_id: mute.id, detail: `muted until ${mute.until} by ${mute.created_by}: ${mute.reason}` },
  });
  return recorded ? "muted" : "duplicate";
};
