/**
 * Polling decisions, fast: every source reader over the in-memory ingest store and a fake platform.
 * (The same paths over HTTP and DynamoDB Local: test/integration/ingest.test.ts and its neighbours.)
 */
import { beforeEach, describe, expect, it } from "vitest";
import { pollSource, type PollDeps } from "../../lib/ingest/poll.js";
import { DEPLOYMENT_PAGE_MAX, DEPLOYMENT_PAGE_MIN, DEPLOYMENT_READ_MAX } from "../../lib/ingest/readers/deployment-history.js";
import { MemoryIngestStore } from "../../lib/store/memory/ingest-store.js";
import type { LookoutEventDetail } from "../../lib/model/event.js";
import type { Log } from "../../lib/model/log.js";
import type { PollRequest } from "../../lib/model/poll.js";
import type { SourceRef } from "../../lib/model/source.js";
import type { Suppression } from "../../lib/model/alert-item.js";
import { PlatformServerError } from "../../lib/platform/errors.js";
import type { DeploymentHistoryItem } from "../../lib/platform/schemas.js";
import { FakePlatform, cost } from "../support/fake-platform.js";

const MIN = 60_000;
const T0 = Date.parse("2026-03-02T10:00:00Z");
const ORG = "0a000000-0000-4000-8000-000000000000";
const hook: SourceRef = { kind: "webhook", organizationId: ORG, id: "w1" };
const cluster: SourceRef = { kind: "cluster", organizationId: ORG, id: "c1" };
const app: SourceRef = { kind: "deployment", organizationId: ORG, id: "a1" };

let now: number;
let platform: FakePlatform;
let store: MemoryIngestStore;
let raised: Array<{ detail: LookoutEventDetail; suppression?: Suppression }>;
let logged: Array<{ level: string; message: string }>;
let deps: PollDeps;

beforeEach(() => {
  now = T0;
  platform = new FakePlatform();
  store = new MemoryIngestStore({ retentionMs: 90 * 86_400_000, now: () => new Date(now) });
  raised = [];
  logged = [];
  const log: Log = {
    info: (message) => void logged.push({ level: "info", message }),
    warn: (message) => void logged.push({ level: "warn", message }),
    error: (message) => void logged.push({ level: "error", message }),
  };
  deps = {
    client: platform.client, store, now: () => new Date(now), backfillWindowMs: 15 * MIN, log,
    clusterNames: new Map([["c1", "prod-eu"]]),
    onAlert: (detail, suppression) => void raised.push({ detail, ...(suppression ? { suppression } : {}) }),
  };
});

const iso = (t: number) => new Date(t).toISOString();
const poll = (source: SourceRef, over: Partial<PollRequest> = {}) => pollSource({ source, ...over }, deps);
const delivery = (id: string, status: number, at: number, apps: string[] = []) => ({
  id, created_at: iso(at), target_response_status_code: status,
  request: { payload: { applications: apps.map((a) => ({ id: a, name: `app ${a}` })) } },
});
/** The store throws this error, as DynamoDB names it, for the record with this id. */
function refuseRecord(id: string, name: string, message: string) {
  const insert = store.insertRecord.bind(store);
  store.insertRecord = async (record, alert) => {
    if ((record.record as { id: string }).id === id) throw Object.assign(new Error(message), { name });
    return insert(record, alert);
  };
}
const cursorOf = (source: SourceRef) => store.getCursor(`${source.kind}:${source.organizationId}/${source.id}`);

