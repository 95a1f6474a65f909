/** What dispatch's state says about polling's health: failing sources, stalled polling, a rejected token. */
import type { DispatchState, Watchlist } from "../model/dispatch.js";
import type { SourceHealthFacts } from "../model/health-facts.js";
import { sourceKey } from "../model/source.js";
import { feedCoveredOrganizations, idleIntervalMs } from "./plan.js";
import { DISPATCH_POLICY, MINUTE, lastOkAt } from "./source-state.js";

/** Rounds without a read before a source counts as stalled. */
const STALLED_ROUNDS = 3;

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
  const fed = feedCoveredOrganizations(watch, state.sources);
  // Idle sources are polled about every `idleIntervalMs` when the round has the budget to itself:
  // stalled means well past that. Thrice: the change feed's loop, the executions in progress and what
  // the feed names take their polls first, and stretch the round by half again on a busy day (docs/architecture.md, "The round beside the loop").
  const stalledAfterMs = opts.stalledAfterMs ?? Math.max(30 * MINUTE, STALLED_ROUNDS * idleIntervalMs(watch));
  // An application a healthy change feed covers weighs less in the round (lib/dispatch/plan.ts, `weight`),
  // so it is read that much less often: stalled past as much more. So is a source never read: it is
  // scored from when it was first watched, at the weight it has, so the feed's applications are first
  // read in about their own interval (a cold start's first sight), the others in theirs.
  const slowerAfterMs = stalledAfterMs / DISPATCH_POLICY.namedByFeedWeight;
  const facts: SourceHealthFacts = { failing: [], stalled: [], tokenRejected: undefined };
  const entries = watch.sources.flatMap((ref) => {
    const k = sourceKey(ref);
    return state.sources[k] ? [[k, state.sources[k], ref.kind === "deployment" && fed.has(ref.organizationId)] as const] : [];
  });

  for (const [source, s, covered] of entries) {
    const failures = s.consecutive_failures ?? 0;
    if (failures >= failingAfter) facts.failing.push({ source, consecutiveFailures: failures, lastError: s.last_error ?? "unknown" });
    const ok = lastOkAt(s);
    if (ok !== undefined && now - ok > (covered ? slowerAfterMs : stalledAfterMs)) {
      facts.stalled.push({ source, lastOkAt: new Date(ok).toISOString(), silentForMs: now - ok });
    } else if (ok === undefined && s.watched_since !== undefined && now - s.watched_since > slowerAfterMs) {
      // Never read since it was first watched: starved, or every poll of it lost.
      facts.stalled.push({ source, watchedSince: new Date(s.watched_since).toISOString(), silentForMs: now - s.watched_since });
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
