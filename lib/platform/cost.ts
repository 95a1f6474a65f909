/**
 * What one client call cost: the request budget (lib/dispatch/budget.ts) spends and tracks requests with these.
 */
import { headerNumber, parseRetryAfter } from "../model/backoff.js";
import type { RateLimitHeaders } from "../model/poll.js";

// The headers' shape is what dispatch's budget reads: it lives with the poll result in lib/model.
export type { RateLimitHeaders };

export interface CallCost {
  endpoint: string;
  /** HTTP requests sent, retries included. */
  requests: number;
  retries: number;
  /** Status of each attempt; 0 where no response came (timeout, network). */
  statuses: number[];
  /** Time spent waiting between attempts. */
  waitedMs: number;
  /** The rate-limit headers of the last response that had any. */
  rateLimit?: RateLimitHeaders;
}

export const emptyCost = (endpoint: string): CallCost => ({
  endpoint,
  requests: 0,
  retries: 0,
  statuses: [],
  waitedMs: 0,
});

/**
 * Reads `Retry-After` (seconds or an HTTP date) and `X-RateLimit-*`. `X-RateLimit-Reset` is taken as epoch
 * seconds when it is that large, else as seconds from now: services use both and the spec names neither.
 */
export function readRateLimitHeaders(headers: Headers, nowMs: number): RateLimitHeaders | undefined {
  const out: RateLimitHeaders = {};
  const limit = headerNumber(headers.get("x-ratelimit-limit"));
  const remaining = headerNumber(headers.get("x-ratelimit-remaining"));
  const reset = headerNumber(headers.get("x-ratelimit-reset"));
  if (limit !== undefined) out.limit = limit;
  if (remaining !== undefined) out.remaining = remaining;
  if (reset !== undefined) out.resetAt = reset > 1e9 ? reset * 1000 : nowMs + reset * 1000;
  const retryAfterMs = parseRetryAfter(headers.get("retry-after"), nowMs);
  if (retryAfterMs !== undefined) out.retryAfterMs = retryAfterMs;
  return Object.keys(out).length ? out : undefined;
}
