import { describe, expect, it } from "vitest";
import { askedWait, defaultRetryPolicy, nextRetryDelay } from "../../../lib/platform/retry.js";
import { readRateLimitHeaders } from "../../../lib/platform/cost.js";
import { readErrorDetail } from "../../../lib/platform/errors.js";
import { jsonPath } from "../../../lib/model/issues.js";

const NOW = Date.parse("2026-01-01T00:00:00Z");
const base = { policy: defaultRetryPolicy, idempotent: true, nowMs: NOW, random: () => 1 };

describe("retry policy", () => {
  it("backs off exponentially with full jitter, capped", () => {
    const delays = [0, 1, 2, 3].map((attempt) =>
      nextRetryDelay({ ...base, policy: { ...defaultRetryPolicy, maxAttempts: 10 }, attempt, outcome: { kind: "status", status: 503 } }),
    );
    expect(delays).toEqual([250, 500, 1000, 2000]);
    const capped = nextRetryDelay({ ...base, policy: { ...defaultRetryPolicy, maxAttempts: 20 }, attempt: 12, outcome: { kind: "timeout" } });
    expect(capped).toBe(defaultRetryPolicy.maxDelayMs);
    const jittered = nextRetryDelay({ ...base, random: () => 0.5, attempt: 2, outcome: { kind: "network" } });
    expect(jittered).toBe(500);
  });

  it("gives up after maxAttempts", () => {
    expect(nextRetryDelay({ ...base, attempt: 3, outcome: { kind: "status", status: 500 } })).toBeUndefined();
  });

  it("never retries a 4xx other than 429", () => {
    for (const status of [400, 401, 403, 404, 409]) {
      expect(nextRetryDelay({ ...base, attempt: 0, outcome: { kind: "status", status } })).toBeUndefined();
    }
  });

  it("waits what Retry-After asks, plus a little jitter", () => {
    const d = nextRetryDelay({
      ...base, random: () => 0, attempt: 0, outcome: { kind: "status", status: 429, rateLimit: { retryAfterMs: 7000 } },
    });
    expect(d).toBe(7000);
  });

  it("waits until X-RateLimit-Reset on a 429 without Retry-After", () => {
    const d = nextRetryDelay({
      ...base, random: () => 0, attempt: 0,
      outcome: { kind: "status", status: 429, rateLimit: { resetAt: NOW + 12_000 } },
    });
    expect(d).toBe(12_000);
  });

  it("hands a wait longer than maxWaitMs back to the caller instead of sleeping", () => {
    const d = nextRetryDelay({
      ...base, attempt: 0, outcome: { kind: "status", status: 429, rateLimit: { retryAfterMs: 3_600_000 } },
    });
    expect(d).toBeUndefined();
  });

  it("retries a non-idempotent POST only when the platform says it did nothing (429, 503)", () => {
    const post = { ...base, idempotent: false, attempt: 0 };
    expect(nextRetryDelay({ ...post, outcome: { kind: "timeout" } })).toBeUndefined();
    expect(nextRetryDelay({ ...post, outcome: { kind: "status", status: 500 } })).toBeUndefined();
    expect(nextRetryDelay({ ...post, outcome: { kind: "status", status: 503 } })).toBeGreaterThan(0);
    expect(nextRetryDelay({ ...post, outcome: { kind: "status", status: 429 } })).toBeGreaterThan(0);
  });

  it("asks for no wait when the window is not spent", () => {
    expect(askedWait({ remaining: 5, resetAt: NOW + 1000 }, NOW)).toBeUndefined();
    expect(askedWait({ remaining: 0, resetAt: NOW + 1000 }, NOW)).toBe(1000);
  });
});

describe("rate-limit headers", () => {
  it("reads Retry-After in seconds and as an HTTP date", () => {
    expect(readRateLimitHeaders(new Headers({ "retry-after": "3" }), NOW)?.retryAfterMs).toBe(3000);
    const date = new Date(NOW + 5000).toUTCString();
    expect(readRateLimitHeaders(new Headers({ "retry-after": date }), NOW)?.retryAfterMs).toBe(5000);
  });

  it("reads X-RateLimit-Reset as epoch seconds or as seconds from now", () => {
    const epoch = readRateLimitHeaders(new Headers({ "x-ratelimit-reset": String(NOW / 1000 + 60) }), NOW);
    expect(epoch?.resetAt).toBe(NOW + 60_000);
    const delta = readRateLimitHeaders(new Headers({ "x-ratelimit-reset": "60" }), NOW);
    expect(delta?.resetAt).toBe(NOW + 60_000);
  });

  it("reads limit and remaining, and nothing from a response without them", () => {
    const h = readRateLimitHeaders(new Headers({ "x-ratelimit-limit": "1000", "x-ratelimit-remaining": "998" }), NOW);
    expect(h).toEqual({ limit: 1000, remaining: 998 });
    expect(readRateLimitHeaders(new Headers({ "content-type": "application/json" }), NOW)).toBeUndefined();
  });
});

describe("error bodies", () => {
  it("reads both known shapes, and none", () => {
    expect(readErrorDetail('{"status":404,"detail":"Application not found"}')).toBe("Application not found");
    expect(readErrorDetail('{"status":400,"error":"Bad Request","message":"key is required"}')).toBe(
      "Bad Request: key is required",
    );
    expect(readErrorDetail("")).toBeUndefined();
    expect(readErrorDetail("<html><body>Bad gateway</body></html>")).toBe("<html><body>Bad gateway</body></html>");
  });
});

describe("jsonPath", () => {
  it("names array indexes and odd keys", () => {
    expect(jsonPath(["results", 3, "target_response_status_code"])).toBe("$.results[3].target_response_status_code");
    expect(jsonPath(["request", "X-Signature"])).toBe('$.request["X-Signature"]');
    expect(jsonPath([])).toBe("$");
  });
});
