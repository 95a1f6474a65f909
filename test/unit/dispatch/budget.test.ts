import { describe, expect, it } from "vitest";
import type { BudgetState } from "../../../lib/model/dispatch.js";
import { maxInAnyHour } from "../../support/dispatch-sim.js";
import { BUDGET_POLICY, available, capOf, limitOf, newBudget, observeResponse, perMinute, reconfigure, spend, spentInWindow } from "../../../lib/dispatch/budget.js";

const MIN = 60_000;
const HOUR = 3_600_000;
const T0 = Date.parse("2026-03-02T10:00:00Z");

/** Spends everything available at each step of `stepMs` for `durationMs`; returns the spend times. */
function drain(b: BudgetState, from: number, durationMs: number, stepMs: number) {
  const log: Array<[number, number]> = [];
  for (let t = from; t < from + durationMs; t += stepMs) {
    const n = available(b, t);
    b = spend(b, n, t);
    if (n) log.push([t, n]);
  }
  return { b, log };
}

describe("token bucket and sliding-hour cap", () => {
  it("starts with a burst of a few minutes and refills so that a burst plus 61 minutes fit under the cap", () => {
    const b = newBudget(1000, T0);
    expect(capOf(b)).toBe(950);
    expect(perMinute(b) * (61 + BUDGET_POLICY.burstMinutes)).toBeCloseTo(950, 9); // ≈ 14.8 a minute, 890 an hour
    const burst = Math.floor(perMinute(b) * BUDGET_POLICY.burstMinutes);
    expect(available(b, T0)).toBe(burst);
    const spent = spend(b, available(b, T0), T0);
    expect(available(spent, T0)).toBe(0);
    expect(available(spent, T0 + 10 * MIN)).toBe(burst); // no more than the burst
    expect(available(spent, T0 + MIN)).toBe(Math.floor(perMinute(b) + (perMinute(b) * BUDGET_POLICY.burstMinutes - burst)));
  });

  it("never exceeds the per-hour budget in any 60-minute window, over 24 hours of draining every 7 s", () => {
    const { log } = drain(newBudget(1000, T0), T0, 24 * HOUR, 7_000);
    const total = log.reduce((s, [, n]) => s + n, 0);
    expect(maxInAnyHour(log)).toBeLessThanOrEqual(capOf(newBudget(1000, T0)));
    expect(maxInAnyHour(log)).toBeLessThanOrEqual(1000);
    // …while using what the bucket allows: 5 % kept back for overruns, the burst and the 61st minute.
    expect(total / 24).toBeGreaterThan(perMinute(newBudget(1000, T0)) * 60 - 1);
  });

  it("holds the cap for windows that do not start on a minute boundary", () => {
    // Burst at the end of a minute, then drain at the start of the minute an hour later.
    let b = newBudget(100, T0 + 59_000);
    b = spend(b, available(b, T0 + 59_000), T0 + 59_000);
    const { log } = drain(b, T0 + 60_000, 2 * HOUR, 1_000);
    expect(maxInAnyHour([[T0 + 59_000, b.minutes[0]![1]], ...log])).toBeLessThanOrEqual(capOf(b));
  });

  it("counts overruns recorded after the fact, which then hold back what follows", () => {
    let b = newBudget(1000, T0);
    b = spend(b, 10, T0);
    const before = available(b, T0 + 1000);
    b = spend(b, 30, T0 + 1000); // retries and second pages of the polls just run
    expect(available(b, T0 + 1000)).toBe(Math.max(0, before - 30));
    expect(spentInWindow(b, T0 + 1000)).toBe(40);
    expect(spentInWindow(b, T0 + 61 * MIN)).toBe(0);
  });
});

