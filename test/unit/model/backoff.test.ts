import { describe, expect, it } from "vitest";
import { backoffDelay, fullJitterMs, parseRetryAfter } from "../../../lib/model/backoff.js";

const policy = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 4_000, maxWaitMs: 30_000 };
const NOW = Date.parse("2026-01-01T00:00:00Z");

describe("backoff", () => {
  it("waits up to base·2ⁿ, capped, scaled by the jitter", () => {
    expect([0, 1, 2, 3].map((attempt) => backoffDelay({ policy, attempt, random: () => 1 }))).toEqual([500, 1000, 2000, 4000]);
    expect(backoffDelay({ policy: { ...policy, maxAttempts: 20 }, attempt: 10, random: () => 1 })).toBe(4000);
    expect(backoffDelay({ policy, attempt: 2, random: () => 0.25 })).toBe(500);
    expect(fullJitterMs(2, policy, () => 0.001)).toBeCloseTo(2);
  });

  it("gives up when no attempt is left", () => {
    expect(backoffDelay({ policy, attempt: 4, random: () => 1 })).toBeUndefined();
  });

  it("waits what Retry-After asks plus at most a second of jitter, and hands back a longer wait", () => {
    expect(backoffDelay({ policy, attempt: 0, askedMs: 7_000, random: () => 0 })).toBe(7_000);
    expect(backoffDelay({ policy, attempt: 0, askedMs: 7_000, random: () => 1 })).toBe(7_500);
    expect(backoffDelay({ policy: { ...policy, baseDelayMs: 5_000, maxDelayMs: 9_000 }, attempt: 0, askedMs: 0, random: () => 1 })).toBe(1_000);
    expect(backoffDelay({ policy, attempt: 0, askedMs: 30_001, random: () => 0 })).toBeUndefined();
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    expect(parseRetryAfter("3", NOW)).toBe(3_000);
    expect(parseRetryAfter(" 1.5 ", NOW)).toBe(1_500);
    expect(parseRetryAfter("-4", NOW)).toBe(0);
    expect(parseRetryAfter(new Date(NOW + 20_000).toUTCString(), NOW)).toBe(20_000);
    expect(parseRetryAfter(new Date(NOW - 20_000).toUTCString(), NOW)).toBe(0);
    for (const v of [null, undefined, "", "  ", "soon"]) expect(parseRetryAfter(v, NOW)).toBeUndefined();
  });
});
