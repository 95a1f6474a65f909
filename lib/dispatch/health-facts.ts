/** What dispatch's state says about polling's health: failing sources, stalled polling, a rejected token. */
import type { DispatchState, Watchlist } from "../model/dispatch.js";
import type { SourceHealthFacts } from "../model/health-facts.js";
import { sourceKey } from "../model/source.js";
import { idleIntervalMs } from "./plan.js";
import { MINUTE, lastOkAt } from "./source-state.js";

/**
 * Facts for `Lookout Health` events, as data (another stage turns them into events).
 * A 401 always means the token. A 403 may also mean a resource that does not exist (docs/platform.md),
 * so 403s count as the token only when two or more sources got them and nothing succeeded after.
 */
export function healthFacts(
  state: DispatchState,
  watch: Watchlist,
  now: number,
  opts: { failingAfter?: number; stalledAfterMs?: number } = {},
): SourceHealthFacts {
  const failingAfter = opts.failingAfter ?? 3;
  // Idle sources are polled about every `idleIntervalMs`: stalled means well past that.
  const stalledAfterMs = opts.stalledAfterMs ?? Math.max(30 * MINUTE, 2 * idleIntervalMs(watch));
  const facts: SourceHealthFacts = { failing: [], stalled: [], tokenRejected: undefined };
  const entries = watch.sources.map((r) => sourceKey(r)).flatMap((k) => (state.sources[k] ? [[k, state.sources[k]] as const] : []));

  for (const [source, s] of entries) {
    const failures = s.consecutive_failures ?? 0;
    if (failures >= failingAfter) facts.failing.push({ source, consecutiveFailures: failures, lastError: s.last_error ?? "unknown" });
    const ok = lastOkAt(s);
    if (ok !== undefined && now - ok > stalledAfterMs) {
      facts.stalled.push({ source, lastOkAt: new Date(ok).toISOString(), silentForMs: now - ok });
    }
  }

  const lastSuccess = Math.max(-Infinity, ...entries.filter(([, s]) => !s.consecutive_failures).map(([, s]) => s.last_polled_at ?? -Infinity));
  const unauthenticated = entries.filter(([, s]) => s.consecutive_failures && s.last_error === "unauthenticated");
  const forbidden = entries.filter(([, s]) => s.consecutive_failures && s.last_error === "forbidden" && (s.last_polled_at ?? -Infinity) > lastSuccess);
  const rejected = [...unauthenticated, ...(forbidden.length >= 2 ? forbidden : [])];
  if (rejected.length) {
    facts.tokenRejected = {
      sources: rejected.map(([k]) => k),
      statuses: [...new Set(rejected.map(([, s]) => (s.last_error === "unauthenticated" ? 401 : 403)))].sort(),
    };
  }
  return facts;
}
