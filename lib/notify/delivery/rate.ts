/** Rate: each receiver's token bucket. An alert over budget is held for a digest; a digest waits. */
import { claimedBy, type AlertAttempt, type DeliveryOutcome, type DigestAttempt, type Stage, takeToken } from "./stage.js";

/** Over budget: the alert is held for the receiver's next digest, and its record says so. */
export const rateOrHoldStage: Stage<AlertAttempt, DeliveryOutcome> = async (a) => {
  if (await takeToken(a)) return undefined;
  const { store, rate } = a.deps;
  await store.hold({ receiver_id: a.channel.id, held_at: a.now.toISOString(), detail: a.detail, route: a.route });
  await store.settle(claimedBy(a), {
    state: "held",
    suppression: { reason: "storm", detail: `over ${rate.perSecond}/s (burst ${rate.burst}) for ${a.channel.label}: held for a digest` },
  });
  return "held";
};

/**
 * Before reading back: a storm retries its digest at every alert, and a digest with no budget yet was
 * never sent, so only one that may go out now is worth reading the receiver back for.
 */
export const digestBudgetStage: Stage<DigestAttempt, number> = async (a) => {
  if (await takeToken(a)) return undefined;
  await a.deps.store.settle(claimedBy(a), { state: "failed", error: "no budget yet; the next delivery or flush retries" });
  return 0;
};
