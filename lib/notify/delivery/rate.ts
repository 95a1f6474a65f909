/**
 * Rate: what a receiver may be sent, so that a flood is one incident at a bounded rate, not a storm
 * (docs/architecture.md, "Receivers' rate"). Token buckets, each in the store so every worker counts
 * the same:
 *  - the receiver's own messages (new incidents, alerts of their own, digests): `rate.perSecond` with
 *    `rate.burst` (Slack's pace), and at most `rate.perHour` an hour (what people can read);
 *  - its replies (follow-ups under a root it shows, closes): the same rates in buckets of their own,
 *    so that however many repeats a thread gets, a new incident's message is not held back for them;
 *  - an incident's follow-ups at one receiver: `INCIDENT_FOLLOW_UPS` (a few at once, then one per five
 *    minutes), so a crash-looping component is one thread, not thousands of replies;
 *  - the receiver's digests: one per `digestEveryMs` at most.
 * An alert over a budget is held, never dropped: it goes out in the receiver's next digest. A close of
 * an incident the receiver shows is never held: its root must turn resolved where it was shown open;
 * at an ordered receiver (PagerDuty), a close whose incident has alerts held there is held behind them.
 */
import { isClosing } from "../../model/event.js";
import type { Attempt } from "./stage.js";
import { claimedBy, type AlertAttempt, type DeliveryOutcome, type DigestAttempt, type Stage } from "./stage.js";

/** Per incident and receiver: five follow-ups at once, then one every five minutes. */
export const INCIDENT_FOLLOW_UPS = { burst: 5, everyMs: 5 * 60_000 } as const;
/** At most one digest a minute per receiver (less when `notify.digest_within` is shorter). */
export const DIGEST_EVERY_MS = 60_000;
/**
 * A new digest waits until what it would carry first has been held this long (half the digest interval
 * when that is shorter), so that a storm's alerts held in one poll's pass go out as one digest, not a
 * digest of the first one and another of the rest a minute later.
 */
export const DIGEST_GATHER_MS = 10_000;
export const digestGatherMs = (deps: Pick<Attempt["deps"], "digestEveryMs">): number => Math.min(DIGEST_GATHER_MS, (deps.digestEveryMs ?? DIGEST_EVERY_MS) / 2);

const incidentBucket = (a: AlertAttempt) => `${a.channel.id}#incident#${a.detail.incident_id}`;

/** Which of the receiver's budgets a message takes from: its own messages', or its replies'. */
type Budget = "messages" | "replies";
const paceBucket = (a: Pick<Attempt, "channel">, budget: Budget) => (budget === "messages" ? a.channel.id : `${a.channel.id}#replies`);

/** Takes a token from one of the receiver's budgets: its pace, then its hourly cap. */
async function takeReceiverToken(a: Attempt, budget: Budget): Promise<boolean> {
  const { store, rate } = a.deps;
  const pace = paceBucket(a, budget);
  if (!(await store.takeToken(pace, rate.perSecond, rate.burst))) return false;
  return !rate.perHour || store.takeToken(`${pace}#hour`, rate.perHour / 3600, rate.perHour);
}

/** The receiver's digest bucket: one a `digestEveryMs`. */
const digestBucket = (a: Pick<Attempt, "channel" | "deps">) =>
  [`${a.channel.id}#digest`, 1000 / (a.deps.digestEveryMs ?? DIGEST_EVERY_MS), 1] as const;

/** Whether a digest may go out now: its last one went out long enough ago (nothing taken). */
export const digestDue = async (a: Pick<Attempt, "channel" | "deps">): Promise<boolean> =>
  (await a.deps.store.peekTokens(...digestBucket(a))) >= 1;

/**
 * A digest takes a message from the receiver's budget (a storm's digest waits for it) and its digest
 * token; until both are there, what it holds stays held.
 */
export const digestBudgetStage: Stage<DigestAttempt, number> = async (a) => {
  // The receiver's pace, not its hourly cap: digests have their own bound, and must get out when the cap is spent.
  const { store, rate } = a.deps;
  if ((await store.takeToken(paceBucket(a, "messages"), rate.perSecond, rate.burst)) && (await store.takeToken(...digestBucket(a)))) return undefined;
  await a.deps.store.settle(claimedBy(a), { state: "failed", error: "no budget yet; the next delivery or flush retries" });
  return 0;
};

/** Over budget: the alert is held for the receiver's next digest, and its record says why. */
async function hold(a: AlertAttempt, why: string): Promise<DeliveryOutcome> {
  // Held as of its first attempt: a sender that died between holding and recording it holds the same
  // item again when the alert is redelivered, never a second one for another digest.
  const heldAt = claimedBy(a).first_attempt_at ?? a.now.toISOString();
  await a.deps.store.hold({ receiver_id: a.channel.id, held_at: heldAt, detail: a.detail, route: a.route });
  await a.deps.store.settle(claimedBy(a), { state: "held", suppression: { reason: "storm", detail: `${why}: held for a digest` } });
  return "held";
}

/** An ordered receiver (Channel.ordered) holds a close behind its incident's alerts held there. */
async function heldBefore(a: AlertAttempt): Promise<boolean> {
  const d = a.detail;
  if (!a.channel.ordered || !isClosing(d.transition) || !d.incident_id) return false;
  return (await a.deps.store.heldFor(a.channel.id)).some((h) => h.detail.incident_id === d.incident_id);
}

export const rateOrHoldStage: Stage<AlertAttempt, DeliveryOutcome> = async (a) => {
  const d = a.detail;
  if (await heldBefore(a)) return hold(a, `incident ${d.incident_id} has alerts held for ${a.channel.label}, which must come first`);
  const followUp = !!d.incident_id && d.incident_id !== d.id;
  const shown = followUp && (await a.incident())?.shown === true;
  if (shown && isClosing(d.transition)) {
    await takeReceiverToken(a, "replies"); // counted against the budget, never held
    return undefined;
  }
  // Follow-ups under a root this receiver shows (an amendment edits or follows it: not counted).
  if (shown && !d.amends) {
    const { burst, everyMs } = INCIDENT_FOLLOW_UPS;
    if (!(await a.deps.store.takeToken(incidentBucket(a), 1000 / everyMs, burst))) {
      return hold(a, `over ${burst} follow-ups then 1 per ${everyMs / 60_000}m for incident ${d.incident_id} at ${a.channel.label}`);
    }
  }
  // A reply takes from the replies' budget: however many a thread gets, a new incident has the messages'.
  const budget: Budget = shown ? "replies" : "messages";
  if (await takeReceiverToken(a, budget)) return undefined;
  const { perSecond, burst, perHour } = a.deps.rate;
  return hold(a, `over ${perSecond}/s (burst ${burst})${perHour ? `, ${perHour}/h` : ""} for ${budget === "replies" ? "replies at " : ""}${a.channel.label}`);
};
