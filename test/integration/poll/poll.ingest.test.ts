/**
 * Ingestion end to end on real parts: the simulator over HTTP, DynamoDB Local, the poller.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { createPlatformClient } from "../../../lib/platform/client.js";
import { DynamoIngestStore } from "../../../lib/store/ingest-store.js";
import { pollSource, type PollDeps } from "../../../lib/poll/poll.js";
import type { Log } from "../../../lib/model/log.js";
import type { SourceRef } from "../../../lib/model/source.js";
import type { AlertItem } from "../../../lib/model/alert-item.js";
import { freshTable, scanTable, TEST_RETENTION_MS } from "../../support/dynamodb.js";

const quietLog: Log & { warnings: Array<Record<string, unknown>> } = {
  warnings: [],
  info() {},
  warn(_m, extra) {
    quietLog.warnings.push(extra ?? {});
  },
  error() {},
};

let sim: Simulator;
let tableName: string;
let doc: DynamoDBDocumentClient;
let store: DynamoIngestStore;
let deps: PollDeps;

beforeAll(async () => {
  const t = await freshTable("ingest");
  tableName = t.tableName;
  doc = DynamoDBDocumentClient.from(t.client);
  sim = await startSimulator({ size: { applications: 6, clusters: 1, webhooks: 1 } });
  const now = () => sim.clock.now();
  store = new DynamoIngestStore({ client: t.client, tableName, retentionMs: TEST_RETENTION_MS, now });
  deps = {
    client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token", sleep: async () => {} }),
    store,
    now,
    backfillWindowMs: 15 * 60_000,
    log: quietLog,
  };
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.faults.clear();
  quietLog.warnings.length = 0;
});

const scanAll = () => scanTable(doc, tableName);
const alerts = async (filter: (a: AlertItem) => boolean = () => true) =>
  (await scanAll()).filter((i) => i.item_type === "alert").map((i) => i as unknown as AlertItem).filter(filter);

const app = (i: number): SourceRef => ({ kind: "deployment", organizationId: sim.ids.organizationId, id: sim.ids.applicationIds[i]! });
const poll = (source: SourceRef, previousPollAt?: string) => pollSource({ source, previousPollAt }, deps);
/** Polls once now (first sight of anything old), so later changes are fresh. */
const prime = (source: SourceRef) => poll(source);
const minutes = (n: number) => sim.clock.advance(n * 60_000);

describe("deployments as state machines", () => {
  it("raises failed, still_failing (counted), recovered and cancelled, each once, threaded to the first", async () => {
    const src = app(0);
    const service = sim.ids.applicationIds[0]!;
    await prime(src);
    const mine = (a: AlertItem) => a.detail.service?.id === service;

    sim.scenario.deploy(service, { outcome: "DEPLOYMENT_ERROR", commit: { git_commit_id: "a1b2c3d4e5f6", message: "break it", author_name: "Jane" }, triggeredBy: "jane@example.com", origin: "GIT" });
    minutes(1);
    expect((await poll(src)).alerts).toBe(0); // still in progress
    minutes(5);
    const r1 = await poll(src);
    expect(r1.alerts).toBe(1);
    const [failed] = await alerts((a) => mine(a) && a.detail.transition === "failed");
    expect(failed!.state).toBe("pending");
    expect(failed!.detail).toMatchObject({
      kind: "deployment", status: "DEPLOYMENT_ERROR", severity: "error",
      deployment: { commit: { id: "a1b2c3d4e5f6", short_id: "a1b2c3d", author: "Jane", message: "break it" }, triggered_by: "jane@example.com", origin: "GIT" },
    });
    expect(failed!.detail.summary).toContain("deployment failed");
    expect(failed!.detail.incident_id).toBe(failed!.detail.id);

    sim.scenario.deploy(service, { outcome: "BUILD_ERROR" });
    minutes(6);
    await poll(src);
    const [still] = await alerts((a) => mine(a) && a.detail.transition === "still_failing");
    expect(still!.detail.deployment?.failure_count).toBe(2);
    expect(still!.detail.incident_id).toBe(failed!.detail.id);

    sim.scenario.deploy(service, { outcome: "CANCELED" });
    minutes(6);
    await poll(src);
    expect(await alerts((a) => mine(a) && a.detail.transition === "cancelled")).toHaveLength(1);

    sim.scenario.deploy(service, { outcome: "DEPLOYED" });
    minutes(6);
    await poll(src);
    const [recovered] = await alerts((a) => mine(a) && a.detail.transition === "recovered");
    expect(recovered!.detail.incident_id).toBe(failed!.detail.id);

    // Reading again and again changes nothing.
    await poll(src);
    await poll(src);
    expect(await alerts(mine)).toHaveLength(4);
  });

  it("alerts on an execution first seen in progress when it is later seen in error", async () => {
    const src = app(1);
    await prime(src);
    const exec = sim.scenario.deploy(src.id, { outcome: "DEPLOYMENT_ERROR" });
    minutes(1.5);
    await poll(src);
    minutes(5);
    const r = await poll(src);
    expect(r.alerts).toBe(1);
    const [a] = await alerts((x) => x.detail.deployment?.execution_id === exec);
    expect(a!.detail.deployment?.previous_status).toMatch(/BUILDING|DEPLOYING/);
  });

  it("yields one alert when ten polls read the same failed execution at once", async () => {
    const src = app(2);
    await prime(src);
    const exec = sim.scenario.deploy(src.id, { outcome: "DEPLOYMENT_ERROR" });
    minutes(5);
    const results = await Promise.all(Array.from({ length: 10 }, () => poll(src)));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(results.reduce((n, r) => n + r.alerts, 0)).toBe(1);
    expect(await alerts((a) => a.detail.deployment?.execution_id === exec)).toHaveLength(1);
  });

  it("keeps unknown states and classifies a new *_ERROR as a failure", async () => {
    const src = app(3);
    await prime(src);
    sim.scenario.setOptions({ unknownEnums: true, extraFields: true });
    try {
      const exec = sim.scenario.deploy(src.id, { outcome: "QUANTUM_ERROR" });
      minutes(5);
      expect((await poll(src)).alerts).toBe(1);
      const [a] = await alerts((x) => x.detail.deployment?.execution_id === exec);
      expect(a!.detail.status).toBe("QUANTUM_ERROR");
      expect(a!.detail.deployment?.origin).toBe("AGENTIC");
    } finally {
      sim.scenario.setOptions({ unknownEnums: false, extraFields: false });
    }
  });

  it("grows the page at once when a small page shares nothing with what is known", async () => {
    const src = app(4);
    await prime(src);
    await poll(src); // settles on the small page
    for (let i = 0; i < 12; i++) sim.scenario.deploy(src.id, { outcome: i === 0 ? "DEPLOYMENT_ERROR" : "DEPLOYED", at: new Date(sim.clock.nowMs() + i * 1000).toISOString() });
    minutes(6);
    const r = await poll(src);
    expect(r.requests).toBe(2); // small page, then the large one
    expect(r.gapSuspected).toBe(false);
    expect(r.alerts).toBe(2); // the failure deep in the burst is not missed, nor the recovery after it
  });
});

