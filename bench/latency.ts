/**
 * Failure-detection latency under the request budget: for each deployment that ended in an error state,
 * the simulated time of the poll that raised its `failed` / `still_failing` alert minus the simulated
 * time the execution entered the error state; with and without the change feed (one watched webhook),
 * for 50, 200 and 500 watched applications, within `platform.requests_per_hour: 1000`.
 *
 * Driven tick by tick on the simulator's clock: each simulated minute dispatch plans the tick
 * (`planPolls`), the planned polls run a few at a time through the real poller (`pollAndRecord` →
 * `pollSource` against the simulator over HTTP, DynamoIngestStore on DynamoDB Local) and are folded back
 * into dispatch, then the clock moves one minute. Dispatch's state is held in memory (the same pure
 * planTick / applyPollResult that DynamoDispatchStore persists): its DynamoDB round trips would only add
 * wall time, not change a simulated figure, and the whole `npm run bench` has to stay within minutes.
 *
 * A failure whose alert was raised suppressed (the poller's backfill rule: read more than the backfill
 * window after it happened, at a poll that came more than that window after the previous one) counts as
 * never alerted; "first read in error state" gives the latency with those included.
 */
import pMap from "p-map";
import { DeleteTableCommand } from "@aws-sdk/client-dynamodb";
import { startSimulator, type Simulator } from "../local/simulator/index.js";
import { checkConfig } from "../lib/config/load.js";
import { watchlist } from "../lib/dispatch/watchlist.js";
import type { Watchlist } from "../lib/model/dispatch.js";
import { everySource } from "../lib/dispatch/tick.js";
import { pollSource } from "../lib/poll/poll.js";
import { pollDepsOf } from "../lib/app/ingest.js";
import { POLL_CONCURRENCY, TickRunner } from "../local/runtime/simulated-run.js";
import { MemoryDispatchStore, MemoryFeedLoopStore } from "../lib/store/memory/dispatch-store.js";
import { FEED_LOOP } from "../lib/dispatch/feed-loop.js";
import { createPlatformClient } from "../lib/platform/client.js";
import { DynamoIngestStore } from "../lib/store/ingest-store.js";
import type { Suppression } from "../lib/model/alert-item.js";
import { dynamo, percentile, report, section } from "./support.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const TICK_MS = MINUTE;
const REQUESTS_PER_HOUR = 1000;
const BACKFILL_WINDOW_MS = 15 * MINUTE;
/** Simulated hours of activity measured after the warm-up. */
const PERIOD_HOURS = 4;
/** After the activity ends, quiet ticks go on until every failure was read, at most this long. */
const TAIL_MAX_MS = 60 * MINUTE;
/** The same activity for every size, so that only the number of watched applications changes. */
const DEPLOYMENTS_PER_HOUR = 60;
const FAILURE_RATE = 0.1;
/** As local/runtime/run.ts: a few polls in flight at once. */
const SEED = 7;
const SIZES = (process.env.BENCH_DETECTION_SIZES ?? "50,200,500").split(",").map(Number);
const FEEDS = (process.env.BENCH_DETECTION_FEED ?? "with,without").split(",").map((f) => f === "with");

const silent = { info() {}, warn() {}, error() {} };
const minutes = (ms: number) => ms / MINUTE;
const clockOf = (ms: number) => new Date(ms).toISOString().slice(11, 16);

interface Failure {
  executionId: string;
  serviceId: string;
  status: string;
  errorAt: number;
}

/** A failed / still_failing alert raised for an execution, pending or suppressed. */
interface Raised {
  at: number;
  suppression?: Suppression;
}

interface Outcome {
  sources: number;
  failures: Failure[];
  /** Failures alerted (not suppressed): alert poll time − error time. */
  latenciesMs: number[];
  /** Every failure read in its error state, alert suppressed or not: first such read − error time. */
  readLatenciesMs: number[];
  missed: Array<{ failure: Failure; why: string }>;
  requestsPerHour: number;
  maxRequestsInAnHour: number;
  naivePerHour: number;
  warmupRequests: number;
  settleMinutes: number;
  simulatedHours: number;
  polls: number;
  failedPolls: number;
  deployments: number;
  wallMs: number;
}

