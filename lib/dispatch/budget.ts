/**
 * The request budget (docs/architecture.md, "The request budget"): how many platform requests Lookout may
 * send now.
 * Pure functions over a small serializable state that dispatch keeps in DynamoDB between invocations;
 * the clock is passed in.
 *
 * Two limits, the lower wins:
 * - a hard sliding-hour cap over per-minute counts, kept 5 % below the limit: a poll is planned at 1
 *   request, and what it cost beyond that (client retries, a second deployment page) is known, and
 *   recorded, only after it ran. Any 60-minute window overlaps at most 61 minute buckets, so the cap is
 *   checked over the current minute and the 60 before it: then no 60-minute window, wherever it
 *   starts, holds more than the cap;
 * - a token bucket with a burst of a few minutes, refilled at the hourly rate less what the burst and
 *   the 61st minute take: a full burst plus 61 minutes of refill fits under the cap. Were the refill
 *   faster, saturated polling would run into the cap once an hour, stop for minutes (in-progress
 *   deployments unread), and repeat that pattern every hour after.
 *
 * The platform has the last word and lowers the budget at once: a 429 stops all requests for its
 * Retry-After (or a backoff growing with consecutive 429s); `X-RateLimit-Remaining` lower than our own
 * count caps us until `X-RateLimit-Reset`; an `X-RateLimit-Limit` lower than configured is adopted.
 */
import type { BudgetState } from "../model/dispatch.js";
import type { RateLimitHeaders } from "../model/poll.js";

const MINUTE = 60_000;
const HOUR = 3_600_000;

export const BUDGET_POLICY = {
  /** The bucket holds this many minutes of refill. */
  burstMinutes: 3,
  /** Share of the limit the cap keeps back for requests that cost more than planned. */
  reserve: 0.05,
  /** 429 without Retry-After: wait this, doubling with each 429 in a row, up to the max. */
  throttleBaseMs: MINUTE,
  throttleMaxMs: 15 * MINUTE,
} as const;

/** Requests per hour in force: the configured figure, or the platform's when lower. */
export const limitOf = (s: BudgetState): number => Math.min(s.configured, s.platform_limit ?? Infinity);

/** The hard cap of requests per sliding hour, below the limit by the reserve. */
export const capOf = (s: BudgetState): number => Math.floor(limitOf(s) * (1 - BUDGET_POLICY.reserve));

/** Refill per minute: a full burst plus 61 minutes of refill fit under the cap (see above). */
export const perMinute = (s: BudgetState): number => capOf(s) / (61 + BUDGET_POLICY.burstMinutes);

const burstOf = (s: BudgetState): number => perMinute(s) * BUDGET_POLICY.burstMinutes;

export function newBudget(requestsPerHour: number, now: number): BudgetState {
  const s: BudgetState = { configured: requestsPerHour, tokens: 0, at: now, minutes: [] };
  return { ...s, tokens: burstOf(s) };
}

/** Adopts a changed configuration; the same state when nothing changed. */
export function reconfigure(s: BudgetState, requestsPerHour: number): BudgetState {
  if (s.configured === requestsPerHour) return s;
  return clampTokens(withoutUndefined({ ...s, configured: requestsPerHour, platform_limit: lowerThan(s.platform_limit, requestsPerHour) }));
}

/** Requests spent in the current minute and the 60 before it (see the header comment). */
export function spentInWindow(s: BudgetState, now: number): number {
  const oldest = minuteOf(now) - 60;
  return s.minutes.reduce((sum, [m, n]) => (m >= oldest ? sum + n : sum), 0);
}

/**
 * Whole requests that may be sent now. `keepMinutes` of refill stay in the bucket: dispatch paces
 * routine polling with it and leaves the burst to activity.
 */
export function available(s: BudgetState, now: number, keepMinutes = 0): number {
  if (s.throttled_until !== undefined && now < s.throttled_until) return 0;
  const tokens = refilled(s, now) - keepMinutes * perMinute(s);
  const headroom = capOf(s) - spentInWindow(s, now);
  const platform = activePlatform(s, now)?.remaining ?? Infinity;
  return Math.max(0, Math.floor(Math.min(tokens, headroom, platform)));
}

/**
 * Whether the platform lets a request go now, whatever our own count: no 429's wait running, and its own
 * count, when it is lower than ours, not spent. The change feed's loop reads within a share kept apart
 * from the bucket (lib/dispatch/feed-loop.ts), so this is all it asks.
 */
