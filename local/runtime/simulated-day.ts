/**
 * A simulated stretch of platform activity through the real poller, on the simulator's clock: first
 * sight of everything, then `hours` of random deployments and cluster runs, tick by tick within the
 * request budget. The load test runs a small one; `npm run bench` (section `load`) a day at 500
 * applications. Both check the same invariants (`dayProblems`).
 */
import pMap from "p-map";
import { isClosing, type LookoutEventDetail } from "../../lib/model/event.js";
import type { ConsumedCapacity, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { startSimulator } from "../simulator/index.js";
import { checkConfig } from "../../lib/config/load.js";
import { watchlist } from "../../lib/dispatch/watchlist.js";
import { everySource } from "../../lib/dispatch/tick.js";
import { healthFacts } from "../../lib/dispatch/health-facts.js";
import { pollSource } from "../../lib/poll/poll.js";
import { pollDepsOf } from "../../lib/app/ingest.js";
import { createPlatformClient } from "../../lib/platform/client.js";
import { DynamoIngestStore } from "../../lib/store/ingest-store.js";
import { POLL_CONCURRENCY, TICK_MS, TickRunner } from "./simulated-run.js";
import { MemoryDispatchStore, MemoryFeedLoopStore } from "../../lib/store/memory/dispatch-store.js";
import { DynamoDispatchStore, DynamoFeedLoopStore } from "../../lib/store/dispatch-store.js";

const HOUR = 3_600_000;
const silent = { info() {}, warn() {}, error() {} };

export interface DaySize {
  applications: number;
  clusters: number;
  webhooks: number;
}

export interface DayOptions {
  size: DaySize;
  hours: number;
  deploymentsPerHour: number;
  clusterRunsPerHour: number;
  seed?: number;
  store: { client: DynamoDBClient; tableName: string; retentionMs: number };
  /** Keep dispatch's state in the table, as deployed (the cost bench), rather than in memory (faster). */
  dispatchInTable?: boolean;
  /** Called after first sight, as the span begins (the cost bench measures what is stored from there). */
  onSpanStart?: () => Promise<void>;
  /** Told at each simulated hour of the span: a day takes half an hour or more, and a bench should say where it is. */
  /** Each simulated hour of the first sight (every source read once by the ticks, before the span): how far it got. */
  onFirstSight?: (p: { minutes: number; read: number; sources: number }) => void;
  onHour?: (p: { hour: number; hours: number; polls: number; requests: number; failedPolls: number; alerted: number; failures: number }) => void;
}

export interface DayResult {
  deployments: number;
  clusterRuns: number;
  /** Executions scheduled to end in an error state. */
  failures: number;
  missed: string[];
  /** Failures kept quiet after first sight (must be none: only first sight is backfill). */
  suppressedAfterFirstSight: number;
  clusterErrorsAlerted: number;
  polls: number;
  requests: number;
  maxRequestsInAnHour: number;
  requestsPerHourAllowed: number;
  failedPolls: number;
  /** The failed polls by source kind and error kind. */
  failedPollKinds: Record<string, number>;
  /** Polls deferred by a large answer in their batch and planned again (not failures: docs/limits.md). */
  deferredPolls: number;
  /** The longest a cluster went unpolled, in minutes: its log list holds its latest run only (docs/platform.md). */
  longestClusterGapMin: number;
  /** Sources dispatch's state would have raised `polling_stalled` for at a tick of the span (healthFacts, default allowances). */
  stalledSources: string[];
  newRecords: number;
  writes: number;
  /** DynamoDB calls by operation (GetItem, Query, TransactWriteItems…) over the span, for the cost bench. */
  dynamoCalls: Record<string, number>;
  /** Request units DynamoDB reported consumed over the span (indexes included), for the cost bench. */
  dynamoUnits: CapacityUnits;
  /** Dispatch ticks over the span, and dispatch state writes (its one item, of `sources` sources). */
  ticks: number;
  dispatchWrites: number;
  /** Ticks of the change feed's loop that claimed it (every 10 s while the feed is watched). */
  loopTicks: number;
  sources: number;
  /** What a Slack channel (Web API form) shows, per alert raised after first sight (`channelMessages`). */
  messages: ChannelMessages;
}

/** An alert raised, as the channel count needs it. */
export type RaisedAlert = Pick<LookoutEventDetail, "id" | "kind" | "transition" | "incident_id" | "incident">;

export interface ChannelMessages {
  alerts: number;
  incidents: number;
  /** Top-level channel messages before incidents of every kind: only deployment follow-ups went to a thread. */
  before: number;
  /** Now: an incident's first message, and its resolution broadcast to the channel; the rest in the thread. */
  after: number;
  /** Repeats of the same error, counted in the thread rather than posted again. */
  repeats: number;
}

/**
 * Channel messages for a list of alerts, before and after incidents of every kind (Web API form, the
 * resolution broadcast). A follow-up is an alert whose incident was opened by another alert.
 */
export function channelMessages(alerts: readonly RaisedAlert[]): ChannelMessages {
  const followUp = (a: RaisedAlert) => Boolean(a.incident_id && a.incident_id !== a.id);
  // An amendment edits a message in place; the webhook and cluster closes did not exist before.
  const posted = alerts.filter((a) => a.transition !== "changes_listed");
  return {
    alerts: alerts.length,
    incidents: alerts.filter((a) => a.kind !== "health" && a.incident_id === a.id).length,
    before: posted.filter((a) => a.transition !== "target_recovered" && a.transition !== "cluster_recovered" && !(a.kind === "deployment" && followUp(a))).length,
    after: posted.filter((a) => !followUp(a) || isClosing(a.transition)).length,
    repeats: alerts.filter((a) => a.incident?.repeat).length,
  };
}

export async function simulateDay(opts: DayOptions): Promise<DayResult> {
  const sim = await startSimulator({ seed: opts.seed ?? 3, size: opts.size });
  try {
    const config = checkConfig(
      {
        platform: { url: sim.url, token: "env:T", requests_per_hour: 1000 },
        watch: [{ organization: sim.ids.organizationId, webhooks: sim.ids.webhookIds, clusters: sim.ids.clusterIds, applications: sim.ids.applicationIds }],
      },
      "simulated day", {},
    );
    const watch = watchlist(config);
    const now = () => sim.clock.now();
    const store = new DynamoIngestStore({ ...opts.store, now });
    const alerted = new Set<string>();
    const raised: RaisedAlert[] = [];
    let clusterErrors = 0;
    let suppressedFailures = 0;
    const deps = pollDepsOf(config, {
      client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token" }),
      store, now, log: silent,
      onAlert: (d, suppression) => {
        if (!suppression) raised.push({ id: d.id, kind: d.kind, transition: d.transition, ...(d.incident_id ? { incident_id: d.incident_id } : {}), ...(d.incident ? { incident: d.incident } : {}) });
        if (d.kind === "cluster_log" && !suppression) clusterErrors++;
        if (d.kind !== "deployment" || !d.deployment || (d.transition !== "failed" && d.transition !== "still_failing")) return;
        if (suppression) suppressedFailures++;
        else alerted.add(d.deployment.execution_id);
      },
    });
    const dispatch = opts.dispatchInTable ? new DynamoDispatchStore(opts.store) : new MemoryDispatchStore();
    // The change feed's loop, as deployed: its lease and reads beside dispatch's state.
    const loops = opts.dispatchInTable ? new DynamoFeedLoopStore(opts.store) : new MemoryFeedLoopStore();
    const { calls: dynamoCalls, units: dynamoUnits } = countDynamoCalls(opts.store.client, () => run.inFeedTick);
    const run = new TickRunner(sim, watch, dispatch, deps, loops);

    // First sight of everything, then steady state.
    await pMap(await everySource(dispatch, watch, deps.now().getTime()), (req) => pollSource(req, deps), { concurrency: POLL_CONCURRENCY });
    for (let minutes = 1; run.polledSources.size < watch.sources.length; minutes++) {
      await run.tick();
      if (minutes % 60 === 0) opts.onFirstSight?.({ minutes, read: run.polledSources.size, sources: watch.sources.length });
    }
    const firstSightSuppressed = suppressedFailures;
    const raisedAtFirstSight = raised.length;

    const from = sim.clock.nowMs();
    const span = opts.hours * HOUR;
    const activity = sim.scenario.randomActivity({
      from: new Date(from), durationMs: span, deploymentsPerHour: opts.deploymentsPerHour, failureRate: 0.1, cancelRate: 0.02,
      clusterRunsPerHour: opts.clusterRunsPerHour, clusterErrorRate: 0.3,
    });
    const scheduled = new Set(activity.executionIds);
    const outages = webhookOutages(sim.ids.webhookIds, from, span);
    const failures = [...sim.model.runs.values()]
      .filter((r) => r.executionId && scheduled.has(r.executionId) && r.phases.at(-1)!.status.endsWith("_ERROR"))
      .map((r) => r.executionId!);
    const writesBefore = store.writes.count;
    const requestsBefore = run.requests;
    const newBefore = run.newRecords;
    const pollsBefore = run.polls;
    const ticksBefore = run.ticks;
    const loopTicksBefore = run.loopTicks;
    const dispatchWritesBefore = dispatch.writes.count;
    await opts.onSpanStart?.();
    for (const k of Object.keys(dynamoCalls)) delete dynamoCalls[k];
    Object.assign(dynamoUnits, { read: 0, write: 0, writesByItem: {}, loop: { read: 0, write: 0 } });
    // The span, then up to an hour more for failures still being read.
    let hoursTold = 0;
    const stalled = new Set<string>();
    while (sim.clock.nowMs() < from + span || (sim.clock.nowMs() < from + span + HOUR && !failures.every((f) => alerted.has(f)))) {
      for (const o of outages) sim.scenario.setWebhookTarget(o.webhookId, { status: o.from <= sim.clock.nowMs() && sim.clock.nowMs() < o.to ? 503 : 200 });
      await run.tick();
      if (run.plannedState) for (const f of healthFacts(run.plannedState, watch, sim.clock.nowMs() - TICK_MS).stalled) stalled.add(f.source);
      const hour = Math.floor((sim.clock.nowMs() - from) / HOUR);
      // Told at the first tick of each hour: ticks need not fall on the span's own hour boundaries.
      if (opts.onHour && hour > hoursTold) {
        hoursTold = hour;
        opts.onHour({ hour, hours: opts.hours, polls: run.polls - pollsBefore, requests: run.requests - requestsBefore, failedPolls: run.failedPolls, alerted: failures.filter((f) => alerted.has(f)).length, failures: failures.length });
      }
    }
    return {
      deployments: activity.deployments,
      clusterRuns: activity.clusterRuns,
      failures: failures.length,
      missed: failures.filter((f) => !alerted.has(f)),
      suppressedAfterFirstSight: suppressedFailures - firstSightSuppressed,
      clusterErrorsAlerted: clusterErrors,
      polls: run.polls - pollsBefore,
      requests: run.requests - requestsBefore,
      maxRequestsInAnHour: run.maxInWindow(60),
      requestsPerHourAllowed: config.platform.requestsPerHour,
      failedPolls: run.failedPolls,
      failedPollKinds: Object.fromEntries(run.failedPollKinds),
      deferredPolls: run.deferredPolls,
      stalledSources: [...stalled],
      longestClusterGapMin: longestGap([...run.pollTimes].filter(([k]) => k.startsWith("cluster:")).map(([, t]) => t), from, from + span) / 60_000,
      newRecords: run.newRecords - newBefore,
      writes: store.writes.count - writesBefore,
      dynamoCalls: { ...dynamoCalls },
      dynamoUnits: { ...dynamoUnits, writesByItem: { ...dynamoUnits.writesByItem } },
      ticks: run.ticks - ticksBefore,
      loopTicks: run.loopTicks - loopTicksBefore,
      dispatchWrites: dispatch.writes.count - dispatchWritesBefore,
      sources: watch.sources.length,
      messages: channelMessages(raised.slice(raisedAtFirstSight)),
    };
  } finally {
    await sim.close();
  }
}

/** Read and write request units, as DynamoDB bills them on demand. */
export interface CapacityUnits {
  read: number;
  write: number;
  /** Write units by item kind, from the key's prefix (`DISPATCH`, `REC`, `SRC`…). */
  writesByItem: Record<string, number>;
  /**
   * The change feed loop's own use of dispatch's items (its lease, dispatch's state) during its ticks: what
   * the loop adds whichever way it is driven. Its feed reads' records are the polls' own, with the rest.
   */
  loop?: { read: number; write: number };
}

const WRITES = new Set(["PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"]);

/**
 * Counts the client's calls by operation, and the capacity DynamoDB reports consumed (table and indexes),
 * from now on: a middleware asks every call for its consumed capacity, so the stores are unchanged. A
 * refused conditional write reports none, yet is billed: it counts as one write unit.
 */
function countDynamoCalls(client: DynamoDBClient, inFeedTick: () => boolean): { calls: Record<string, number>; units: CapacityUnits } {
  const calls: Record<string, number> = {};
  const units: CapacityUnits = { read: 0, write: 0, writesByItem: {}, loop: { read: 0, write: 0 } };
  const loopUse = (input: unknown, side: "read" | "write", n: number) => {
    if (units.loop && inFeedTick() && itemKind(input) === "DISPATCH") units.loop[side] += n;
  };
  const wrote = (input: unknown, n: number) => {
    const item = itemKind(input);
    units.write += n;
    units.writesByItem[item] = (units.writesByItem[item] ?? 0) + n;
    loopUse(input, "write", n);
  };
  client.middlewareStack.add((next, context) => async (args) => {
    const op = String(context.commandName ?? "unknown").replace(/Command$/, "");
    calls[op] = (calls[op] ?? 0) + 1;
    const input = args.input as { ReturnConsumedCapacity?: string };
    const measurable = op !== "DescribeTable" && op !== "CreateTable" && op !== "UpdateTimeToLive";
    if (measurable) input.ReturnConsumedCapacity ??= "TOTAL";
    const side = WRITES.has(op) ? "write" : "read";
    try {
      const result = await next(args);
      const consumed = (result.output as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] }).ConsumedCapacity;
      for (const c of [consumed ?? []].flat()) {
        if (side === "write") wrote(args.input, c.CapacityUnits ?? 0);
        else {
          units.read += c.CapacityUnits ?? 0;
          loopUse(args.input, "read", c.CapacityUnits ?? 0);
        }
      }
      return result;
    } catch (err) {
      if (side === "write" && /ConditionalCheckFailed|TransactionCanceled/.test((err as Error).name)) wrote(args.input, 1);
      throw err;
    }
  }, { step: "initialize", name: `countDynamoCalls${Math.random()}` });
  return { calls, units };
}

