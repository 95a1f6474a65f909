/**
 * The request budget's room lent to a poll (SpareRequests, lib/poll/deps.ts) for what it asks beyond its
 * own reads: names (lib/poll/platform-names.ts) and what changed (lib/poll/commit-range.ts). They come after polling: the bucket keeps what dispatch keeps
 * for bursts of activity (`burstKeptMinutes`), and what the poll already spent beyond its planned request
 * counts, since dispatch folds it in only after the poll (source-state.ts).
 */
import type { DispatchStore } from "../model/dispatch-store.js";
import { available } from "./budget.js";
import { DISPATCH_POLICY } from "./source-state.js";
import type { SpareRequests } from "../poll/deps.js";

/** The budget dispatch keeps under `name`; a budget not started yet has its full burst. */
export function spareRequestsOf(store: DispatchStore, name: string, now: () => number): SpareRequests {
  return {
    async room(requests) {
      const state = await store.get(name);
      return !state || available(state.budget, now(), DISPATCH_POLICY.burstKeptMinutes) >= requests;
    },
  };
}
