/**
 * Identity is exact and time is instants (docs/platform.md): hand-made deployment history pages and
 * cluster logs from a plain HTTP server, polled into DynamoDB Local.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { createPlatformClient } from "../../../lib/platform/client.js";
import { DynamoIngestStore } from "../../../lib/store/ingest-store.js";
import { pollSource, type PollDeps } from "../../../lib/poll/poll.js";
import type { Log } from "../../../lib/model/log.js";
import type { PollResult } from "../../../lib/model/poll.js";
import type { SourceRef } from "../../../lib/model/source.js";
import { keys } from "../../../lib/model/items.js";
import type { AlertItem } from "../../../lib/model/alert-item.js";
import { deploymentAlertId } from "../../../lib/alerts/build.js";
import { alertIdsOf } from "../../../lib/audit/explain.js";
import { freshTable, scanTable, TEST_RETENTION_MS } from "../../support/dynamodb.js";

type Entry = Record<string, unknown>;

/** Deployment history by application id, served as the platform does (newest first is up to the test). */
const histories = new Map<string, Entry[]>();
/** Cluster logs by cluster id. */
const clusterLogs = new Map<string, Entry[]>();
let server: Server;
let doc: DynamoDBDocumentClient;
let tableName: string;
let deps: PollDeps;
let clock = Date.parse("2026-03-02T12:00:00Z");
const errors: Array<Record<string, unknown>> = [];
const log: Log = { info() {}, warn() {}, error: (_m, extra) => errors.push(extra ?? {}) };
const org = randomUUID();

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const logs = /^\/organization\/[^/]+\/cluster\/([^/]+)\/logs$/.exec(url.pathname);
    if (logs) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ results: clusterLogs.get(logs[1]!) ?? [] }));
      return;
    }
    const m = /^\/application\/([^/]+)\/deploymentHistoryV2$/.exec(url.pathname);
    if (!m) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ status: 404, detail: "not found" }));
      return;
    }
    const pageSize = Number(url.searchParams.get("pageSize") ?? 20);
    const results = (histories.get(m[1]!) ?? []).slice(0, pageSize);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ page: 1, page_size: pageSize, results }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const t = await freshTable("identity");
  tableName = t.tableName;
  doc = DynamoDBDocumentClient.from(t.client);
  const now = () => new Date(clock);
  deps = {
    client: createPlatformClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: "test-token", auth: "token", sleep: async () => {} }),
    store: new DynamoIngestStore({ client: t.client, tableName, retentionMs: TEST_RETENTION_MS, now }),
    now,
    backfillWindowMs: 15 * 60_000,
    log,
  };
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const entry = (service: string, execution: string, status: string, created: string, updated = created): Entry => ({
  identifier: { service_id: service, execution_id: execution, name: "api", service_type: "APPLICATION" },
  status,
  auditing_data: { created_at: created, updated_at: updated, triggered_by: "jane@example.com", origin: "GIT" },
  details: { commit: null },
});

/** A new application, polled once with an empty history so that what follows is fresh, not backfill. */
async function newApp(): Promise<SourceRef & { service: string }> {
  const id = randomUUID();
  histories.set(id, []);
  const src = { kind: "deployment" as const, organizationId: org, id, service: id };
  expect((await poll(src)).ok).toBe(true);
  return src;
}
const serve = (app: SourceRef, ...entries: Entry[]) => histories.set(app.id, entries);
const poll = (src: SourceRef) => pollSource({ source: src }, deps);
const ok = (r: PollResult) => {
  expect(r.error).toBeUndefined();
  expect(r.ok).toBe(true);
  return r;
};
const minutes = (n: number) => (clock += n * 60_000);
const iso = (offsetMinutes: number) => new Date(Date.parse("2026-03-02T12:00:00Z") + offsetMinutes * 60_000).toISOString();

async function alertsOf(service: string): Promise<AlertItem[]> {
  return (await scanTable(doc, tableName))
    .filter((i) => i.item_type === "alert" && (i as unknown as AlertItem).detail.service?.id === service)
    .map((i) => i as unknown as AlertItem)
    .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.alert_id.localeCompare(b.alert_id));
}
const execution = async (service: string, exec: string) =>
  (await doc.send(new GetCommand({ TableName: tableName, Key: keys.execution(service, exec), ConsistentRead: true }))).Item;

