/**
 * When the platform client sends a failed request again, and after how long: which outcomes are worth
 * another attempt, for which methods, and what the platform asked for; the wait itself is the one
 * backoff of lib/model/backoff.ts. Pure: the client supplies the clock and the random source.
 */
import { type BackoffPolicy, backoffDelay } from "../model/backoff.js";
import type { RateLimitHeaders } from "./cost.js";

export type RetryPolicy = BackoffPolicy;

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
  if (!isRetryableOutcome(outcome)) return undefined;
  if (!idempotent && !(outcome.kind === "status" && (outcome.status === 429 || outcome.status === 503))) {
    return undefined;
  }
  const askedMs = outcome.kind === "status" ? askedWait(outcome.rateLimit, nowMs, outcome.status === 429) : undefined;
  return backoffDelay({ policy, attempt, askedMs, random });
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