export async function benchDetectionLatency() {
  section({
    id: "detection",
    title: "Failure-detection latency under the request budget",
    method:
      `For each deployment that ended in an error state: the simulated time of the poll that raised its failed / still_failing alert minus the simulated ` +
      `time the execution entered the error state (the simulator's clock, not wall time). Driven tick by tick: each simulated minute dispatch plans the ` +
      `tick within ${REQUESTS_PER_HOUR} requests/hour, the planned polls run through the real poller against the simulator over HTTP into DynamoDB Local, ` +
      `then the clock moves one minute; with the change feed, its loop ticks every ${FEED_LOOP.everyMs / 1000} s of the minute (lib/dispatch/feed-loop.ts: the feed read, then what it names). ${PERIOD_HOURS} simulated hours of ${DEPLOYMENTS_PER_HOUR} deployments/hour (${FAILURE_RATE * 100} % failing) per ` +
      `configuration, for ${SIZES.join(", ")} watched applications, with and without the change feed (one watched webhook's delivery log). Dispatch's ` +
      "state and the loop's lease are held in memory (the same pure planTick / applyPollResult / claimFeedTick). A failure whose alert was suppressed by the backfill rule counts as not alerted.",
  });
  const started = performance.now();
  for (const applications of SIZES) {
    for (const feed of FEEDS) {
      const o = await runConfiguration(applications, feed);
      const label = `${applications} apps, ${feed ? "with" : "without"} change feed`;
      const how =
        `simulator clock, ${minutes(TICK_MS)}-min ticks${feed ? ` and the change feed's loop every ${FEED_LOOP.everyMs / 1000} s` : ""}: planPolls (dispatch state in memory) → pollSource over HTTP → DynamoIngestStore ` +
        `on DynamoDB Local, ${POLL_CONCURRENCY} in flight; randomActivity ${DEPLOYMENTS_PER_HOUR} deployments/h over ${applications} apps, ` +
        `failureRate ${FAILURE_RATE}, ${PERIOD_HOURS} h (+ quiet tail until every failure was read), after a first-sight poll of every ` +
        `source and ${o.settleMinutes} min of dispatch ticks; ${o.failures.length} failures`;
      const p = (values: number[], q: number) => minutes(percentile(values, q));
      const unitOf = (ms: number) => (feed ? { value: ms / 1000, unit: "s" } : { value: minutes(ms), unit: "min" });
      report({ name: `${label}: detection latency p50`, ...unitOf(percentile(o.latenciesMs, 50)), method: `alert poll time − error time, alerted failures; ${how}` });
      report({ name: `${label}: detection latency p95`, ...unitOf(percentile(o.latenciesMs, 95)), method: `alert poll time − error time, alerted failures; ${how}${feed ? "; target ≤ 20 s at 500 apps" : ""}` });
      if (!feed) {
        // A round of N sources at R requests an hour reads each every N/R hours: a failure waits U(0, N/R), p95 0.95 N/R.
        const boundMs = 0.95 * (o.sources / o.requestsPerHour) * HOUR;
        const ratio = percentile(o.latenciesMs, 95) / boundMs;
        report({
          name: `${label}: detection p95 against the N/2R bound's p95`,
          value: `${ratio.toFixed(2)}× (bound ${minutes(boundMs).toFixed(1)} min)`,
          method: `N = ${o.sources} sources, R = ${Math.round(o.requestsPerHour)} requests an hour sent; the bound's p95 = 0.95 N/R (a failure as likely at any source and time waits uniformly up to a round); target ≤ 1.2×: ${ratio <= 1.2 ? "met" : "not met"}`,
        });
      }
      report({
        name: `${label}: failures never alerted`,
        value: `${o.missed.length} of ${o.failures.length}`,
        method: `no pending failed/still_failing alert by the end of the run (suppressed counts as not alerted); ${how}`,
      });
      report({
        name: `${label}: first read in error state p50 / p95`,
        value: `${p(o.readLatenciesMs, 50).toFixed(2)} / ${p(o.readLatenciesMs, 95).toFixed(2)}`,
        unit: "min",
        method: `poll that first raised an alert, suppressed or not − error time, every failure; ${how}`,
      });
      report({
        name: `${label}: requests/hour sent (naive every-minute)`,
        value: `${Math.round(o.requestsPerHour)} (${o.naivePerHour})`,
        method: `sum of PollResult.requests / ${o.simulatedHours.toFixed(2)} simulated h of activity and tail; naive = ${o.naivePerHour / 60} sources × 60`,
      });
      report({
        name: `${label}: most requests in any 60 minutes`,
        value: o.maxRequestsInAnHour,
        method: `sliding 60 ticks over every dispatch tick; the ${o.warmupRequests}-request first-sight warm-up (budget aside, as \`lookout run --once\`) excluded`,
      });
      report({ name: `${label}: wall time`, value: o.wallMs / 1000, unit: "s", method: `${o.polls} polls (${o.failedPolls} failed), ${o.deployments} deployments, warm-up included` });
      for (const m of o.missed) console.log(`    not alerted: ${m.failure.executionId.slice(0, 8)} ${m.failure.status} at ${clockOf(m.failure.errorAt)}: ${m.why}`);
      if (o.requestsPerHour > REQUESTS_PER_HOUR || o.maxRequestsInAnHour > REQUESTS_PER_HOUR) {
        console.log(`    OVER BUDGET: ${Math.round(o.requestsPerHour)}/h on average, ${o.maxRequestsInAnHour} in the busiest hour`);
      }
    }
  }
  report({ name: "detection latency: wall time, all configurations", value: (performance.now() - started) / 1000, unit: "s", method: `${SIZES.length * 2} configurations one after another` });
}