describe("webhook deliveries and cluster logs (the list core)", () => {
  it("at first sight stores every delivery, and alerts only the failed ones inside the backfill window", async () => {
    platform.deliveries = [delivery("d1", 502, T0 - 60 * MIN), delivery("d2", 500, T0 - MIN), delivery("d3", 200, T0 - MIN)];
    const r = await poll(hook);
    expect(r).toMatchObject({ ok: true, firstSight: true, newRecords: 3, alerts: 1, suppressed: 1, requests: 1 });
    expect(raised.map((a) => [a.detail.webhook?.id, a.suppression?.reason])).toEqual(expect.arrayContaining([["w1", "backfill"], ["w1", undefined]]));
    expect((await cursorOf(hook))?.seen).toEqual(["d1", "d2", "d3"]);
  });

  it("writes nothing when nothing is new, and alerts a new failure once", async () => {
    platform.deliveries = [delivery("d1", 200, T0)];
    await poll(hook);
    const writes = store.writes.count;
    expect(await poll(hook)).toMatchObject({ ok: true, firstSight: false, newRecords: 0, alerts: 0 });
    expect(store.writes.count).toBe(writes);

    platform.deliveries.unshift(delivery("d2", 503, T0 + MIN));
    now += 2 * MIN;
    expect(await poll(hook)).toMatchObject({ newRecords: 1, alerts: 1, suppressed: 0 });
    expect(await poll(hook)).toMatchObject({ newRecords: 0, alerts: 0 });
    expect(raised).toHaveLength(1);
  });

  it("names the services of new deliveries as the change feed and learns their names", async () => {
    await poll(hook);
    platform.deliveries = [delivery("d1", 200, T0, ["a1", "a2"]), delivery("d2", 200, T0, ["a1"])];
    const r = await poll(hook);
    expect(r.hotServices.sort()).toEqual(["a1", "a2"]);
    expect(await store.getServiceContexts(["a1", "a2"])).toEqual(new Map([["a1", { name: "app a1" }], ["a2", { name: "app a2" }]]));
    expect((await poll(hook)).hotServices).toEqual([]); // nothing new, nothing named
  });

  it("quarantines an item that does not match the spec once, stores the valid ones, and keeps reading it", async () => {
    platform.deliveries = [delivery("d1", 200, T0)];
    platform.rejected = [{ index: 1, jsonPath: "$.results[1].id", reason: "expected a string", raw: { id: 7 } }];
    expect(await poll(hook)).toMatchObject({ ok: true, newRecords: 1, rejected: 1, quarantined: 1 });
    const second = await poll(hook);
    expect(second).toMatchObject({ ok: true, rejected: 1 });
    expect(second.quarantined).toBeUndefined();
    expect((await cursorOf(hook))?.seen).toEqual(["d1"]);
    expect(store.scan().filter((i) => i.item_type === "quarantine")).toHaveLength(1);
  });

  it("a failed read changes nothing, and counts what it cost", async () => {
    platform.deliveries = [delivery("d1", 500, T0)];
    await poll(hook);
    const [cursor, writes] = [await cursorOf(hook), store.writes.count];
    platform.deliveries.unshift(delivery("d2", 500, T0));
    const ctx = { endpoint: "listWebhookEvents", method: "GET", path: "/x", status: 502, cost: cost("listWebhookEvents", 3) };
    platform.failure = new PlatformServerError(ctx);
    const r = await poll(hook);
    expect(r).toMatchObject({ ok: false, requests: 3, retries: 2, error: { kind: "server_error", status: 502 } });
    expect(await cursorOf(hook)).toEqual(cursor);
    expect(store.writes.count).toBe(writes);
    platform.failure = undefined;
    expect(await poll(hook)).toMatchObject({ ok: true, newRecords: 1, alerts: 1 });
  });

  it("quarantines a record the store refuses for what it is; the others are stored and the cursor moves", async () => {
    platform.deliveries = [delivery("d1", 500, T0), delivery("huge", 500, T0), delivery("d3", 200, T0)];
    refuseRecord("huge", "ValidationException", "Item size has exceeded the maximum allowed size");
    expect(await poll(hook)).toMatchObject({ ok: true, newRecords: 2, quarantined: 1 });
    expect((await cursorOf(hook))?.seen).toEqual(["d1", "d3", "huge"]);
  });

  it("a passing store error fails the poll after the other records were tried, and the cursor does not move", async () => {
    platform.deliveries = [delivery("d1", 500, T0), delivery("slow", 500, T0), delivery("d3", 200, T0)];
    refuseRecord("slow", "ThrottlingException", "Rate exceeded");
    expect(await poll(hook)).toMatchObject({ ok: false, error: { message: "Rate exceeded" } });
    expect(await cursorOf(hook)).toBeUndefined();
    expect(store.scan().filter((i) => i.item_type === "record")).toHaveLength(2);
  });

  it("knows cluster log entries by content and alerts an error entry once, with the configured cluster name", async () => {
    await poll(cluster);
    const entry = { type: "error", timestamp: iso(T0), step: "CreateError", error: { tag: "QUOTA", user_log_message: "no quota" } };
    platform.clusterLogs = [entry, { ...entry }, { type: "info", timestamp: iso(T0), step: "Created" }];
    expect(await poll(cluster)).toMatchObject({ newRecords: 2, alerts: 1 });
    expect(await poll(cluster)).toMatchObject({ newRecords: 0, alerts: 0 });
    expect(raised[0]!.detail.cluster).toEqual({ id: "c1", name: "prod-eu" });
  });

  it("after an outage longer than the backfill window old failures stay quiet; after a shorter one they are alerted", async () => {
    await poll(hook);
    platform.deliveries = [delivery("d1", 500, T0 + 10 * MIN)];
    now = T0 + 60 * MIN;
    expect(await poll(hook, { outage: { from: iso(T0), to: iso(T0 + 50 * MIN) } })).toMatchObject({ alerts: 0, suppressed: 1 });
    platform.deliveries.unshift(delivery("d2", 500, T0 + 20 * MIN));
    expect(await poll(hook, { outage: { from: iso(T0 + 50 * MIN), to: iso(T0 + 55 * MIN) } })).toMatchObject({ alerts: 1, suppressed: 0 });
  });
});