export const platformAllows = (s: BudgetState, now: number): boolean =>
  !(s.throttled_until !== undefined && now < s.throttled_until) && (activePlatform(s, now)?.remaining ?? 1) > 0;

/** Records `n` requests sent (or planned) at `now`. */
export function spend(s: BudgetState, n: number, now: number): BudgetState {
  if (n <= 0) return s;
  const minute = minuteOf(now);
  const minutes = s.minutes.filter(([m]) => m >= minute - 60);
  const last = minutes[minutes.length - 1];
  if (last && last[0] === minute) minutes[minutes.length - 1] = [minute, last[1] + n];
  else minutes.push([minute, n]);
  const platform = activePlatform(s, now);
  return withoutUndefined({
    ...s,
    tokens: refilled(s, now) - n,
    at: Math.max(now, s.at),
    minutes,
    platform: platform && { ...platform, remaining: platform.remaining - n },
  });
}

/**
 * What one response told about the budget: its rate-limit headers, and whether it was a 429. Returns
 * the same state when it tells nothing new, so a routine poll changes (and writes) nothing.
 */
export function observeResponse(
  s: BudgetState,
  response: { rateLimit?: RateLimitHeaders; rateLimited: boolean },
  now: number,
): BudgetState {
  let next = s;
  const h = response.rateLimit;
  if (h?.limit !== undefined) next = adoptLimit(next, h.limit, now);
  if (h?.remaining !== undefined) next = adoptRemaining(next, h.remaining, h.resetAt ?? now + HOUR, now);
  if (response.rateLimited) next = throttle(next, h?.retryAfterMs, now);
  else if (next.throttles !== undefined) next = withoutUndefined({ ...next, throttles: undefined });
  return next;
}

/** `X-RateLimit-Limit`: adopted while lower than configured, dropped when it is not any more. */
function adoptLimit(s: BudgetState, limit: number, now: number): BudgetState {
  const platform_limit = lowerThan(limit, s.configured);
  if (platform_limit === s.platform_limit) return s;
  return clampTokens(withoutUndefined({ ...s, tokens: refilled(s, now), at: Math.max(now, s.at), platform_limit }));
}

/**
 * `X-RateLimit-Remaining`: trusted when lower than what we would still allow ourselves this hour (the
 * token is shared, or the platform counts differently). Higher values are ignored: a response of a
 * request sent early in a tick reports more than what is left after the whole tick's polls.
 */
function adoptRemaining(s: BudgetState, remaining: number, resetAt: number, now: number): BudgetState {
  if (resetAt <= now) return s;
  const ours = Math.min(capOf(s) - spentInWindow(s, now), activePlatform(s, now)?.remaining ?? Infinity);
  if (remaining >= ours) return s;
  return { ...s, platform: { remaining: Math.max(0, remaining), reset_at: resetAt } };
}

/**
 * A 429: nothing is sent until Retry-After, or for a backoff that doubles with each 429 in a row. The
 * bucket is emptied so that polling resumes at the refill pace, not with a burst. A 429 that arrives
 * while already throttled (another poll of the same tick) is not a new one.
 */
function throttle(s: BudgetState, retryAfterMs: number | undefined, now: number): BudgetState {
  const active = s.throttled_until !== undefined && now < s.throttled_until;
  if (active && (retryAfterMs === undefined || now + retryAfterMs <= s.throttled_until!)) return s;
  const throttles = active ? (s.throttles ?? 1) : (s.throttles ?? 0) + 1;
  const wait = retryAfterMs ?? Math.min(BUDGET_POLICY.throttleMaxMs, BUDGET_POLICY.throttleBaseMs * 2 ** (throttles - 1));
  return { ...s, tokens: Math.min(refilled(s, now), 0), at: Math.max(now, s.at), throttled_until: now + wait, throttles };
}

const minuteOf = (t: number) => Math.floor(t / MINUTE);

function refilled(s: BudgetState, now: number): number {
  const elapsed = Math.max(0, now - s.at);
  return Math.min(burstOf(s), s.tokens + (elapsed / MINUTE) * perMinute(s));
}

const clampTokens = (s: BudgetState): BudgetState => (s.tokens > burstOf(s) ? { ...s, tokens: burstOf(s) } : s);

const activePlatform = (s: BudgetState, now: number) => (s.platform && now < s.platform.reset_at ? s.platform : undefined);

const lowerThan = (value: number | undefined, bound: number) => (value !== undefined && value < bound ? value : undefined);

/** Optional fields are absent, never `undefined`: states compare and store the same either way. */
function withoutUndefined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as Array<keyof T>) if (o[k] === undefined) delete o[k];
  return o;
}
