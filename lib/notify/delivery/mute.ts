/**
 * Mute: a muted alert is recorded as suppressed, naming the mute, and not sent. The close of an
 * incident a mute was set until is not muted by it (the notifier lifts that mute: lib/notify/notifier.ts).
 */
import { activeMute } from "../mutes.js";
import { type AlertAttempt, type DeliveryOutcome, recordedFor, type Stage } from "./stage.js";

export const muteStage: Stage<AlertAttempt, DeliveryOutcome> = async (a) => {
  const mute = activeMute(a.detail, a.mutes, a.now);
  if (!mute) return undefined;
  const recorded = await a.deps.store.recordSuppressed(a.id, a.channel.id, {
    ...recordedFor(a), state: "suppressed",
    suppression: { reason: "mute", mute_id: mute.id, detail: `muted until ${mute.until} by ${mute.created_by}: ${mute.reason}` },
  });
  return recorded ? "muted" : "duplicate";
};