describe("deployment history", () => {
  const entry = (exec: string, status: string, startedAt: number, service = "a1"): DeploymentHistoryItem => ({
    identifier: { service_id: service, execution_id: exec, name: "api", service_type: "APPLICATION" },
    status,
    auditing_data: { created_at: iso(startedAt), updated_at: iso(startedAt + MIN) },
  } as DeploymentHistoryItem);
  /** Runs of an execution, newest first as the platform lists them. */
  const deploy = (exec: string, status: string, startedAt = now) => void platform.history.unshift(entry(exec, status, startedAt));
  const setStatus = (exec: string, status: string) => {
    const i = platform.history.findIndex((h) => h.identifier.execution_id === exec);
    platform.history[i] = { ...platform.history[i]!, status };
  };
  const transitions = () => raised.map((a) => a.detail.transition);

  it("raises failed, still_failing, cancelled and recovered once each, threaded to the first failure", async () => {
    await poll(app);
    deploy("x1", "BUILDING");
    now += MIN;
    expect(await poll(app)).toMatchObject({ inProgress: 1, alerts: 0, newRecords: 1 });
    setStatus("x1", "BUILD_ERROR");
    now += MIN;
    expect(await poll(app)).toMatchObject({ inProgress: 0, alerts: 1 });
    for (const [exec, status] of [["x2", "DEPLOYMENT_ERROR"], ["x3", "CANCELED"], ["x4", "DEPLOYED"]] as const) {
      now += MIN;
      deploy(exec, status);
      await poll(app);
      await poll(app);
    }
    expect(transitions()).toEqual(["failed", "still_failing", "cancelled", "recovered"]);
    const incident = raised[0]!.detail.id;
    expect(raised.map((a) => a.detail.incident_id)).toEqual([incident, incident, incident, incident]);
    expect(raised[1]!.detail.deployment?.failure_count).toBe(2);
  });

  it("asks for a small page when quiet, and grows it at once when the page shares nothing with what is known", async () => {
    deploy("old", "DEPLOYED", T0 - 60 * MIN);
    await poll(app);
    await poll(app);
    expect(platform.calls.map((c) => c.pageSize)).toEqual([20, DEPLOYMENT_PAGE_MIN]);
    for (let i = 0; i < DEPLOYMENT_PAGE_MIN + 1; i++) deploy(`burst-${i}`, i === 0 ? "BUILD_ERROR" : "DEPLOYED", now + i);
    now += MIN;
    const r = await poll(app);
    expect(platform.calls.slice(2).map((c) => c.pageSize)).toEqual([DEPLOYMENT_PAGE_MIN, DEPLOYMENT_PAGE_MAX]);
    expect(r).toMatchObject({ requests: 2, gapSuspected: false, newRecords: DEPLOYMENT_PAGE_MIN + 1 });
    expect(transitions()).toEqual(["failed", "recovered"]); // nothing of the burst was missed
    expect((await cursorOf(app))?.page_size).toBe(DEPLOYMENT_PAGE_MIN);
  });

  it("suspects a gap when even the large page shares nothing with what is known, and says so", async () => {
    deploy("old", "DEPLOYED", T0 - 60 * MIN);
    await poll(app);
    for (let i = 0; i < DEPLOYMENT_PAGE_MAX + 1; i++) deploy(`many-${i}`, "DEPLOYED", now + i);
    now += MIN;
    expect(await poll(app)).toMatchObject({ gapSuspected: true });
    expect(await cursorOf(app)).toMatchObject({ page_size: DEPLOYMENT_PAGE_MAX, gap_suspected_at: iso(now) });
    expect(logged.some((l) => l.level === "warn" && l.message.includes("may have a gap"))).toBe(true);
  });

  it("reads the newest entries of an answer far larger than asked, and suspects a gap", async () => {
    platform.ignoresPageSize = true;
    for (let i = 0; i < DEPLOYMENT_READ_MAX + 100; i++) deploy(`e-${i}`, "DEPLOYED", T0 - 1000 * MIN + i * MIN);
    const r = await poll(app);
    expect(r).toMatchObject({ gapSuspected: true, newRecords: DEPLOYMENT_READ_MAX });
    const kept = (await cursorOf(app))!.deployments!.map((d) => d.execution_id);
    expect(kept).toHaveLength(DEPLOYMENT_READ_MAX);
    expect(kept).toContain(`e-${DEPLOYMENT_READ_MAX + 99}`);
    expect(kept).not.toContain("e-0");
  });

  it("keeps one copy of an execution listed twice, whatever the page's order", async () => {
    await poll(app);
    const running = entry("dup", "DEPLOYING", now);
    const failed = { ...entry("dup", "DEPLOYMENT_ERROR", now), auditing_data: { created_at: iso(now), updated_at: iso(now + 2 * MIN) } };
    platform.history = [running, failed];
    now += 3 * MIN;
    expect(await poll(app)).toMatchObject({ alerts: 1, inProgress: 0 });
    platform.history = [failed, running];
    expect(await poll(app)).toMatchObject({ alerts: 0, newRecords: 0 });
  });

  it("keeps the page large while an execution is in progress, then goes back to the small page", async () => {
    await poll(app);
    for (let i = 0; i < 3; i++) deploy(`r-${i}`, "BUILDING", now + i);
    expect(await poll(app)).toMatchObject({ inProgress: 3 });
    expect((await cursorOf(app))?.page_size).toBe(DEPLOYMENT_PAGE_MIN);
    for (let i = 0; i < 3; i++) setStatus(`r-${i}`, "DEPLOYED");
    now += MIN;
    expect(await poll(app)).toMatchObject({ inProgress: 0 });
    expect((await cursorOf(app))?.page_size).toBe(DEPLOYMENT_PAGE_MIN);
  });

  it("quarantines an observation the store refuses, and records its status so it is not read again", async () => {
    await poll(app);
    deploy("big", "BUILD_ERROR");
    deploy("ok", "BUILD_ERROR");
    const observe = store.observeExecution.bind(store);
    store.observeExecution = (async (ref, decide) => {
      if (ref.executionId === "big") throw Object.assign(new Error("Item size has exceeded the maximum allowed size"), { name: "ValidationException" });
      return observe(ref, decide);
    }) as typeof store.observeExecution;
    now += MIN;
    expect(await poll(app)).toMatchObject({ ok: true, quarantined: 1, alerts: 1 });
    expect((await cursorOf(app))?.deployments?.map((d) => d.execution_id).sort()).toEqual(["big", "ok"]);
    expect(await poll(app)).toMatchObject({ ok: true, alerts: 0 });
    expect(store.scan().filter((i) => i.item_type === "quarantine")).toHaveLength(1);
  });

  it("at first sight, a failure older than the backfill window is stored but raises no alert", async () => {
    deploy("ancient", "BUILD_ERROR", T0 - 120 * MIN);
    deploy("fresh", "BUILD_ERROR", T0 - 2 * MIN);
    expect(await poll(app)).toMatchObject({ firstSight: true, alerts: 1, suppressed: 1 });
    expect(raised.find((a) => a.suppression)?.detail.deployment?.execution_id).toBe("ancient");
  });
});
