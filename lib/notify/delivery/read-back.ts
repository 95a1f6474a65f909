/**
 * Read back: a retry (an earlier attempt failed, or its sender died holding the lease) first asks the
 * receiver whether that attempt got through after all, and records it as sent if it did: so a crash
 * between the receiver's answer and our record, or a timeout after Slack accepted, posts nothing twice.
 * When the receiver cannot say, the delivery goes on: a repeat is better than a missed failure.
 */
import { READ_BACK_SKEW_MS, type Sent } from "../types.js";
import { type Attempt, claimedBy, sentFields, type Stage } from "./stage.js";


/** Ends the delivery with `found(attempt, sent)` when an earlier attempt got through. */
export const readBackStage =
  <A extends Attempt, R>(found: (a: A, sent: Sent) => Promise<R>): Stage<A, R> =>
  async (a) => {
    const mine = claimedBy(a);
    if (mine.attempts <= 1 || !a.channel.findSent) return undefined;
    const { store, log } = a.deps;
    const since = new Date(Date.parse(mine.first_attempt_at ?? mine.updated_at) - READ_BACK_SKEW_MS);
    let sent: Sent | undefined;
    try {
      sent = await a.channel.findSent(a.id, since, await a.incident());
      if (!sent) return undefined;
      await store.settle(mine, { state: "sent", ...sentFields(sent) });
      log.info("an earlier attempt had been delivered; not sent again", { alert: a.id, receiver: a.channel.label, attempts: mine.attempts });
    } catch (err) {
      log.warn("could not read back earlier attempts; sending again", { alert: a.id, receiver: a.channel.label, error: (err as Error).message });
      return undefined;
    }
    return found(a, sent);
  };