/** The kind of item a write is for, from its (first) key's prefix: `REC#…` is `REC`. */
function itemKind(input: unknown): string {
  type Keyed = { Item?: { pk?: unknown }; Key?: { pk?: unknown } };
  const i = input as Keyed & { RequestItems?: Record<string, Array<{ PutRequest?: Keyed; DeleteRequest?: Keyed }>>; TransactItems?: Array<Record<string, Keyed>> };
  // A batch write's first request; a batch get's table (its keys in a list of their own) names none.
  const batch = Object.values(i.RequestItems ?? {})[0];
  const first: Keyed | undefined =
    i.Item || i.Key ? i : (Array.isArray(batch) ? batch.map((r) => r.PutRequest ?? r.DeleteRequest)[0] : undefined) ?? Object.values(i.TransactItems?.[0] ?? {})[0];
  const pk = first?.Item?.pk ?? first?.Key?.pk;
  const text = typeof pk === "string" ? pk : ((pk as { S?: string } | undefined)?.S ?? "");
  return text.split("#")[0] || "other";
}

/**
 * Webhook targets that answer 503 for an hour: a fifth of the webhooks once a simulated day, so a
 * shorter span has proportionally fewer (at least one when the span holds a whole hour), spread over it.
 */
function webhookOutages(webhookIds: readonly string[], from: number, span: number) {
  const perDay = webhookIds.filter((_, i) => i % 5 === 0);
  const count = span < 2 * HOUR ? 0 : Math.max(1, Math.round((perDay.length * span) / (24 * HOUR)));
  return perDay.slice(0, count).map((webhookId, i) => {
    const start = from + Math.round(((i + 0.5) / count) * (span - HOUR));
    return { webhookId, from: start, to: start + HOUR };
  });
}