describe("identity is exact", () => {
  it("alerts twice for an execution that fails, runs again and fails again with the same status", async () => {
    const app = await newApp();
    serve(app, entry(app.service, "e1", "DEPLOYMENT_ERROR", iso(0)));
    minutes(1);
    expect(ok(await poll(app)).alerts).toBe(1);

    serve(app, entry(app.service, "e1", "BUILDING", iso(0), iso(2)));
    minutes(1);
    expect(ok(await poll(app)).alerts).toBe(0);

    serve(app, entry(app.service, "e1", "DEPLOYMENT_ERROR", iso(0), iso(4)));
    minutes(1);
    // Read at once by five pollers: still one alert.
    const results = await Promise.all(Array.from({ length: 5 }, () => poll(app)));
    results.forEach(ok);
    expect(results.reduce((n, r) => n + r.alerts, 0)).toBe(1);

    const [failed, still] = await alertsOf(app.service);
    expect(failed!.detail).toMatchObject({ transition: "failed", status: "DEPLOYMENT_ERROR" });
    expect(still!.detail).toMatchObject({ transition: "still_failing", incident_id: failed!.detail.id, deployment: { failure_count: 2, execution_id: "e1" } });
    expect(still!.alert_id).not.toBe(failed!.alert_id);
    expect(await alertsOf(app.service)).toHaveLength(2);

    // The same page read again raises nothing, and the poll succeeds.
    minutes(1);
    expect(ok(await poll(app)).alerts).toBe(0);
    expect(await alertsOf(app.service)).toHaveLength(2);
    // `lookout explain` finds both alerts from the execution.
    expect(alertIdsOf((await execution(app.service, "e1"))!)).toEqual(expect.arrayContaining([failed!.alert_id, still!.alert_id]));
  });

  it("alerts once for a page that lists the same execution twice, whatever the copies say and in whatever order", async () => {
    const app = await newApp();
    const twice = entry(app.service, "e2", "DEPLOYMENT_ERROR", iso(0), iso(3));
    serve(app, twice, { ...twice });
    minutes(1);
    expect(ok(await poll(app)).alerts).toBe(1);

    // A stale copy beside the fresh one: the later updated wins, in either order, so polls do not flap.
    const stale = entry(app.service, "e2", "BUILDING", iso(0), iso(1));
    for (const page of [[twice, stale], [stale, twice], [twice, stale]]) {
      serve(app, ...page);
      minutes(1);
      expect(ok(await poll(app)).alerts).toBe(0);
    }
    expect(await alertsOf(app.service)).toHaveLength(1);
    expect((await execution(app.service, "e2"))!.state.status).toBe("DEPLOYMENT_ERROR");
  });

  it("alerts for both services of one history that share an execution id", async () => {
    const app = await newApp();
    const other = randomUUID();
    serve(app, entry(app.service, "shared", "DEPLOYMENT_ERROR", iso(0)));
    minutes(1);
    expect(ok(await poll(app)).alerts).toBe(1);

    // The other service's execution has the same id and the same status: news all the same.
    serve(app, entry(other, "shared", "DEPLOYMENT_ERROR", iso(1)), entry(app.service, "shared", "DEPLOYMENT_ERROR", iso(0)));
    minutes(1);
    expect(ok(await poll(app)).alerts).toBe(1);
    expect(await alertsOf(app.service)).toHaveLength(1);
    const [theirs] = await alertsOf(other);
    expect(theirs!.detail).toMatchObject({ transition: "failed", deployment: { execution_id: "shared" } });

    // Both in one page at first sight of the pair.
    const app2 = await newApp();
    const other2 = randomUUID();
    serve(app2, entry(other2, "x", "BUILD_ERROR", iso(1)), entry(app2.service, "x", "BUILD_ERROR", iso(0)));
    minutes(1);
    expect(ok(await poll(app2)).alerts).toBe(2);
    minutes(1);
    expect(ok(await poll(app2)).alerts).toBe(0);
  });

  it("remembers executions whose ids or statuses look like an object's own machinery, and a full page of one execution", async () => {
    const app = await newApp();
    const odd = ["__proto__", "constructor", "toString", "hasOwnProperty"];
    serve(app, ...odd.map((id, i) => entry(app.service, id, i % 2 ? "__proto__" : "DEPLOYMENT_ERROR", iso(i))));
    minutes(1);
    expect(ok(await poll(app)).alerts).toBe(2); // failed, then still_failing; `__proto__` is a state in progress
    minutes(1);
    expect(ok(await poll(app)).newRecords).toBe(0);
    // Hostile size: a page of 100 copies of one execution is one observation.
    const flood = randomUUID();
    serve(app, ...Array.from({ length: 100 }, (_, i) => entry(flood, "same", i % 3 ? "BUILDING" : "DEPLOYMENT_ERROR", iso(0), iso(i % 7))));
    minutes(1);
    const r = ok(await poll(app));
    expect(r.newRecords).toBe(1);
    expect((await execution(flood, "same"))!.state.status).toBe("DEPLOYMENT_ERROR"); // updated last (i = 6), and finished
    minutes(1);
    expect(ok(await poll(app)).newRecords).toBe(0);
  });

  it("takes an alert already in the outbox as the transition recorded: no retries, no error, the state moves on", async () => {
    const app = await newApp();
    const failure = entry(app.service, "e4", "DEPLOYMENT_ERROR", iso(0));
    serve(app, failure);
    // As a store that lost the execution's state (or trimmed its history) would have it: the alert is there.
    const id = deploymentAlertId({
      record_kind: "deployment", organization_id: org, application_id: app.id, service_id: app.service,
      execution_id: "e4", execution_id_derived: false, status: "DEPLOYMENT_ERROR",
    });
    await doc.send(new PutCommand({ TableName: tableName, Item: { ...keys.alert(id), item_type: "alert", alert_id: id, state: "pending", detail: { id, service: { id: app.service } }, created_at: iso(0) } }));
    minutes(1);
    const r = ok(await poll(app));
    expect(r.alerts).toBe(0);
    expect(r.newRecords).toBe(1);
    expect((await execution(app.service, "e4"))!.state).toMatchObject({ status: "DEPLOYMENT_ERROR", entered: [{ status: "DEPLOYMENT_ERROR", times: 1 }] });
    minutes(1);
    expect(ok(await poll(app)).alerts).toBe(0);
    expect(errors).toEqual([]);
  });
});

