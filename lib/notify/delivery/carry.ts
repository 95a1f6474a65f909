/**
 * Carry: a digest that has its budget marks each alert it holds as its own (`NotifyStore.markHeld`),
 * and carries only those it could: another digest may have taken some since they were read. The marks
 * fix its content until its alerts are released, so sending it again sends the same digest.
 */
import pMap from "p-map";
import { isClosing } from "../../model/event.js";
import type { HeldAlert } from "../../model/notify-store.js";
import { claimedBy, type DigestAttempt, type Stage } from "./stage.js";

export const markCarriedStage: Stage<DigestAttempt, number> = async (a) => {
  const { store } = a.deps;
  /** Those of `held` this digest carries (marked before, or now). */
  const mark = async (held: readonly HeldAlert[]) => {
    const ours = await pMap(held, async (h) => h.digest_id === a.id || store.markHeld(h, a.id), { concurrency: 16 });
    return held.filter((_, i) => ours[i]);
  };
  const closes = a.channel.ordered ? a.held.filter((h) => isClosing(h.detail.transition) && h.detail.incident_id) : [];
  const others = await mark(a.held.filter((h) => !closes.includes(h)));
  // An ordered receiver (PagerDuty) gets a close only with or after its incident's alerts: one another
  // digest carries (and may still be sending) keeps the close for the digest after it.
  const elsewhere = closes.length ? (await store.heldFor(a.channel.id)).filter((h) => h.digest_id !== a.id && !isClosing(h.detail.transition)) : [];
  const free = await mark(closes.filter((c) => !elsewhere.some((h) => h.detail.incident_id === c.detail.incident_id)));
  const mine = new Set([...others, ...free]);
  a.held = a.held.filter((h) => mine.has(h)).map((h) => ({ ...h, digest_id: a.id }));
  if (a.held.length) return undefined;
  await store.settle(claimedBy(a), { state: "failed", error: "another digest carries what was held" });
  return 0;
};
