import { describe, expect, it } from "vitest";
import { LOST_RACE, retryLostRaces } from "../../../lib/store/optimistic.js";

describe("retryLostRaces", () => {
  it("tries again after each lost race, pausing between, and returns the first outcome", async () => {
    const pauses: number[] = [];
    const tried: number[] = [];
    const out = await retryLostRaces({ attempts: 5, what: "x", pause: async (n) => void pauses.push(n) }, async (n) => {
      tried.push(n);
      return n < 2 ? LOST_RACE : `won at ${n}`;
    });
    expect(out).toBe("won at 2");
    expect(tried).toEqual([0, 1, 2]);
    expect(pauses).toEqual([0, 1]);
  });

  it("gives up after its attempts, naming what it updated", async () => {
    let tried = 0;
    await expect(retryLostRaces({ attempts: 3, what: "dispatch state default" }, async () => (tried++, LOST_RACE)))
      .rejects.toThrow("dispatch state default: too much contention, gave up after 3 attempts");
    expect(tried).toBe(3);
  });

  it("lets an error other than a lost race through at once", async () => {
    let tried = 0;
    await expect(retryLostRaces({ attempts: 3, what: "x" }, async () => {
      tried++;
      throw new Error("throttled");
    })).rejects.toThrow("throttled");
    expect(tried).toBe(1);
  });
});
