/**
 * When to send a failed request again, and after how long. Pure: the client supplies the clock and the
 * random source, so the policy is tested without waiting.
 *
 * Written here rather than taken from a library (p-retry, ky, undici's RetryAgent) because each attempt
 * must be counted for the request budget, and the wait must come from `Retry-After` or
 * `X-RateLimit-Reset` when the platform gives them — none of those libraries reports both.
 */
import type { RateLimitHeaders } from "./cost.js";

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** Backoff ceiling doubles from this: attempt n waits up to base·2ⁿ. */
  baseDelayMs: number;
  /** Cap of one backoff wait. */
  maxDelayMs: number;
  /** A wait the platform asks for longer than this is not waited for: the error goes to the caller. */
  maxWaitMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxWaitMs: 60_000,
};

export type AttemptOutcome =
  | { kind: "status"; status: number; rateLimit?: RateLimitHeaders }
  | { kind: "timeout" }
  | { kind: "network" };

/** Whether this outcome is worth another attempt at all, method aside. */
export function isRetryableOutcome(o: AttemptOutcome): boolean {
  if (o.kind !== "status") return true;
  return o.status === 429 || o.status >= 500;
}

/**
 * The wait before attempt `attempt + 1` (attempt counts from 0), or undefined to give up.
 * A POST that is not known to be idempotent is sent again only when the platform says it did not act on
 * it (429, 503): after a timeout or another 5xx it may have created the record already.
 */
export function nextRetryDelay(args: {
  policy: RetryPolicy;
  attempt: number;
  outcome: AttemptOutcome;
  idempotent: boolean;
  nowMs: number;
  random: () => number;
}): number | undefined {
  const { policy, attempt, outcome, idempotent, nowMs, random } = args;
  if (attempt + 1 >= policy.maxAttempts || !isRetryableOutcome(outcome)) return undefined;
  if (!idempotent && !(outcome.kind === "status" && (outcome.status === 429 || outcome.status === 503))) {
    return undefined;
  }
  // Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter").
  const backoff = random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  const asked = outcome.kind === "status" ? askedWait(outcome.rateLimit, nowMs, outcome.status === 429) : undefined;
  if (asked === undefined) return Math.round(backoff);
  if (asked > policy.maxWaitMs) return undefined;
  // Wait what was asked plus a little jitter, so many clients told the same time do not return at once.
  return Math.round(asked + random() * Math.min(1_000, policy.baseDelayMs));
}

/**
 * How long the platform asked us to wait: Retry-After, else the reset of the window when the window is
 * spent (a 429, or `X-RateLimit-Remaining: 0`).
 */
export function askedWait(rl: RateLimitHeaders | undefined, nowMs: number, limited = false): number | undefined {
  if (!rl) return undefined;
  if (rl.retryAfterMs !== undefined) return rl.retryAfterMs;
  if ((limited || rl.remaining === 0) && rl.resetAt !== undefined) return Math.max(0, rl.resetAt - nowMs);
  return undefined;
}