async function runConfiguration(applications: number, feed: boolean): Promise<Outcome> {
  const started = performance.now();
  const sim = await startSimulator({ seed: SEED, size: { applications, webhooks: 1, clusters: 1 } });
  const { client, tableName } = await dynamo();
  try {
    const config = checkConfig(
      {
        platform: { url: sim.url, token: "env:LOOKOUT_BENCH_TOKEN", requests_per_hour: REQUESTS_PER_HOUR },
        watch: [{ organization: sim.ids.organizationId, webhooks: feed ? [sim.ids.webhookIds[0]!] : [], applications: sim.ids.applicationIds }],
        backfill_window: `${minutes(BACKFILL_WINDOW_MS)}m`,
      },
      "bench",
      {},
    );
    const watch = watchlist(config);
    const now = () => sim.clock.now();
    const dispatch = new MemoryDispatchStore();
    const raised = new Map<string, Raised[]>();
    const deps = pollDepsOf(config, {
      client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token" }),
      store: new DynamoIngestStore({ client, tableName, retentionMs: config.retentionMs, now }),
      now,
      log: silent,
      onAlert: (detail, suppression) => {
        const id = detail.deployment?.execution_id;
        if (detail.kind !== "deployment" || !id || (detail.transition !== "failed" && detail.transition !== "still_failing")) return;
        raised.set(id, [...(raised.get(id) ?? []), { at: Date.parse(detail.observed_at), suppression }]);
      },
    });
    const run = new TickRunner(sim, watch, dispatch, deps, new MemoryFeedLoopStore());

    // Warm-up: a first-sight poll of every source (what exists is stored, its alerts backfill-suppressed),
    // budget aside as `lookout run --once` does; then dispatch ticks until dispatch has planned every source
    // once, so the measured period starts in steady state.
    const warmup = await pMap(await everySource(dispatch, watch, deps.now().getTime()), (req) => pollSource(req, deps), { concurrency: POLL_CONCURRENCY });
    const warmupRequests = warmup.reduce((n, r) => n + r.requests, 0);
    while (run.polledSources.size < watch.sources.length) await run.tick();
    const settleMinutes = minutes(run.ticks * TICK_MS);

    const measuredFrom = sim.clock.nowMs();
    const activityEnd = measuredFrom + PERIOD_HOURS * HOUR;
    const activity = sim.scenario.randomActivity({
      from: new Date(measuredFrom), durationMs: activityEnd - measuredFrom, deploymentsPerHour: DEPLOYMENTS_PER_HOUR,
      failureRate: FAILURE_RATE, applicationIds: sim.ids.applicationIds,
    });
    const scheduled = new Set(activity.executionIds);
    const failures: Failure[] = [...sim.model.runs.values()]
      .filter((r) => r.executionId !== null && scheduled.has(r.executionId) && r.phases.at(-1)!.status.endsWith("_ERROR"))
      .map((r) => ({ executionId: r.executionId!, serviceId: r.serviceId, status: r.phases.at(-1)!.status, errorAt: r.phases.at(-1)!.atMs }));
    /** Read in its error state: alerted or suppressed, which reading it again does not change. */
    const read = (f: Failure) => raised.has(f.executionId);

    const requestsBefore = run.requests;
    while (sim.clock.nowMs() < activityEnd || (sim.clock.nowMs() < activityEnd + TAIL_MAX_MS && !failures.every(read))) await run.tick();
    const simulatedHours = (sim.clock.nowMs() - measuredFrom) / HOUR;

    const latenciesMs: number[] = [];
    const readLatenciesMs: number[] = [];
    const missed: Outcome["missed"] = [];
    for (const f of failures) {
      const alerts = raised.get(f.executionId) ?? [];
      if (alerts[0]) readLatenciesMs.push(alerts[0].at - f.errorAt);
      const first = alerts.find((a) => !a.suppression);
      if (first) latenciesMs.push(first.at - f.errorAt);
      else missed.push({ failure: f, why: explainMiss(f, alerts, run, watch) });
    }
    return {
      sources: watch.sources.length, failures, latenciesMs, readLatenciesMs, missed,
      requestsPerHour: (run.requests - requestsBefore) / simulatedHours,
      maxRequestsInAnHour: run.maxInWindow(HOUR / TICK_MS),
      naivePerHour: watch.sources.length * 60,
      warmupRequests,
      settleMinutes,
      simulatedHours,
      polls: run.polls + warmup.length,
      failedPolls: run.failedPolls + warmup.filter((r) => !r.ok).length,
      deployments: activity.deployments,
      wallMs: performance.now() - started,
    };
  } finally {
    // Each configuration has its own table; it goes afterwards, so DynamoDB Local (in memory) stays small.
    await client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
    client.destroy();
    await sim.close();
  }
}

/** Why a failure got no alert: never read after it happened, or read and suppressed (and why). */
function explainMiss(f: Failure, raised: Raised[] | undefined, run: TickRunner, watch: Watchlist): string {
  const key = watch.byApplication.get(f.serviceId)!;
  const times = run.pollTimes.get(key) ?? [];
  const before = times.filter((t) => t < f.errorAt).at(-1);
  const after = times.find((t) => t >= f.errorAt);
  const suppressed = raised?.find((a) => a.suppression);
  if (suppressed) {
    const prev = times.filter((t) => t < suppressed.at).at(-1);
    const gap = prev !== undefined ? `${minutes(suppressed.at - prev).toFixed(0)} min after the previous poll (${clockOf(prev)})` : "at first sight";
    return `read at ${clockOf(suppressed.at)}, ${minutes(suppressed.at - f.errorAt).toFixed(1)} min after the error, ${gap}: ` +
      `alert suppressed (${suppressed.suppression!.reason}: ${suppressed.suppression!.detail})`;
  }
  if (after === undefined) return `its application was not polled after the error (last poll ${before !== undefined ? clockOf(before) : "never"})`;
  return `polled at ${clockOf(after)} after the error, but no failed/still_failing transition was raised`;
}