describe("webhook deliveries and cluster logs", () => {
  const webhook = (): SourceRef => ({ kind: "webhook", organizationId: sim.ids.organizationId, id: sim.ids.webhookIds[0]! });
  const cluster = (): SourceRef => ({ kind: "cluster", organizationId: sim.ids.organizationId, id: sim.ids.clusterIds[0]! });

  it("alerts once per delivery answered outside 2xx, stores all, and redacts what it stores", async () => {
    await prime(webhook());
    sim.scenario.setWebhookTarget(sim.ids.webhookIds[0]!, { status: 503, body: "upstream down" });
    sim.scenario.deploy(sim.ids.applicationIds[5]!, { outcome: "DEPLOYED" });
    minutes(5);
    const r = await poll(webhook());
    expect(r.newRecords).toBeGreaterThanOrEqual(2); // started + successful
    expect(r.alerts).toBe(r.newRecords);
    expect(r.hotServices).toContain(sim.ids.applicationIds[5]);
    const [a] = await alerts((x) => x.detail.kind === "webhook_delivery");
    expect(a!.detail).toMatchObject({ transition: "delivery_failed", http: { status_code: 503 } });
    expect(a!.detail.http?.target_host).toBeTruthy();

    const again = await poll(webhook());
    expect(again.newRecords).toBe(0);

    const stored = JSON.stringify((await scanAll()).filter((i) => i.record_kind === "webhook_delivery"));
    expect(stored).toContain("[REDACTED]");
    expect(stored).not.toMatch(/shh-|sig_[a-z0-9]{8}/i);
    sim.scenario.setWebhookTarget(sim.ids.webhookIds[0]!, { status: 200 });
  });

  it("learns service names from the change feed", async () => {
    const ctx = await store.getServiceContexts([sim.ids.applicationIds[5]!]);
    expect(ctx.get(sim.ids.applicationIds[5]!)?.environment?.id).toBe(sim.ids.environmentId);
  });

  it("alerts once per cluster error entry, deduplicated by content", async () => {
    await prime(cluster());
    minutes(1);
    sim.scenario.clusterRun(sim.ids.clusterIds[0]!, { entries: 30, errors: 2 });
    const r = await poll(cluster());
    expect(r.newRecords).toBe(30);
    expect(r.alerts).toBe(2);
    expect((await poll(cluster())).newRecords).toBe(0);
    const errs = await alerts((a) => a.detail.kind === "cluster_log");
    expect(errs).toHaveLength(2);
    expect(errs[0]!.detail.error?.tag).toMatch(/^[A-Z_]+$/);
  });

  it("writes nothing when nothing is new", async () => {
    await poll(webhook());
    await poll(cluster());
    await poll(app(0));
    const before = store.writes.count;
    const results = [await poll(webhook()), await poll(cluster()), await poll(app(0))];
    expect(results.every((r) => r.ok && r.requests === 1)).toBe(true);
    expect(store.writes.count).toBe(before);
  });
});

