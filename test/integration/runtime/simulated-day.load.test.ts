/**
 * Load, shrunk to fit CI: two simulated hours at 20 applications, 4 clusters and 2 webhooks, through the
 * real poller within 1000 requests/hour. The same invariants as the full simulated day of
 * `npm run bench -- load` (500 applications, 50 clusters, 20 webhooks, 24 hours): every deployment
 * failure alerted, the request budget never exceeded in any hour, DynamoDB writes in proportion to
 * what is new, never to polls.
 */
import { describe, expect, it } from "vitest";
import { dayProblems, describeDay, simulateDay } from "../../../local/runtime/simulated-day.js";
import { freshTable, TEST_RETENTION_MS } from "../../support/dynamodb.js";

describe("two simulated hours at 20 applications, 4 clusters, 2 webhooks", () => {
  it("alerts every failure, never exceeds the budget, and writes in proportion to what is new", async () => {
    const t = await freshTable("load");
    const hours: Array<{ hour: number; polls: number }> = [];
    const r = await simulateDay({
      size: { applications: 20, clusters: 4, webhooks: 2 }, hours: 2, deploymentsPerHour: 30, clusterRunsPerHour: 4,
      store: { ...t, retentionMs: TEST_RETENTION_MS }, dispatchInTable: true,
      onHour: (p) => void hours.push(p),
    });
    console.log(`load: ${describeDay(r)}`);
    expect(r.failures).toBeGreaterThan(3);
    expect(dayProblems(r)).toEqual([]);
    // Dispatch's polling health is watched at every tick: a source it would call stalled breaks the day.
    expect(r.stalledSources).toEqual([]);
    expect(dayProblems({ ...r, stalledSources: ["cluster:o/c1"] })).toEqual(["1 sources counted as stalled (polling_stalled), e.g. cluster:o/c1"]);
    // Dispatch's state and the loop's lease in the table, as deployed: the loop's own use of them is
    // counted apart for the cost bench, its lease written at each claimed tick (a unit at least).
    expect(r.loopTicks).toBeGreaterThan(0);
    expect(r.dynamoUnits.loop!.write).toBeGreaterThanOrEqual(r.loopTicks);
    expect(r.dynamoUnits.loop!.write).toBeLessThanOrEqual(r.dynamoUnits.writesByItem.DISPATCH!);
    expect(r.dynamoUnits.loop!.read).toBeGreaterThan(0);
    // A line an hour for a bench to print: the span's hours, in order, its polls counted from the span's start.
    expect(hours.map((h) => h.hour)).toEqual([1, 2]);
    expect(hours[1]!.polls).toBeGreaterThan(hours[0]!.polls);
  }, 300_000);
});
