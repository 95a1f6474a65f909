/** Claim: the lease on (alert or digest, receiver), so that one sender at a time delivers it. */
import type { DeliveryRecord } from "../../model/notify-store.js";
import { sentInDigest, sentOf } from "./record.js";
import { type Attempt, type DigestAttempt, leaseMsOf, recordedFor, type Stage } from "./stage.js";

/** Ends the delivery with `busy(record)` when another sender holds the lease or the record is settled. */
export const claimStage =
  <A extends Attempt, R>(busy: (record: DeliveryRecord) => R): Stage<A, R> =>
  async (a) => {
    const init = { ...recordedFor(a), ...(a.recordAs?.escalation ? { escalation: a.recordAs.escalation } : {}) };
    const key = a.recordAs ?? { alertId: a.id, receiverId: a.channel.id };
    const claim = await a.deps.store.claim(key.alertId, key.receiverId, init, leaseMsOf(a.deps));
    if (!claim.claimed) return busy(claim.record);
    a.claimed = claim.record;
    return undefined;
  };

/**
 * A digest's claim. Busy: another sender holds its lease (nothing now), or it went out and its sender
 * died before releasing what it carried — released now, as sent in it.
 */
export const claimDigestStage: Stage<DigestAttempt, number> = async (a) => {
  let busy: DeliveryRecord | undefined;
  if (!(await claimStage<DigestAttempt, true>((record) => ((busy = record), true))(a))) return undefined;
  return busy?.state === "sent" ? sentInDigest(a, sentOf(busy)) : 0;
};