describe("time as instants", () => {
  it("is not wedged by entries dated 9999, with offsets, without a zone or with nanoseconds", async () => {
    clock = Date.parse("2026-03-02T12:00:00Z");
    const app = await newApp();
    const s = app.service;
    const at = (exec: string, status: string, created: string) => entry(s, exec, status, created);
    const page: Entry[] = [];
    const add = (e: Entry) => {
      page.unshift(e);
      serve(app, ...page);
    };

    add(at("future", "DEPLOYMENT_ERROR", "9999-01-01T00:00:00Z")); // seen at 12:01
    minutes(1);
    expect(ok(await poll(app)).alerts).toBe(1);

    // 07:05-05:00 is 12:05 UTC: later than the odd entry was seen, though earlier as text.
    add(at("r1", "DEPLOYED", "2026-03-02T07:05:00-05:00"));
    minutes(10);
    expect(ok(await poll(app)).alerts).toBe(1);

    add(at("f2", "DEPLOYMENT_ERROR", "2026-03-02T12:15:00.123456789Z"));
    minutes(10);
    expect(ok(await poll(app)).alerts).toBe(1);

    add(at("r2", "DEPLOYED", "2026-03-02T12:25:00")); // no zone: UTC
    minutes(10);
    expect(ok(await poll(app)).alerts).toBe(1);

    add(at("f3", "BUILD_ERROR", "2026-03-02T14:35:00+02:00"));
    minutes(10);
    expect(ok(await poll(app)).alerts).toBe(1);

    const seen = await alertsOf(s);
    expect(seen.map((a) => [a.detail.deployment?.execution_id, a.detail.transition])).toEqual([
      ["future", "failed"], ["r1", "recovered"], ["f2", "failed"], ["r2", "recovered"], ["f3", "failed"],
    ]);
    const [future, r1, f2, r2, f3] = seen;
    expect(r1!.detail.incident_id).toBe(future!.detail.id);
    expect(r2!.detail.incident_id).toBe(f2!.detail.id);
    // occurred_at is an instant; for the implausible one, when Lookout saw it.
    expect(future!.detail.occurred_at).toBe("2026-03-02T12:01:00.000Z");
    expect(r1!.detail.occurred_at).toBe("2026-03-02T12:05:00.000Z");
    expect(f2!.detail.occurred_at).toBe("2026-03-02T12:15:00.123Z");
    expect(r2!.detail.occurred_at).toBe("2026-03-02T12:25:00.000Z");
    expect(f3!.detail.occurred_at).toBe("2026-03-02T12:35:00.000Z");
    // The platform's own text stays in the execution's record for the audit trail.
    expect((await execution(s, "future"))!.state.observation).toMatchObject({ created_at_raw: "9999-01-01T00:00:00Z" });
    expect((await execution(s, "future"))!.state.observation.created_at).toBeUndefined();
    expect((await execution(s, "f2"))!.state.observation).toMatchObject({ created_at: "2026-03-02T12:15:00.123Z", created_at_raw: "2026-03-02T12:15:00.123456789Z" });
  });

  it("unwedges a service whose stored state holds a time written before times were checked", async () => {
    const app = await newApp();
    await doc.send(new PutCommand({
      TableName: tableName,
      Item: { ...keys.service(app.service), item_type: "service", version: 4, state: { failing: true, failure_count: 3, incident_id: "old", last_change_created_at: "9999-01-01T00:00:00Z", version: 4 } },
    }));
    serve(app, entry(app.service, "ok", "DEPLOYED", iso(1)));
    minutes(2);
    expect(ok(await poll(app)).alerts).toBe(1);
    const [recovered] = await alertsOf(app.service);
    expect(recovered!.detail).toMatchObject({ transition: "recovered", incident_id: "old" });
  });

  it("sorts a page by instant, so the success that recovers a failure is applied after it", async () => {
    clock = Date.parse("2026-03-02T12:09:00Z");
    const app = await newApp();
    // As text the failure (+02:00) sorts after the success (Z); as instants it is five minutes before.
    serve(app, entry(app.service, "fail", "DEPLOYMENT_ERROR", "2026-03-02T14:00:00+02:00"), entry(app.service, "fix", "DEPLOYED", "2026-03-02T12:05:00Z"));
    minutes(1);
    expect(ok(await poll(app)).alerts).toBe(2);
    expect((await alertsOf(app.service)).map((a) => a.detail.transition).sort()).toEqual(["failed", "recovered"]);
  });
});