describe("rate-limit feedback lowers the budget at once", () => {
  it("a 429 with Retry-After stops everything until then, and empties the bucket", () => {
    const b = observeResponse(newBudget(1000, T0), { rateLimited: true, rateLimit: { retryAfterMs: 120_000 } }, T0);
    expect(available(b, T0)).toBe(0);
    expect(available(b, T0 + 119_000)).toBe(0);
    expect(available(b, T0 + 121_000)).toBe(Math.floor((121 / 60) * perMinute(b))); // refill pace, no burst
  });

  it("a 429 without Retry-After backs off longer with each 429 in a row", () => {
    let b = observeResponse(newBudget(1000, T0), { rateLimited: true }, T0);
    expect(b.throttled_until).toBe(T0 + BUDGET_POLICY.throttleBaseMs);
    // Another poll of the same tick reports its 429: not a new one.
    expect(observeResponse(b, { rateLimited: true }, T0 + 2_000)).toBe(b);
    b = observeResponse(b, { rateLimited: true }, T0 + 61_000);
    expect(b.throttled_until).toBe(T0 + 61_000 + 2 * BUDGET_POLICY.throttleBaseMs);
    b = observeResponse(b, { rateLimited: true }, T0 + 200_000);
    expect(b.throttled_until).toBe(T0 + 200_000 + 4 * BUDGET_POLICY.throttleBaseMs);
    // An accepted request ends the run; the next 429 starts from the base again.
    b = observeResponse(b, { rateLimited: false }, T0 + 500_000);
    expect(b.throttles).toBeUndefined();
    b = observeResponse(b, { rateLimited: true }, T0 + 600_000);
    expect(b.throttled_until).toBe(T0 + 600_000 + BUDGET_POLICY.throttleBaseMs);
  });

  it("the backoff has a ceiling", () => {
    let b = newBudget(1000, T0);
    const waits: number[] = [];
    for (let i = 0, t = T0; i < 12; i++, t = b.throttled_until! + 1) {
      b = observeResponse(b, { rateLimited: true }, t);
      waits.push(b.throttled_until! - t);
    }
    expect(Math.max(...waits)).toBe(BUDGET_POLICY.throttleMaxMs);
    expect(waits.at(-1)).toBe(BUDGET_POLICY.throttleMaxMs);
  });

  it("X-RateLimit-Remaining lower than our own count caps us until X-RateLimit-Reset", () => {
    let b = newBudget(1000, T0);
    b = observeResponse(b, { rateLimited: false, rateLimit: { remaining: 5, resetAt: T0 + 10 * MIN } }, T0);
    expect(available(b, T0)).toBe(5);
    b = spend(b, 5, T0);
    expect(available(b, T0 + 5 * MIN)).toBe(0);
    expect(available(b, T0 + 10 * MIN)).toBeGreaterThan(5); // the platform's window reset
  });

  it("X-RateLimit-Remaining higher than our own count changes nothing (no write for routine responses)", () => {
    let b = newBudget(1000, T0);
    b = spend(b, 900, T0);
    const same = observeResponse(b, { rateLimited: false, rateLimit: { limit: 1000, remaining: 400, resetAt: T0 + 30 * MIN } }, T0 + 1000);
    expect(same).toBe(b);
  });

  it("X-RateLimit-Limit lower than configured is adopted, and dropped when it is not lower any more", () => {
    let b = newBudget(1000, T0);
    b = observeResponse(b, { rateLimited: false, rateLimit: { limit: 600 } }, T0);
    expect(limitOf(b)).toBe(600);
    expect(available(b, T0)).toBe(Math.floor(perMinute(b) * BUDGET_POLICY.burstMinutes));
    const { log } = drain(b, T0, 6 * HOUR, 10_000);
    expect(maxInAnyHour(log)).toBeLessThanOrEqual(600);
    expect(observeResponse(b, { rateLimited: false, rateLimit: { limit: 600 } }, T0 + 1)).toBe(b);
    b = observeResponse(b, { rateLimited: false, rateLimit: { limit: 5000 } }, T0 + 1);
    expect(limitOf(b)).toBe(1000);
  });

  it("a changed configuration is adopted; an unchanged one leaves the state as it is", () => {
    const b = newBudget(1000, T0);
    expect(reconfigure(b, 1000)).toBe(b);
    const lower = reconfigure(b, 200);
    expect(limitOf(lower)).toBe(200);
    expect(available(lower, T0)).toBe(Math.floor(perMinute(lower) * BUDGET_POLICY.burstMinutes));
  });

  it("the state survives a JSON round trip (it is stored between invocations)", () => {
    let b = newBudget(1000, T0);
    b = spend(b, 40, T0);
    b = observeResponse(b, { rateLimited: true, rateLimit: { remaining: 3, resetAt: T0 + HOUR, retryAfterMs: 30_000 } }, T0);
    const copy = JSON.parse(JSON.stringify(b)) as BudgetState;
    expect(copy).toEqual(b);
    expect(available(copy, T0 + 40_000)).toBe(available(b, T0 + 40_000));
  });
});
