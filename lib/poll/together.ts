/**
 * Polls of one pass run together: the change feed first, then the rest, with room for one large answer
 * among them (lib/platform/answer-memory.ts). Recording what they learned is dispatch's
 * (lib/dispatch/poll-batch.ts, `pollBatch`).
 */
import type { PollRequest, PollResult } from "../model/poll.js";
import { AnswerRoom } from "../platform/answer-memory.js";
import type { PollDeps } from "./deps.js";
import { pollSource } from "./poll.js";

/**
 * The change feed's polls (webhook delivery logs) before the others of the same pass: the services a
 * feed entry names — their project and environment — are then known to a deployment poll that reads the
 * same deployment's failure. Polled together, the failure could be raised before its service was named,
 * without its environment, at a lower severity than its environment gives it (docs/platform.md).
 */
export async function feedFirst<T>(reqs: readonly PollRequest[], poll: (batch: readonly PollRequest[]) => Promise<T[]>): Promise<T[]> {
  const feeds = reqs.filter((r) => r.source.kind === "webhook");
  const rest = reqs.filter((r) => r.source.kind !== "webhook");
  return [...(feeds.length ? await poll(feeds) : []), ...(rest.length ? await poll(rest) : [])];
}

/** Polls sources at once, the feeds first, with room for one large answer among them; records nothing. */
export function pollTogether(reqs: readonly PollRequest[], deps: PollDeps): Promise<PollResult[]> {
  const room = new AnswerRoom(deps.bounds?.smallAnswerBytes);
  return feedFirst(reqs, (batch) => Promise.all(batch.map((req) => room.run(() => pollSource(req, deps), { reserve: req.large }))));
}
