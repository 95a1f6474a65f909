/**
 * Polling decisions, fast: every source reader over the in-memory ingest store, reading through the
 * platform client over HTTP from the platform simulator (a fresh world per test, its clock as Lookout's).
 * Answers the simulator never gives (an item off the spec, an entry listed twice, a page that ignores
 * pageSize, a failing endpoint) come from its fault injection.
 * (The same paths over DynamoDB Local: test/integration/poll/poll.ingest.test.ts and its neighbours.)
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pollSource, type PollDeps } from "../../../lib/poll/poll.js";
import { DEPLOYMENT_PAGE_MAX, DEPLOYMENT_PAGE_MIN, DEPLOYMENT_READ_MAX } from "../../../lib/poll/readers/deployment-history.js";
import { MemoryIngestStore } from "../../support/memory-ingest-store.js";
import { RecordUnwritable } from "../../../lib/model/ingest-store.js";
import type { LookoutEventDetail } from "../../../lib/model/event.js";
import type { Log } from "../../../lib/model/log.js";
import type { PollRequest } from "../../../lib/model/poll.js";
import type { SourceRef } from "../../../lib/model/source.js";
import type { Suppression } from "../../../lib/model/alert-item.js";
import { createPlatformClient, type PlatformApi, type PlatformClient } from "../../../lib/platform/client.js";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { historyItem, type PhaseDurations } from "../../../local/simulator/runs.js";

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const T0 = Date.parse("2026-03-02T10:00:00Z");
/** Every phase at the start: the history shows the outcome at once. */
const INSTANT: PhaseDurations = { queuedMs: 0, buildingMs: 0, deployingMs: 0 };

let sim: Simulator;
let client: PlatformClient & PlatformApi;
let store: MemoryIngestStore;
let raised: Array<{ detail: LookoutEventDetail; suppression?: Suppression }>;
let logged: Array<{ level: string; message: string }>;
let deps: PollDeps;
let hook: SourceRef;
let cluster: SourceRef;
let app: SourceRef;

beforeEach(async () => {
  sim = await startSimulator({ startTime: new Date(T0).toISOString(), size: { applications: 2, clusters: 1, webhooks: 1, pastDeployments: 0 } });
  const { organizationId, webhookIds, clusterIds, applicationIds } = sim.ids;
  hook = { kind: "webhook", organizationId, id: webhookIds[0]! };
  cluster = { kind: "cluster", organizationId, id: clusterIds[0]! };
  app = { kind: "deployment", organizationId, id: applicationIds[0]! };
  const now = () => sim.clock.now();
  client = createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token", sleep: async () => {} });
  store = new MemoryIngestStore({ retentionMs: 90 * 86_400_000, now });
  raised = [];
  logged = [];
  const log: Log = {
    info: (message) => void logged.push({ level: "info", message }),
    warn: (message) => void logged.push({ level: "warn", message }),
    error: (message) => void logged.push({ level: "error", message }),
  };
  deps = {
    client, store, now, backfillWindowMs: 15 * MIN, log,
    clusterNames: new Map([[cluster.id, "prod-eu"]]),
    onAlert: (detail, suppression) => void raised.push({ detail, ...(suppression ? { suppression } : {}) }),
  };
});
afterEach(() => sim.close());

const iso = (t: number) => new Date(t).toISOString();
const poll = (source: SourceRef, over: Partial<PollRequest> = {}) => pollSource({ source, ...over }, deps);
/**
 * A delivery of the webhook answered `status`, created at `at` (not after now): the start of a deployment
 * of `service` (application 0 by default) whose end, and so its second delivery, is a day away.
 * Returns the delivery's id.
 */
