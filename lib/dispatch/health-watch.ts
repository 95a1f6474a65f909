/** Lookout's own health from dispatch's state and its queues, raised into the outbox (docs/events.md, health). */
import type { DispatchStore } from "../model/dispatch-store.js";
import type { DispatchState, Watchlist } from "../model/dispatch.js";
import type { IngestStore } from "../model/ingest-store.js";
import type { LookoutEventDetail } from "../model/event.js";
import type { HealthSettings } from "../config/load.js";
import { newAlertItem } from "../alerts/outbox-item.js";
import { healthFromFacts, queueHealth, type QueueSample } from "../alerts/health.js";
import { healthFacts } from "./health-facts.js";
import { DISPATCH_NAME, initialState } from "./source-state.js";

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

/**
 * Raises what Lookout's own queues say (dead letters, a backlog) and keeps, in the dispatch state,
 * since when each has shown messages (a write only when that changes).
 */
export async function watchQueues(
  store: DispatchStore,
  samples: readonly QueueSample[],
  watch: Watchlist,
  now: Date,
  outbox: Pick<IngestStore, "raiseAlert" | "expiresAt">,
  name = DISPATCH_NAME,
): Promise<number> {
  const organization = watch.sources[0]?.organizationId ?? "unknown";
  let events: LookoutEventDetail[] = [];
  await store.update(name, (current) => {
    const was = current?.queues ?? {};
    const r = queueHealth(samples, was, organization, now);
    events = r.events;
    if (sameEntries(r.since, was)) return undefined;
    // Before dispatch's first tick (a new stack) there is no state yet: start one, or `since` is lost.
    const { queues: _, ...rest } = current ?? initialState(watch, now.getTime());
    return Object.keys(r.since).length ? { ...rest, queues: r.since } : rest;
  });
  let raised = 0;
  for (const detail of events) if (await outbox.raiseAlert(newAlertItem(detail, now.toISOString(), outbox.expiresAt()))) raised++;
  return raised;
}

const sameEntries = (a: Record<string, number>, b: Record<string, number>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);
