/** What the tests that drive dispatch on a simulated clock share: a poll's result, a seeded random source, the busiest hour. */
import type { PollResult } from "../../lib/model/poll.js";

const HOUR = 3_600_000;

/** A successful poll's result of one request and no news, with `over` on top. */
export function pollResult(source: string, over: Partial<PollResult> = {}): PollResult {
  return {
    source, ok: true, requests: 1, retries: 0, newRecords: 0, alerts: 0, suppressed: 0, rejected: 0, inProgress: 0,
    hotServices: [], gapSuspected: false, firstSight: false, ...over,
  };
}

/** A small deterministic random source. */
export function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/** The most requests in any 60-minute window [t, t + 1 h) of a log of (time, count), in time order. */
export function maxInAnyHour(log: ReadonlyArray<readonly [number, number]>): number {
  let max = 0;
  let sum = 0;
  let start = 0;
  for (const [t, n] of log) {
    sum += n;
    while (log[start]![0] <= t - HOUR) sum -= log[start++]![1];
    max = Math.max(max, sum);
  }
  return max;
}