function delivery(status: number, at: number, service = sim.ids.applicationIds[0]!): string {
  if (at > sim.clock.nowMs()) throw new Error("a delivery of the future is not listed yet");
  sim.scenario.setWebhookTarget(hook.id, { status });
  sim.scenario.deploy(service, { at: new Date(at), durations: { queuedMs: DAY } });
  return sim.model.webhooks.get(hook.id)!.deliveries.at(-1)!.id;
}
/** Until cleared, `name` answers what the simulator lists now plus `extra` items it would never list. */
async function listingAlso(name: "listWebhookEvents" | "listClusterLogs", extra: (results: unknown[]) => unknown[]) {
  const { organizationId, id } = name === "listWebhookEvents" ? hook : cluster;
  const { data } = name === "listWebhookEvents"
    ? await client.listWebhookEvents({ path: { organizationId, webhookId: id } })
    : await client.listClusterLogs({ path: { organizationId, clusterId: id } });
  sim.faults.set(name, { body: { ...data, results: [...data.results, ...extra(data.results)] } });
}
/** The store throws this error, as DynamoDB names it, for the record with this id. */
/** The store's refusal of a record for what it is, as the port gives it (lib/model/ingest-store.ts). */
const tooLarge = () => new RecordUnwritable("the store refused the write: Item size has exceeded the maximum allowed size");
function refuseRecord(id: string, error: Error) {
  const insert = store.insertRecord.bind(store);
  store.insertRecord = async (record, alert) => {
    if ((record.record as { id: string }).id === id) throw error;
    return insert(record, alert);
  };
}
const cursorOf = (source: SourceRef) => store.getCursor(`${source.kind}:${source.organizationId}/${source.id}`);