/** The invariants of a simulated day, as sentences; empty when every one holds. */
export function dayProblems(r: DayResult): string[] {
  const problems: string[] = [];
  if (r.failures === 0) problems.push("the activity scheduled no failure: nothing was tested");
  if (r.missed.length) problems.push(`${r.missed.length} of ${r.failures} failures never alerted: ${r.missed.slice(0, 5).join(", ")}`);
  if (r.suppressedAfterFirstSight) problems.push(`${r.suppressedAfterFirstSight} failures after first sight kept quiet as backfill`);
  if (r.clusterRuns && !r.clusterErrorsAlerted) problems.push("no cluster error alerted");
  if (r.maxRequestsInAnHour > r.requestsPerHourAllowed) problems.push(`${r.maxRequestsInAnHour} requests in one hour, over the budget of ${r.requestsPerHourAllowed}`);
  if (r.failedPolls) problems.push(`${r.failedPolls} polls failed`);
  if (r.stalledSources.length) problems.push(`${r.stalledSources.length} sources counted as stalled (polling_stalled), e.g. ${r.stalledSources.slice(0, 3).join(", ")}`);
  // A record, its alert, a cursor per poll that found news: never a write per quiet poll.
  if (r.writes > 3 * r.newRecords) problems.push(`${r.writes} writes for ${r.newRecords} new records (more than 3 a record)`);
  if (r.polls <= r.writes / 10) problems.push(`${r.polls} polls for ${r.writes} writes: quiet polls are writing`);
  return problems;
}