describe("first sight", () => {
  it("stores records older than the backfill window without alerting, and alerts on fresh ones", async () => {
    const fresh = await startSimulator({ seed: 7, size: { applications: 1, clusters: 1 } });
    try {
      const t = await freshTable("backfill");
      const s = new DynamoIngestStore({ client: t.client, tableName: t.tableName, retentionMs: TEST_RETENTION_MS, now: () => fresh.clock.now() });
      const d: PollDeps = {
        ...deps,
        store: s,
        now: () => fresh.clock.now(),
        client: createPlatformClient({ baseUrl: fresh.url, token: fresh.apiToken, auth: "token" }),
      };
      const clusterId = fresh.ids.clusterIds[0]!;
      fresh.scenario.clusterRun(clusterId, { entries: 10, errors: 3 });
      fresh.scenario.deploy(fresh.ids.applicationIds[0]!, { outcome: "DEPLOYMENT_ERROR" });
      fresh.clock.advance(3 * 3_600_000); // all of it is three hours old at first sight
      const src = { kind: "cluster" as const, organizationId: fresh.ids.organizationId, id: clusterId };
      const appSrc = { kind: "deployment" as const, organizationId: fresh.ids.organizationId, id: fresh.ids.applicationIds[0]! };
      const r = await pollSource({ source: src }, d);
      const ra = await pollSource({ source: appSrc }, d);
      expect(r).toMatchObject({ newRecords: 10, alerts: 0, suppressed: 3 });
      expect(ra).toMatchObject({ alerts: 0, suppressed: 1 });

      fresh.scenario.clusterRun(clusterId, { entries: 5, errors: 1 });
      const later = await pollSource({ source: src, previousPollAt: fresh.clock.nowIso() }, d);
      expect(later).toMatchObject({ alerts: 1, suppressed: 0 });

      // A long interval between polls that the request budget chose is not an outage: still alerted.
      fresh.scenario.clusterRun(clusterId, { entries: 5, errors: 1, at: fresh.clock.nowIso() });
      fresh.clock.advance(45 * 60_000);
      const spaced = await pollSource({ source: src, previousPollAt: new Date(fresh.clock.nowMs() - 45 * 60_000).toISOString() }, d);
      expect(spaced).toMatchObject({ alerts: 1, suppressed: 0 });

      // After an outage of Lookout longer than the window, old news stays quiet again.
      fresh.scenario.clusterRun(clusterId, { entries: 5, errors: 1, at: fresh.clock.nowIso() });
      fresh.clock.advance(2 * 3_600_000);
      const outage = { from: new Date(fresh.clock.nowMs() - 2 * 3_600_000).toISOString(), to: fresh.clock.nowIso() };
      const afterOutage = await pollSource({ source: src, previousPollAt: outage.from, outage }, d);
      // The new error is old news; the close of the incident people were told of (the spaced run's) is
      // not, however old: the message they saw turns resolved (docs/events.md, "Incidents").
      expect(afterOutage).toMatchObject({ alerts: 1, suppressed: 1 });
    } finally {
      await fresh.close();
    }
  });
});

describe("bad responses lose nothing", () => {
  const webhook = (): SourceRef => ({ kind: "webhook", organizationId: sim.ids.organizationId, id: sim.ids.webhookIds[0]! });

  it("skips a malformed response without moving the cursor, and reads everything next time", async () => {
    await poll(webhook());
    sim.scenario.setWebhookTarget(sim.ids.webhookIds[0]!, { status: 500 });
    sim.scenario.deploy(sim.ids.applicationIds[4]!, { outcome: "DEPLOYED" });
    minutes(5);
    sim.faults.set("listWebhookEvents", { malformed: "truncated", times: 1 });
    const bad = await poll(webhook());
    expect(bad.ok).toBe(false);
    expect(bad.error?.kind).toBe("schema_mismatch");
    expect(bad.newRecords).toBe(0);
    const good = await poll(webhook());
    expect(good.newRecords).toBe(2);
    expect(good.alerts).toBe(2);
    sim.scenario.setWebhookTarget(sim.ids.webhookIds[0]!, { status: 200 });
  });

  it("keeps the valid items beside an invalid one, and logs the invalid one with its path", async () => {
    const src: SourceRef = { kind: "webhook", organizationId: sim.ids.organizationId, id: sim.ids.webhookIds[0]! };
    sim.faults.set("listWebhookEvents", {
      body: {
        results: [
          { id: "11111111-1111-4111-8111-111111111111", created_at: sim.clock.nowIso(), target_response_status_code: 500, request: { token: "leak-me" } },
          { id: 42, target_response_status_code: "oops" },
        ],
      },
      times: 1,
    });
    const r = await poll(src);
    expect(r.ok).toBe(true);
    expect(r.rejected).toBe(1);
    expect(r.newRecords).toBe(1);
    expect(quietLog.warnings[0]).toMatchObject({ jsonPath: "$.results[1].id" });
    expect(JSON.stringify(quietLog.warnings)).not.toContain("leak-me");
  });
});
