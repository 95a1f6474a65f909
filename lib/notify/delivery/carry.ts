/**
 * Carry: a digest that has its budget marks each alert it holds as its own (`NotifyStore.markHeld`),
 * and carries only those it could: another digest may have taken some since they were read. The marks
 * fix its content until it is settled, so sending it again sends the same digest.
 */
import pMap from "p-map";
import { claimedBy, type DigestAttempt, type Stage } from "./stage.js";

export const markCarriedStage: Stage<DigestAttempt, number> = async (a) => {
  const { store } = a.deps;
  const mine = await pMap(a.held, async (h) => (h.digest_id === a.id || (await store.markHeld(h, a.id)) ? { ...h, digest_id: a.id } : undefined), { concurrency: 16 });
  a.held = mine.filter((h) => h !== undefined);
  if (a.held.length) return undefined;
  await store.settle(claimedBy(a), { state: "failed", error: "another digest carries what was held" });
  return 0;
};
