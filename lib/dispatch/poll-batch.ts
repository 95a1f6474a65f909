/**
 * The poll function's job: a batch of a tick's polls polled at once and what they learned told to
 * dispatch in one write (lib/app/lambda/poll.ts; one machine's passes the same).
 */
import type { DispatchStore } from "../model/dispatch-store.js";
import type { Watchlist } from "../model/dispatch.js";
import type { PollRequest, PollResult } from "../model/poll.js";
import { DISPATCH_NAME, recordPollResult, recordPollResults } from "./source-state.js";
import { pollSource, type PollDeps } from "../poll/poll.js";
import { pollTogether } from "../poll/together.js";

/** Polls one source and tells dispatch what it learned (a write only when there is news). */
export async function pollAndRecord(
  req: PollRequest,
  deps: PollDeps,
  store: DispatchStore,
  watch: Watchlist,
  name = DISPATCH_NAME,
): Promise<PollResult> {
  const result = await pollSource(req, deps);
  await recordPollResult(store, name, result, deps.now().getTime(), watch);
  return result;
}

/** Sources the poll function takes an invocation (dispatch sends them so: lib/app/cloud/invoke.ts). */
export const POLL_BATCH = 10;

/**
 * A tick's polls in batches of at most `POLL_BATCH`, in plan order, but with at most one poll known to
 * bring a large answer (`large`: deferred last time) a batch: each batch has room for one, so two such
 * sources are never deferred by each other again.
 */
export function pollBatches(polls: readonly PollRequest[]): PollRequest[][] {
  const large = polls.filter((p) => p.large);
  const count = Math.max(large.length, Math.ceil(polls.length / POLL_BATCH));
  const batches: PollRequest[][] = Array.from({ length: count }, (_, i) => (large[i] ? [large[i]!] : []));
  let next = 0;
  for (const p of polls) {
    if (p.large) continue;
    while (batches[next]!.length >= POLL_BATCH) next++;
    batches[next]!.push(p);
  }
  return batches.filter((b) => b.length);
}

/**
 * Polls a batch of sources at once, as the poll function does: room for one large answer among them
 * (lib/platform/answer-memory.ts; another is deferred to the next tick), and dispatch told what they
 * learned in one write. Results in the order of `reqs`.
 */
export async function pollBatch(
  reqs: readonly PollRequest[], deps: PollDeps, store: DispatchStore, watch: Watchlist, name = DISPATCH_NAME,
  /** What every result of the batch is (PollResult's `rerun`, `settlesClaim`). */
  as: Pick<PollResult, "rerun" | "settlesClaim"> = {},
): Promise<PollResult[]> {
  const results = (await pollTogether(reqs, deps)).map((r) => ({ ...r, ...as }));
  await recordPollResults(store, name, results, deps.now().getTime(), watch);
  return results;
}
