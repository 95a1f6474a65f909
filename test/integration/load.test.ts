/**
 * Load (issue 7): the pipeline against the simulator at 500 applications, 50 clusters and 20 webhooks
 * for a simulated day of deployments and cluster runs, within 1000 requests/hour. Every deployment
 * failure is alerted (not one left silent), the request budget is never exceeded in any hour, and
 * DynamoDB writes grow with new records, not with polls.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pMap from "p-map";
import { startSimulator, type Simulator } from "../../local/simulator/index.js";
import { checkConfig } from "../../lib/config/load.js";
import { watchlist } from "../../lib/ingest/dispatch.js";
import { everySource } from "../../lib/ingest/cycle.js";
import { pollSource, type PollDeps } from "../../lib/ingest/poll.js";
import { createPlatformClient } from "../../lib/platform/client.js";
import { DynamoIngestStore } from "../../lib/store/ingest-store.js";
import { MemoryDispatchStore, POLL_CONCURRENCY, TickRunner } from "../../local/simulated-run.js";
import { freshTable, TEST_RETENTION_MS } from "../support/dynamodb.js";

const HOUR = 3_600_000;
const silent = { info() {}, warn() {}, error() {} };

describe("a simulated day at 500 applications, 50 clusters, 20 webhooks", () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 3, size: { applications: 500, clusters: 50, webhooks: 20 } });
  });
  afterAll(() => sim.close());

  it("alerts every failure, never exceeds the budget, and writes in proportion to what is new", async () => {
    const t = await freshTable("load");
    const config = checkConfig(
      {
        platform: { url: sim.url, token: "env:T", requests_per_hour: 1000 },
        watch: [{ organization: sim.ids.organizationId, webhooks: sim.ids.webhookIds, clusters: sim.ids.clusterIds, applications: sim.ids.applicationIds }],
      },
      "load", {},
    );
    const watch = watchlist(config);
    const now = () => sim.clock.now();
    const store = new DynamoIngestStore({ client: t.client, tableName: t.tableName, retentionMs: TEST_RETENTION_MS, now });
    const alerted = new Set<string>();
    let clusterErrors = 0;
    let suppressedFailures = 0;
    const deps: PollDeps = {
      client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token" }),
      store, now, backfillWindowMs: config.backfillWindowMs, log: silent,
      onAlert: (d, suppression) => {
        if (d.kind === "cluster_log" && !suppression) clusterErrors++;
        if (d.kind !== "deployment" || !d.deployment || (d.transition !== "failed" && d.transition !== "still_failing")) return;
        if (suppression) suppressedFailures++;
        else alerted.add(d.deployment.execution_id);
      },
    };
    const dispatch = new MemoryDispatchStore();
    const run = new TickRunner(sim, watch, dispatch, deps);

    // First sight of everything, then steady state.
    await pMap(await everySource(dispatch, watch), (req) => pollSource(req, deps), { concurrency: POLL_CONCURRENCY });
    while (run.polledSources.size < watch.sources.length) await run.tick();
    const firstSightSuppressed = suppressedFailures;

    const from = sim.clock.nowMs();
    const activity = sim.scenario.randomActivity({
      from: new Date(from), durationMs: 24 * HOUR, deploymentsPerHour: 40, failureRate: 0.1, cancelRate: 0.02,
      clusterRunsPerHour: 6, clusterErrorRate: 0.3,
    });
    const scheduled = new Set(activity.executionIds);
    const failures = [...sim.model.runs.values()]
      .filter((r) => r.executionId && scheduled.has(r.executionId) && r.phases.at(-1)!.status.endsWith("_ERROR"))
      .map((r) => r.executionId!);
    const writesBefore = store.writes.count;
    const requestsBefore = run.requests;
    const newBefore = run.newRecords;
    const pollsBefore = run.polls;
    while (sim.clock.nowMs() < from + 24 * HOUR || (sim.clock.nowMs() < from + 25 * HOUR && !failures.every((f) => alerted.has(f)))) {
      await run.tick();
    }
    const newRecords = run.newRecords - newBefore;

    const missed = failures.filter((f) => !alerted.has(f));
    expect(failures.length).toBeGreaterThan(50);
    expect(missed).toEqual([]);
    expect(suppressedFailures - firstSightSuppressed).toBe(0);
    expect(clusterErrors).toBeGreaterThan(0);
    expect(run.maxInWindow(60)).toBeLessThanOrEqual(1000);
    expect(run.failedPolls).toBe(0);
    const writes = store.writes.count - writesBefore;
    // A record, its alert, a cursor per poll that found news: never a write per quiet poll.
    expect(writes).toBeLessThanOrEqual(3 * newRecords);
    expect(run.polls - pollsBefore).toBeGreaterThan(writes / 10);
    console.log(
      `load: ${activity.deployments} deployments (${failures.length} failed), ${activity.clusterRuns} cluster runs; ` +
      `${run.polls - pollsBefore} polls, ${run.requests - requestsBefore} requests (max ${run.maxInWindow(60)} in an hour); ` +
      `${newRecords} new records, ${writes} writes; ${clusterErrors} cluster errors alerted; 0 failures missed`,
    );
  }, 900_000);
});
