/**
 * The one backoff: how long to wait before trying again, for the platform client's retries and Slack
 * sending. Pure: the caller supplies the clock and the random source, so policies are tested without
 * waiting.
 *
 * Written here rather than taken from a library (p-retry, ky, undici's RetryAgent) because each attempt
 * must be counted for the request budget, and the wait must come from `Retry-After` (or the platform's
 * `X-RateLimit-Reset`) when the other side gives one.
 */

export interface BackoffPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** Backoff ceiling doubles from this: attempt n waits up to base·2ⁿ. */
  baseDelayMs: number;
  /** Cap of one backoff wait. */
  maxDelayMs: number;
  /** A wait the other side asks for longer than this is not waited for: the error goes to the caller. */
  maxWaitMs: number;
}

/** Between DynamoDB batch requests asked again for what they left unprocessed (throttling, size limits). */
export const UNPROCESSED_BACKOFF = { baseDelayMs: 50, maxDelayMs: 2_000 } as const;

/**
 * "Full jitter" (AWS Architecture Blog, "Exponential Backoff And Jitter"): anywhere from 0 to the
 * ceiling base·2ⁿ (capped), so many clients failing together do not come back together. Unrounded.
 */
export function fullJitterMs(attempt: number, policy: Pick<BackoffPolicy, "baseDelayMs" | "maxDelayMs">, random: () => number): number {
  return random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
}

/**
 * The wait before attempt `attempt + 1` (attempt counts from 0), or undefined to give up: no attempt
 * left, or the other side asked (`askedMs`, from Retry-After) for longer than the policy waits. What
 * was asked is waited plus a little jitter, so many clients told the same time do not return at once.
 */
export function backoffDelay(args: { policy: BackoffPolicy; attempt: number; askedMs?: number | undefined; random: () => number }): number | undefined {
  const { policy, attempt, askedMs, random } = args;
  if (attempt + 1 >= policy.maxAttempts) return undefined;
  const backoff = fullJitterMs(attempt, policy, random);
  if (askedMs === undefined) return Math.round(backoff);
  if (askedMs > policy.maxWaitMs) return undefined;
  return Math.round(askedMs + random() * Math.min(1_000, policy.baseDelayMs));
}

/** A header's number, or undefined when absent, blank or not a finite number. */
export const headerNumber = (v: string | null | undefined): number | undefined => {
  if (v === null || v === undefined || v.trim() === "") return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
};

/** `Retry-After` (seconds, or an HTTP date) as milliseconds from now; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const seconds = headerNumber(value);
  if (seconds !== undefined) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}