describe("webhook deliveries and cluster logs (the list core)", () => {
  it("at first sight stores every delivery, and alerts only the failed ones inside the backfill window", async () => {
    const ids = [delivery(502, T0 - 60 * MIN), delivery(500, T0 - MIN), delivery(200, T0)];
    const r = await poll(hook);
    // The 2xx closes the target's incident: its close is alerted too (docs/events.md, "Incidents").
    expect(r).toMatchObject({ ok: true, firstSight: true, newRecords: 3, alerts: 2, suppressed: 1, requests: 1 });
    expect(raised.map((a) => `${a.detail.transition} ${a.suppression?.reason ?? "alerted"}`).sort()).toEqual([
      "delivery_failed alerted", "delivery_failed backfill", "target_recovered alerted",
    ]);
    expect((await cursorOf(hook))?.seen?.toSorted()).toEqual(ids.sort());
  });

  it("writes nothing when nothing is new, and alerts a new failure once", async () => {
    delivery(200, T0);
    await poll(hook);
    const writes = store.writes.count;
    expect(await poll(hook)).toMatchObject({ ok: true, firstSight: false, newRecords: 0, alerts: 0 });
    expect(store.writes.count).toBe(writes);

    sim.clock.advance(2 * MIN);
    delivery(503, T0 + MIN);
    expect(await poll(hook)).toMatchObject({ newRecords: 1, alerts: 1, suppressed: 0 });
    expect(await poll(hook)).toMatchObject({ newRecords: 0, alerts: 0 });
    expect(raised).toHaveLength(1);
  });

  it("names the services of new deliveries as the change feed and learns their names", async () => {
    const [a1, a2] = sim.ids.applicationIds as [string, string];
    await poll(hook);
    delivery(200, T0, a1);
    delivery(200, T0, a2);
    delivery(200, T0, a1);
    const r = await poll(hook);
    expect(r.hotServices.sort()).toEqual([a1, a2].sort());
    // With when the newest delivery naming each was made, as the platform stamps it: a service read
    // since is not read again for the same event in another webhook's log (lib/dispatch/source-state.ts).
    expect(r.namedAt).toEqual({ [a1]: T0, [a2]: T0 });
    // A delivery names its service with the project and environment it runs in.
    const where = { project: { id: sim.ids.projectId, name: "shop" }, environment: { id: sim.ids.environmentId, name: "production", type: "PRODUCTION" } };
    expect(await store.getServiceContexts([a1, a2])).toEqual(new Map([[a1, { name: "api-gateway", ...where }], [a2, { name: "web-frontend", ...where }]]));
    expect((await poll(hook)).hotServices).toEqual([]); // nothing new, nothing named
  });

  it("quarantines an item that does not match the spec once, stores the valid ones, and keeps reading it", async () => {
    const d1 = delivery(200, T0);
    await listingAlso("listWebhookEvents", () => [{ id: 7 }]);
    expect(await poll(hook)).toMatchObject({ ok: true, newRecords: 1, rejected: 1, quarantined: 1 });
    const second = await poll(hook);
    expect(second).toMatchObject({ ok: true, rejected: 1 });
    expect(second.quarantined).toBeUndefined();
    expect((await cursorOf(hook))?.seen).toEqual([d1]);
    expect(store.scan().filter((i) => i.item_type === "quarantine")).toHaveLength(1);
  });

  it("a failed read changes nothing, and counts what it cost", async () => {
    delivery(500, T0);
    await poll(hook);
    const [cursor, writes] = [await cursorOf(hook), store.writes.count];
    delivery(500, T0);
    sim.faults.set("listWebhookEvents", { status: 502 });
    const r = await poll(hook);
    // The client's default policy: four attempts, the three retries without waiting here (sleep is a no-op).
    expect(r).toMatchObject({ ok: false, requests: 4, retries: 3, error: { kind: "server_error", status: 502 } });
    expect(await cursorOf(hook)).toEqual(cursor);
    expect(store.writes.count).toBe(writes);
    sim.faults.clear("listWebhookEvents");
    expect(await poll(hook)).toMatchObject({ ok: true, newRecords: 1, alerts: 1 });
  });

  it("a cursor that cannot be read fails the poll, and the list read beside it is still counted", async () => {
    delivery(500, T0);
    const getCursor = store.getCursor.bind(store);
    store.getCursor = async () => {
      throw Object.assign(new Error("Throughput exceeds the current capacity"), { name: "ProvisionedThroughputExceededException" });
    };
    const r = await poll(hook);
    store.getCursor = getCursor;
    expect(r).toMatchObject({ ok: false, requests: 1, newRecords: 0, error: { message: "Throughput exceeds the current capacity" } });
    expect(await cursorOf(hook)).toBeUndefined();
    // Both fail: the read's retries are counted too.
    sim.faults.set("listWebhookEvents", { status: 502 });
    store.getCursor = async () => {
      throw new Error("store down");
    };
    const both = await poll(hook);
    store.getCursor = getCursor;
    sim.faults.clear("listWebhookEvents");
    expect(both).toMatchObject({ ok: false, requests: 4, error: { message: "store down" } });
    expect(await poll(hook)).toMatchObject({ ok: true, newRecords: 1, alerts: 1 });
  });

  it("quarantines a record the store refuses for what it is; the others are stored and the cursor moves", async () => {
    const ids = [delivery(500, T0), delivery(500, T0), delivery(200, T0)];
    refuseRecord(ids[1]!, tooLarge());
    expect(await poll(hook)).toMatchObject({ ok: true, newRecords: 2, quarantined: 1 });
    expect((await cursorOf(hook))?.seen?.toSorted()).toEqual(ids.sort());
  });

  it("a passing store error fails the poll after the other records were tried, and the cursor does not move", async () => {
    const ids = [delivery(500, T0), delivery(500, T0), delivery(200, T0)];
    refuseRecord(ids[1]!, Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException" }));
    expect(await poll(hook)).toMatchObject({ ok: false, error: { message: "Rate exceeded" } });
    expect(await cursorOf(hook)).toBeUndefined();
    expect(store.scan().filter((i) => i.item_type === "record")).toHaveLength(2);
  });

  it("a refusal the store wraps (to name the write) is still quarantined for what it is", async () => {
    const ids = [delivery(500, T0), delivery(200, T0)];
    const insert = store.insertRecord.bind(store);
    store.insertRecord = async (record, alert) => {
      if ((record.record as { id: string }).id !== ids[0]) return insert(record, alert);
      throw new Error("record: write refused", { cause: tooLarge() });
    };
    expect(await poll(hook)).toMatchObject({ ok: true, newRecords: 1, quarantined: 1 });
  });

  it("a quarantine write that fails does not stop the other records: the poll fails after they were tried", async () => {
    const ids = [delivery(500, T0), delivery(500, T0), delivery(200, T0)];
    refuseRecord(ids[0]!, tooLarge());
    store.quarantine = async () => {
      throw Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException" });
    };
    expect(await poll(hook)).toMatchObject({ ok: false, error: { message: "Rate exceeded" } });
    expect(await cursorOf(hook)).toBeUndefined();
    expect(store.scan().filter((i) => i.item_type === "record")).toHaveLength(2);
  });

  it("a source kind no reader knows fails the poll instead of reading nothing", async () => {
    const bogus = { ...hook, kind: "bogus" } as unknown as SourceRef;
    expect(await poll(bogus)).toMatchObject({ ok: false, error: { message: 'no reader for source kind "bogus"' } });
  });

  it("knows cluster log entries by content and alerts an error entry once, with the configured cluster name", async () => {
    await poll(cluster); // the seeded run, history
    const [info, error] = sim.scenario.clusterRun(cluster.id, { entries: 2, errors: 1 });
    expect([info!.type, error!.type]).toEqual(["info", "error"]);
    // The error entry listed twice, as the simulator never lists it (its list holds each entry once).
    await listingAlso("listClusterLogs", () => [{ ...error }]);
    expect(await poll(cluster)).toMatchObject({ newRecords: 2, alerts: 1 });
    sim.faults.clear("listClusterLogs");
    expect(await poll(cluster)).toMatchObject({ newRecords: 0, alerts: 0 });
    expect(raised[0]!.detail.cluster).toEqual({ id: cluster.id, name: "prod-eu" });
  });

  it("after an outage longer than the backfill window old failures stay quiet; after a shorter one they are alerted", async () => {
    await poll(hook);
    sim.clock.set(new Date(T0 + 60 * MIN));
    delivery(500, T0 + 10 * MIN);
    expect(await poll(hook, { outage: { from: iso(T0), to: iso(T0 + 50 * MIN) } })).toMatchObject({ alerts: 0, suppressed: 1 });
    delivery(500, T0 + 20 * MIN);
    expect(await poll(hook, { outage: { from: iso(T0 + 50 * MIN), to: iso(T0 + 55 * MIN) } })).toMatchObject({ alerts: 1, suppressed: 0 });
  });
});

describe("incidents of webhook targets and clusters", () => {
  /** Alerts raised so far (in the order they happened: a poll stores records in parallel), as `<transition> <incident id> <failures>[ repeat]`. */
  const inOrder = () => raised.map((a) => a.detail).sort((a, b) => a.occurred_at.localeCompare(b.occurred_at));
  const thread = () => inOrder().map((d) => `${d.transition} ${d.incident_id} ${d.incident?.failures}${d.incident?.repeat ? " repeat" : ""}`);
  /** A delivery a minute from the last, answered `status`. */
  const next = (status: number) => {
    sim.clock.advance(MIN);
    return delivery(status, sim.clock.nowMs());
  };

  it("a webhook target failing five times then answering 2xx: one opening, four joins (repeats), one target_recovered", async () => {
    await poll(hook);
    next(502);
    next(502);
    await poll(hook);
    next(502);
    next(502);
    next(502);
    await poll(hook);
    next(200);
    expect(await poll(hook)).toMatchObject({ newRecords: 1, alerts: 1 });
    const opener = inOrder()[0]!.id;
    expect(thread()).toEqual([
      `delivery_failed ${opener} 1`,
      ...[2, 3, 4, 5].map((n) => `delivery_failed ${opener} ${n} repeat`),
      `target_recovered ${opener} 5`,
    ]);
    const host = inOrder()[0]!.http!.target_host!;
    const closing = inOrder().at(-1)!;
    expect(closing).toMatchObject({
      kind: "webhook_delivery", severity: "warning", webhook: { id: hook.id }, status: "200",
      service: inOrder()[0]!.service,
      incident: { subject: `webhook:${hook.id}:${host}`, opened_at: inOrder()[0]!.occurred_at, failures: 5, duration_sec: 5 * 60, resolved_by: `HTTP 200 to ${host}` },
    });
    // Closed: nothing new, nothing written; the next failure opens another incident.
    const writes = store.writes.count;
    await poll(hook);
    expect(store.writes.count).toBe(writes);
    next(503);
    await poll(hook);
    expect(thread().at(-1)).toBe(`delivery_failed ${raised.at(-1)!.detail.id} 1`);
  });

  it("a crash after the records were stored, before the incident was saved: the re-read raises nothing twice", async () => {
    await poll(hook);
    next(500);
    next(500);
    const save = store.saveIncident.bind(store);
    store.saveIncident = async () => {
      throw new Error("the poller died here");
    };
    expect(await poll(hook)).toMatchObject({ ok: false, alerts: 2 });
    store.saveIncident = save;
    expect(await poll(hook)).toMatchObject({ ok: true, newRecords: 0, alerts: 0 });
    next(200);
    await poll(hook);
    const opener = inOrder()[0]!.id;
    expect(thread()).toEqual([`delivery_failed ${opener} 1`, `delivery_failed ${opener} 2 repeat`, `target_recovered ${opener} 2`]);
  });

  it("racing pollers of one target open its incident once", async () => {
    await poll(hook);
    next(500);
    next(500);
    await Promise.all([poll(hook), poll(hook)]);
    next(200);
    await Promise.all([poll(hook), poll(hook)]);
    const opener = raised.find((a) => a.detail.incident?.failures === 1)!.detail.id;
    expect(thread().sort()).toEqual([`delivery_failed ${opener} 1`, `delivery_failed ${opener} 2 repeat`, `target_recovered ${opener} 2`].sort());
  });

  it("a cluster's error run then a Created step: opening, joins, cluster_recovered", async () => {
    await poll(cluster); // the seeded run, history
    sim.clock.advance(MIN);
    sim.scenario.clusterRun(cluster.id, { entries: 5, errors: 3 });
    expect(await poll(cluster)).toMatchObject({ alerts: 3 });
    sim.clock.advance(10 * MIN);
    sim.scenario.clusterRun(cluster.id, { kind: "Create", entries: 4, errors: 0 });
    expect(await poll(cluster)).toMatchObject({ alerts: 1 });
    const opener = inOrder()[0]!.id;
    expect(thread().map((t) => t.replace(" repeat", ""))).toEqual([
      `cluster_error ${opener} 1`, `cluster_error ${opener} 2`, `cluster_error ${opener} 3`, `cluster_recovered ${opener} 3`,
    ]);
    expect(raised.at(-1)!.detail).toMatchObject({
      kind: "cluster_log", severity: "error", cluster: { id: cluster.id, name: "prod-eu" },
      record: { type: "cluster_log_entry", step: "Created" },
      incident: { subject: `cluster:${cluster.id}`, opened_at: inOrder()[0]!.occurred_at, failures: 3, resolved_by: "step Created" },
    });
  });

  it("a cluster with no error for its quiet period closes at a poll with nothing new, once", async () => {
    deps.clusterQuietMs = 20 * MIN;
    await poll(cluster);
    sim.clock.advance(MIN);
    sim.scenario.clusterRun(cluster.id, { entries: 3, errors: 1 });
    await poll(cluster);
    sim.clock.advance(19 * MIN);
    expect(await poll(cluster)).toMatchObject({ newRecords: 0, alerts: 0 });
    sim.clock.advance(2 * MIN);
    expect(await poll(cluster)).toMatchObject({ newRecords: 0, alerts: 1 });
    expect(await poll(cluster)).toMatchObject({ alerts: 0 });
    const opener = raised[0]!.detail;
    expect(raised.at(-1)!.detail).toMatchObject({
      transition: "cluster_recovered", incident_id: opener.id, occurred_at: iso(Date.parse(opener.occurred_at) + 20 * MIN),
      incident: { failures: 1, duration_sec: 20 * 60, resolved_by: "quiet for 20m" },
    });
    expect(raised.at(-1)!.detail.record).toBeUndefined();
  });
});

describe("deployment history", () => {
  /** A deployment of the watched application starting at `at` (default now); returns its execution id. */
  const deploy = (outcome: string, at = sim.clock.nowMs(), durations = INSTANT) =>
    sim.scenario.deploy(app.id, { outcome, at: new Date(at), durations });
  /** The history entry of an execution as the simulator renders it at `atMs`. */
  const entryAt = (exec: string, atMs: number) => {
    const run = sim.model.runsByService.get(app.id)!.find((r) => r.executionId === exec)!;
    return historyItem(run, sim.model.services.get(app.id)!, atMs)!;
  };
  /** Once, the history answers these entries, whatever the page size asked. */
  const answerHistory = (results: unknown[]) =>
    sim.faults.set("listDeploymentHistory", { body: { page: 1, page_size: results.length, results }, times: 1 });
  const pageSizes = () =>
    sim.requestLog.filter((e) => e.endpoint === "listDeploymentHistory").map((e) => Number(new URLSearchParams(e.query).get("pageSize")));
  const transitions = () => raised.map((a) => a.detail.transition);

  it("raises failed, still_failing, cancelled and recovered once each, threaded to the first failure", async () => {
    await poll(app);
    deploy("BUILD_ERROR", T0, { queuedMs: 0, buildingMs: 1.5 * MIN });
    sim.clock.advance(MIN);
    expect(await poll(app)).toMatchObject({ inProgress: 1, alerts: 0, newRecords: 1 }); // building
    sim.clock.advance(MIN);
    expect(await poll(app)).toMatchObject({ inProgress: 0, alerts: 1 });
    for (const status of ["DEPLOYMENT_ERROR", "CANCELED", "DEPLOYED"]) {
      sim.clock.advance(MIN);
      deploy(status);
      await poll(app);
      await poll(app);
    }
    expect(transitions()).toEqual(["failed", "still_failing", "cancelled", "recovered"]);
    const incident = raised[0]!.detail.id;
    expect(raised.map((a) => a.detail.incident_id)).toEqual([incident, incident, incident, incident]);
    expect(raised[1]!.detail.deployment?.failure_count).toBe(2);
  });

  it("asks for a small page when quiet, and grows it at once when the page shares nothing with what is known", async () => {
    deploy("DEPLOYED", T0 - 60 * MIN);
    await poll(app);
    await poll(app);
    expect(pageSizes()).toEqual([20, DEPLOYMENT_PAGE_MIN]);
    for (let i = 0; i < DEPLOYMENT_PAGE_MIN + 1; i++) deploy(i === 0 ? "BUILD_ERROR" : "DEPLOYED", T0 + i);
    sim.clock.advance(MIN);
    const r = await poll(app);
    expect(pageSizes().slice(2)).toEqual([DEPLOYMENT_PAGE_MIN, DEPLOYMENT_PAGE_MAX]);
    expect(r).toMatchObject({ requests: 2, gapSuspected: false, newRecords: DEPLOYMENT_PAGE_MIN + 1 });
    expect(transitions()).toEqual(["failed", "recovered"]); // nothing of the burst was missed
    expect((await cursorOf(app))?.page_size).toBe(DEPLOYMENT_PAGE_MIN);
  });

  it("suspects a gap when even the large page shares nothing with what is known, and says so", async () => {
    deploy("DEPLOYED", T0 - 60 * MIN);
    await poll(app);
    for (let i = 0; i < DEPLOYMENT_PAGE_MAX + 1; i++) deploy("DEPLOYED", T0 + i);
    sim.clock.advance(MIN);
    expect(await poll(app)).toMatchObject({ gapSuspected: true });
    expect(await cursorOf(app)).toMatchObject({ page_size: DEPLOYMENT_PAGE_MAX, gap_suspected_at: sim.clock.nowIso() });
    expect(logged.some((l) => l.level === "warn" && l.message.includes("may have a gap"))).toBe(true);
  });

  it("reads the newest entries of an answer far larger than asked, and suspects a gap", async () => {
    const execs = Array.from({ length: DEPLOYMENT_READ_MAX + 100 }, (_, i) => deploy("DEPLOYED", T0 - 1000 * MIN + i * MIN));
    answerHistory(execs.map((e) => entryAt(e, T0)).reverse()); // the whole history, newest first
    const r = await poll(app);
    expect(pageSizes()).toEqual([20]);
    expect(r).toMatchObject({ gapSuspected: true, newRecords: DEPLOYMENT_READ_MAX });
    const kept = (await cursorOf(app))!.deployments!.map((d) => d.execution_id);
    expect(kept).toHaveLength(DEPLOYMENT_READ_MAX);
    expect(kept).toContain(execs.at(-1));
    expect(kept).not.toContain(execs[0]);
  });

  it("keeps one copy of an execution listed twice, whatever the page's order", async () => {
    await poll(app);
    const dup = deploy("DEPLOYMENT_ERROR", T0, { queuedMs: 0, buildingMs: 0, deployingMs: 2 * MIN });
    const [running, failed] = [entryAt(dup, T0), entryAt(dup, T0 + 2 * MIN)];
    expect([running.status, failed.status]).toEqual(["DEPLOYING", "DEPLOYMENT_ERROR"]);
    sim.clock.advance(3 * MIN);
    answerHistory([running, failed]);
    expect(await poll(app)).toMatchObject({ alerts: 1, inProgress: 0 });
    answerHistory([failed, running]);
    expect(await poll(app)).toMatchObject({ alerts: 0, newRecords: 0 });
  });

  it("keeps the page large while an execution is in progress, then goes back to the small page", async () => {
    await poll(app);
    for (let i = 0; i < 3; i++) deploy("DEPLOYED", T0 - i, { queuedMs: 0, buildingMs: 20_000, deployingMs: 20_000 });
    expect(await poll(app)).toMatchObject({ inProgress: 3 }); // building
    expect((await cursorOf(app))?.page_size).toBe(DEPLOYMENT_PAGE_MIN);
    sim.clock.advance(MIN);
    expect(await poll(app)).toMatchObject({ inProgress: 0 }); // deployed
    expect((await cursorOf(app))?.page_size).toBe(DEPLOYMENT_PAGE_MIN);
  });

  it("quarantines an observation the store refuses, and records its status so it is not read again", async () => {
    await poll(app);
    const big = deploy("BUILD_ERROR");
    const ok = deploy("BUILD_ERROR");
    const observe = store.observeExecution.bind(store);
    store.observeExecution = (async (ref, decide) => {
      if (ref.executionId === big) throw tooLarge();
      return observe(ref, decide);
    }) as typeof store.observeExecution;
    sim.clock.advance(MIN);
    expect(await poll(app)).toMatchObject({ ok: true, quarantined: 1, alerts: 1 });
    expect((await cursorOf(app))?.deployments?.map((d) => d.execution_id).sort()).toEqual([big, ok].sort());
    expect(await poll(app)).toMatchObject({ ok: true, alerts: 0 });
    expect(store.scan().filter((i) => i.item_type === "quarantine")).toHaveLength(1);
  });

  it("at first sight, a failure older than the backfill window is stored but raises no alert", async () => {
    const ancient = deploy("BUILD_ERROR", T0 - 120 * MIN);
    deploy("BUILD_ERROR", T0 - 2 * MIN);
    expect(await poll(app)).toMatchObject({ firstSight: true, alerts: 1, suppressed: 1 });
    expect(raised.find((a) => a.suppression)?.detail.deployment?.execution_id).toBe(ancient);
  });
});
