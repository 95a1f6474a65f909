/**
 * Per-token request budget over fixed windows of one simulated hour (the platform budgets about 1000
 * requests per hour per token). Windows are aligned to the hour on the simulated clock.
 */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Epoch seconds (simulated) when the window resets. */
  reset: number;
  exceeded: boolean;
  /** Seconds until the reset; meaningful when exceeded. */
  retryAfter: number;
}

const HOUR = 3_600_000;

export class RateLimiter {
  private readonly counts = new Map<string, { window: number; count: number }>();

  constructor(readonly requestsPerHour: number) {
    if (!Number.isInteger(requestsPerHour) || requestsPerHour < 1) throw new RangeError("rateLimit.requestsPerHour must be an integer >= 1");
  }

  /** Counts one request of `token` at `nowMs` and says where the token stands. */
  hit(token: string, nowMs: number): RateLimitState {
    const window = Math.floor(nowMs / HOUR);
    const entry = this.counts.get(token);
    const count = entry && entry.window === window ? entry.count + 1 : 1;
    this.counts.set(token, { window, count });
    const resetMs = (window + 1) * HOUR;
    return {
      limit: this.requestsPerHour,
      remaining: Math.max(0, this.requestsPerHour - count),
      reset: Math.floor(resetMs / 1000),
      exceeded: count > this.requestsPerHour,
      retryAfter: Math.max(1, Math.ceil((resetMs - nowMs) / 1000)),
    };
  }
}

export function rateLimitHeaders(s: RateLimitState): Record<string, string> {
  return { "X-RateLimit-Limit": String(s.limit), "X-RateLimit-Remaining": String(s.remaining), "X-RateLimit-Reset": String(s.reset) };
}
