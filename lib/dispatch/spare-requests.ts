/**
 * Room in the request budget for what a poll asks beyond its own reads: names (lib/ingest/names.ts) and
 * what changed (lib/ingest/changes.ts). They come after polling: the bucket keeps what dispatch keeps
 * for bursts of activity (`burstKeptMinutes`), and what the poll already spent beyond its planned request
 * counts, since dispatch folds it in only after the poll (lib/ingest/source-state.ts).
 */
import type { DispatchStore } from "../model/dispatch-store.js";
import { available } from "./budget.js";
import { DISPATCH_POLICY } from "./dispatch.js";
import type { PollContext } from "./readers/reader.js";

export interface SpareRequests {
  /** Whether `requests` more may be sent now. */
  room(requests: number): Promise<boolean>;
}

/** The budget dispatch keeps under `name`; a budget not started yet has its full burst. */
export function spareRequestsOf(store: DispatchStore, name: string, now: () => number): SpareRequests {
  return {
    async room(requests) {
      const state = await store.get(name);
      return !state || available(state.budget, now(), DISPATCH_POLICY.burstKeptMinutes) >= requests;
    },
  };
}

/** Whether this poll may send `requests` more; never without a budget to ask (`PollDeps.spare`). */
export async function hasSpare(poll: PollContext, requests: number): Promise<boolean> {
  const spare = poll.deps.spare;
  return !!spare && spare.room(requests + Math.max(0, poll.result.requests - 1));
}
