/**
 * One dispatch tick and one recorded poll: the glue shared by functions/dispatch, functions/poll and the
 * local runner, so the cloud and one machine plan and account the same way.
 */
import type { DispatchStore } from "../store/dispatch-store.js";
import { healthFacts, initialState, lastOkAt, planTick, pollRequest, type DispatchState, type Watchlist } from "./dispatch.js";
import type { IngestStore } from "../store/ingest-store.js";
import { newAlertItem } from "../alerts/outbox-item.js";
import { healthFromFacts } from "../alerts/health.js";
import type { LookoutEventDetail } from "../model/event.js";
import type { HealthSettings } from "../config/load.js";
import { sourceKey } from "../model/source.js";
import { pollSource, type PollDeps, type PollRequest, type PollResult } from "./poll.js";

/** One budget per platform token; a deployment watches with one token. */
export const DISPATCH_NAME = "default";

/** Plans the polls of this tick within the budget, and records the plan (one write). */
export async function planPolls(
  store: DispatchStore,
  watch: Watchlist,
  now: number,
  name = DISPATCH_NAME,
): Promise<{ polls: PollRequest[]; state: DispatchState }> {
  let polls: PollRequest[] = [];
  const { state } = await store.update(name, (current) => {
    const plan = planTick(current, watch, now);
    polls = plan.polls;
    return plan.changed ? plan.state : undefined;
  });
  return { polls, state: state ?? initialState(watch, now) };
}

/**
 * Raises `Lookout Health` events for what the dispatch state shows (token rejected, sources failing,
 * polling stalled) into the outbox; an episode already raised is not raised again.
 */
export async function raiseHealth(
  state: DispatchState,
  watch: Watchlist,
  now: Date,
  outbox: Pick<IngestStore, "raiseAlert" | "expiresAt">,
  onRaised?: (detail: LookoutEventDetail) => void,
  settings: HealthSettings = { failingAfter: 3 },
): Promise<number> {
  const facts = healthFacts(state, watch, now.getTime(), {
    failingAfter: settings.failingAfter,
    ...(settings.stalledAfterMs !== undefined ? { stalledAfterMs: settings.stalledAfterMs } : {}),
  });
  const anchor = (source: string) => {
    const s = state.sources[source];
    const ok = s?.last_ok_at ?? (s && !s.consecutive_failures ? s.last_polled_at : undefined);
    return ok !== undefined ? new Date(ok).toISOString() : undefined;
  };
  let raised = 0;
  for (const detail of healthFromFacts(facts, anchor, now)) {
    if (await outbox.raiseAlert(newAlertItem(detail, now.toISOString(), outbox.expiresAt()))) {
      raised++;
      onRaised?.(detail);
    }
  }
  return raised;
}

/** Every watched source once, budget aside (`lookout run --once`), each knowing when it was last read. */
export async function everySource(store: DispatchStore, watch: Watchlist, name = DISPATCH_NAME): Promise<PollRequest[]> {
  const state = await store.get(name);
  const now = Date.now();
  return watch.sources.map((source) => {
    const s = state?.sources[sourceKey(source)] ?? {};
    // Between two `--once` runs nothing watches: the time since the last read is an outage.
    const ok = lastOkAt(s);
    return pollRequest(source, s, ok !== undefined ? { from: ok, to: now } : undefined);
  });
}

/** Polls one source and tells dispatch what it learned (a write only when there is news). */
export async function pollAndRecord(
  req: PollRequest,
  deps: PollDeps,
  store: DispatchStore,
  watch: Watchlist,
  name = DISPATCH_NAME,
): Promise<PollResult> {
  const result = await pollSource(req, deps);
  await store.recordPollResult(name, result, deps.now().getTime(), watch);
  return result;
}