describe("the backfill cutoff compares instants", () => {
  it("keeps old cluster errors quiet at first sight, and alerts on those whose time cannot be believed", async () => {
    clock = Date.parse("2026-03-02T12:00:00Z");
    const cluster = randomUUID();
    const error = (timestamp: string, tag: string): Entry => ({ type: "error", step: "CreateError", timestamp, error: { tag, user_log_message: tag } });
    clusterLogs.set(cluster, [
      error("2026-03-02T11:00:00.000000001+01:00", "OLD_WITH_OFFSET"), // 10:00 UTC: two hours old
      error("2026-03-02T10:00:00", "OLD_WITHOUT_ZONE"),
      error("2026-03-02T13:55:00+02:00", "FRESH_WITH_OFFSET"), // 11:55 UTC
      error("9999-01-01T00:00:00Z", "FAR_FUTURE"),
      error("0001-01-01T00:00:00Z", "ZERO_TIME"),
      error("half past ten", "UNREADABLE"),
    ]);
    const alerts: Array<{ tag?: string; occurred_at: string; suppressed: boolean }> = [];
    const r = ok(await pollSource(
      { source: { kind: "cluster", organizationId: org, id: cluster } },
      { ...deps, onAlert: (d, s) => alerts.push({ tag: d.error?.tag, occurred_at: d.occurred_at, suppressed: !!s }) },
    ));
    expect(r).toMatchObject({ newRecords: 6, alerts: 4, suppressed: 2 });
    const byTag = Object.fromEntries(alerts.map((a) => [a.tag, a]));
    expect(byTag.OLD_WITH_OFFSET).toEqual({ tag: "OLD_WITH_OFFSET", occurred_at: "2026-03-02T10:00:00.000Z", suppressed: true });
    expect(byTag.OLD_WITHOUT_ZONE).toMatchObject({ occurred_at: "2026-03-02T10:00:00.000Z", suppressed: true });
    expect(byTag.FRESH_WITH_OFFSET).toMatchObject({ occurred_at: "2026-03-02T11:55:00.000Z", suppressed: false });
    for (const odd of ["FAR_FUTURE", "ZERO_TIME", "UNREADABLE"]) {
      expect(byTag[odd], odd).toMatchObject({ occurred_at: "2026-03-02T12:00:00.000Z", suppressed: false });
    }
    // The stored records hold instants too, and the platform's text in the record itself.
    const records = (await scanTable(doc, tableName))
      .filter((i) => i.item_type === "record" && (i.record as { cluster_id?: string }).cluster_id === cluster) as Array<{ occurred_at: string; record: { timestamp?: string } }>;
    expect(records).toHaveLength(6);
    for (const rec of records) expect(rec.occurred_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(records.map((rec) => rec.record.timestamp)).toContain("9999-01-01T00:00:00Z");
  });
});