/** The longest time within [from, to] between two polls of any one source, its start and end counted as polls. */
function longestGap(timesBySource: readonly number[][], from: number, to: number): number {
  let longest = 0;
  for (const times of timesBySource) {
    const within = [from, ...times.filter((t) => t > from && t < to).sort((a, b) => a - b), to];
    for (let i = 1; i < within.length; i++) longest = Math.max(longest, within[i]! - within[i - 1]!);
  }
  return longest;
}

export const describeDay = (r: DayResult) =>
  `${r.deployments} deployments (${r.failures} failed), ${r.clusterRuns} cluster runs; ${r.polls} polls, ${r.requests} requests ` +
  `(max ${r.maxRequestsInAnHour} in an hour); ${r.newRecords} new records, ${r.writes} writes; ` +
  `${r.clusterErrorsAlerted} cluster errors alerted; ${r.missed.length} failures missed; ` +
  (r.failedPolls ? `failed polls: ${Object.entries(r.failedPollKinds).map(([k, n]) => `${n} ${k}`).join(", ")}; ` : "") +
  (r.deferredPolls ? `${r.deferredPolls} polls deferred and planned again; ` : "") +
  `a cluster unpolled at most ${Math.round(r.longestClusterGapMin)} min; ` +
  `${r.messages.alerts} alerts in ${r.messages.incidents} incidents: ${r.messages.before} channel messages before, ${r.messages.after} now`;
