/**
 * Faults of the platform (issue 7), through `pollSource` on real parts: the simulator over HTTP with
 * fault injection, DynamoDB Local, the real client (its sleeps recorded, not waited). For each: nothing
 * lost, nothing duplicated, and a failed read moves no cursor past unseen data. Also 10 pollers racing
 * on the same sources: exactly one alert per transition.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { createPlatformClient } from "../../../lib/platform/client.js";
import { DynamoIngestStore } from "../../../lib/store/ingest-store.js";
import { pollSource, type PollDeps } from "../../../lib/poll/poll.js";
import { sourceKey, type SourceRef } from "../../../lib/model/source.js";
import type { AlertItem } from "../../../lib/model/alert-item.js";
import { freshTable, TEST_RETENTION_MS, scanTable } from "../../support/dynamodb.js";

const log = { info() {}, warn() {}, error() {} };
let sim: Simulator;
let doc: DynamoDBDocumentClient;
let tableName: string;
let store: DynamoIngestStore;
let deps: PollDeps;
let skewMs = 0;
const sleeps: number[] = [];

beforeAll(async () => {
  const t = await freshTable("faults-platform");
  tableName = t.tableName;
  doc = DynamoDBDocumentClient.from(t.client);
  sim = await startSimulator({ seed: 71, size: { applications: 13, clusters: 2, webhooks: 2 } });
  const now = () => new Date(sim.clock.nowMs() + skewMs);
  store = new DynamoIngestStore({ client: t.client, tableName, retentionMs: TEST_RETENTION_MS, now });
  deps = {
    client: createPlatformClient({
      baseUrl: sim.url, token: sim.apiToken, auth: "token", timeoutMs: 200,
      retry: { maxAttempts: 3 }, sleep: async (ms) => void sleeps.push(ms),
    }),
    store, now, backfillWindowMs: 15 * 60_000, log,
  };
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.faults.clear();
  sleeps.length = 0;
  skewMs = 0;
});

async function alerts(): Promise<AlertItem[]> {
  const items = await scanTable(doc, tableName);
  return items.filter((i) => i.item_type === "alert") as unknown as AlertItem[];
}
/** Alerts about one source, by a key that is unique per transition: no key may appear twice. */
async function alertsOf(sourceId: string): Promise<AlertItem[]> {
  const kind = sim.ids.applicationIds.includes(sourceId) ? "deployment" : sim.ids.webhookIds.includes(sourceId) ? "webhook_delivery" : "cluster_log";
  return (await alerts()).filter((a) => a.detail.kind === kind && JSON.stringify(a.detail).includes(sourceId));
}
function expectNoDuplicates(list: AlertItem[]) {
  const ids = list.map((a) => a.detail.id);
  expect(new Set(ids).size).toBe(ids.length);
}

const app = (i: number): SourceRef => ({ kind: "deployment", organizationId: sim.ids.organizationId, id: sim.ids.applicationIds[i]! });
const hook = (i: number): SourceRef => ({ kind: "webhook", organizationId: sim.ids.organizationId, id: sim.ids.webhookIds[i]! });
const cluster = (i: number): SourceRef => ({ kind: "cluster", organizationId: sim.ids.organizationId, id: sim.ids.clusterIds[i]! });
const poll = (source: SourceRef) => pollSource({ source }, deps);
const minutes = (n: number) => sim.clock.advance(n * 60_000);
const cursorFor = (s: SourceRef) => store.getCursor(sourceKey(s));

const ENDPOINT = { deployment: "listDeploymentHistory", webhook: "listWebhookEvents", cluster: "listClusterLogs" } as const;

/** One new failure on each kind of source, seen by the platform after `minutes(6)`. */
function failEverywhere(appIdx: number, hookIdx: number, clusterIdx: number) {
  sim.scenario.setWebhookTarget(sim.ids.webhookIds[hookIdx]!, { status: 503 });
  sim.scenario.deploy(sim.ids.applicationIds[appIdx]!, { outcome: "DEPLOYMENT_ERROR" });
  sim.scenario.clusterRun(sim.ids.clusterIds[clusterIdx]!, { entries: 4, errors: 1 });
  minutes(6);
}

describe("the platform failing, then recovering: nothing lost, nothing twice, no cursor moved", () => {
  const cases: Array<[string, Parameters<Simulator["faults"]["set"]>[1], string]> = [
    ["429 with Retry-After", { status: 429, retryAfter: 7 }, "rate_limited"],
    ["429 without Retry-After", { status: 429 }, "rate_limited"],
    ["500", { status: 500 }, "server_error"],
    ["503", { status: 503, retryAfter: 2 }, "server_error"],
    ["a timeout", { delayMs: 400 }, "timeout"],
    ["a dropped connection", { drop: true }, "network"],
    ["a truncated body", { malformed: "truncated" }, "schema_mismatch"],
    ["an HTML error page with 200", { malformed: "html" }, "schema_mismatch"],
  ];
  let n = 0;
  it.each(cases)("%s", async (_name, fault, kind) => {
    // Each case on its own application (0-7); the 2 webhooks and 2 clusters are reused round-robin.
    const i = n++;
    const sources = [app(i % 8), hook(i % 2), cluster(i % 2)];
    for (const s of sources) await poll(s);
    const before = await Promise.all(sources.map((s) => alertsOf(s.id)));
    failEverywhere(i % 8, i % 2, i % 2);
    const cursors = await Promise.all(sources.map(cursorFor));

    // Persistent fault: every attempt fails; the poll fails as a whole and changes nothing.
    for (const s of sources) sim.faults.set(ENDPOINT[s.kind], fault);
    for (const s of sources) {
      const r = await poll(s);
      expect(r.ok, `${s.kind}`).toBe(false);
      expect(r.error?.kind, `${s.kind}`).toBe(kind);
      expect(r.newRecords).toBe(0);
      if (!("malformed" in fault)) expect(r.retries, `${s.kind}: retried`).toBe(2);
    }
    if (fault.retryAfter === 7) expect(sleeps.filter((s) => s >= 7000).length).toBeGreaterThan(0);
    expect(await Promise.all(sources.map(cursorFor))).toEqual(cursors);
    expect(await Promise.all(sources.map((s) => alertsOf(s.id)))).toEqual(before);

    // The fault once: the retry gets through (read errors other than a bad body are retried).
    sim.faults.clear();
    for (const s of sources) sim.faults.set(ENDPOINT[s.kind], { ...fault, times: 1 });
    const results = [];
    for (const s of sources) results.push(await poll(s));
    for (const s of sources) await poll(s); // and once more, clean
    const after = await Promise.all(sources.map((s) => alertsOf(s.id)));
    for (const [j, s] of sources.entries()) {
      const fresh = after[j]!.filter((a) => !before[j]!.some((b) => b.detail.id === a.detail.id));
      expectNoDuplicates(after[j]!);
      // Webhook: the failed delivery of the new deployment; deployment: failed; cluster: the error entry.
      expect(fresh.length, `${s.kind} fresh alerts`).toBeGreaterThanOrEqual(1);
      if (s.kind === "deployment") expect(fresh.map((a) => a.detail.transition)).toEqual(["failed"]);
      if (s.kind === "cluster") expect(fresh).toHaveLength(1);
    }
    if ("malformed" in fault) expect(results.every((r) => !r.ok)).toBe(true);
    else expect(results.every((r) => r.ok && r.retries === 1)).toBe(true);
    sim.scenario.setWebhookTarget(sim.ids.webhookIds[i % 2]!, { status: 200 });
  });
});

describe("schema drift", () => {
  it("missing optional fields, unknown enum values and extra fields: kept, alerted once", async () => {
    const src = app(8);
    await poll(src);
    const exec = sim.scenario.deploy(src.id, { outcome: "DEPLOYMENT_ERROR" });
    minutes(6);
    const res = await fetch(`${sim.url}/application/${src.id}/deploymentHistoryV2?pageSize=5`, { headers: { authorization: `Token ${sim.apiToken}` } });
    const body = (await res.json()) as { results: Array<Record<string, any>> };
    const drifted = body.results.map((item) => {
      const out = structuredClone(item);
      if (out.identifier.execution_id === exec) {
        out.status = "QUANTUM_ERROR"; // unknown enum value: a failure because it ends in _ERROR
        out.identifier.service_type = "HOLOGRAM";
        delete out.auditing_data?.triggered_by;
        delete out.details;
        delete out.total_duration;
        out.brand_new_field = { nested: [1, 2, 3] };
        out.auditing_data = { ...out.auditing_data, origin: "TELEPATHY", extra: true };
      }
      return out;
    });
    sim.faults.set("listDeploymentHistory", { body: { ...body, results: drifted, next_page: null }, times: 1 });
    const r = await poll(src);
    expect(r.ok).toBe(true);
    expect(r.rejected).toBe(0);
    expect(r.alerts).toBe(1);
    const mine = (await alertsOf(src.id)).filter((a) => a.detail.deployment?.execution_id === exec || JSON.stringify(a.detail).includes(exec));
    expect(mine).toHaveLength(1);
    expect({ transition: mine[0]!.detail.transition, status: mine[0]!.detail.status }).toEqual({ transition: "failed", status: "QUANTUM_ERROR" });
    // The platform then tells the real status (DEPLOYMENT_ERROR): a change of status, but no second "failed".
    const again = await poll(src);
    expect(again.ok).toBe(true);
    const all = (await alertsOf(src.id)).filter((a) => JSON.stringify(a.detail).includes(exec));
    expect(all.filter((a) => a.detail.transition === "failed")).toHaveLength(1);
  });

  it("an unknown webhook kind, matched event and extra fields on a delivery: stored and alerted once", async () => {
    const src = hook(0);
    await poll(src);
    sim.scenario.setWebhookTarget(src.id, { status: 500 });
    sim.scenario.deploy(sim.ids.applicationIds[1]!, { outcome: "DEPLOYED" });
    minutes(6);
    const res = await fetch(`${sim.url}/organization/${src.organizationId}/webhook/${src.id}/event`, { headers: { authorization: `Token ${sim.apiToken}` } });
    const body = (await res.json()) as { results: Array<Record<string, unknown>> };
    const drifted = body.results.map((e) => ({ ...e, kind: "CARRIER_PIGEON", matched_event: "DEPLOYMENT_TELEPORTED", surprise: { a: 1 }, target_response_body: undefined }));
    sim.faults.set("listWebhookEvents", { body: { ...body, results: drifted }, times: 1 });
    const r = await poll(src);
    expect(r.ok).toBe(true);
    expect(r.rejected).toBe(0);
    expect(r.alerts).toBeGreaterThanOrEqual(1);
    const r2 = await poll(src);
    expect(r2.alerts).toBe(0);
    expectNoDuplicates(await alertsOf(src.id));
    sim.scenario.setWebhookTarget(src.id, { status: 200 });
  });
});

describe("an empty list after a full one", () => {
  it.each(["webhook", "cluster", "deployment"] as const)("%s: nothing re-alerted when the items come back, new ones alerted once", async (kind) => {
    const src = kind === "webhook" ? hook(1) : kind === "cluster" ? cluster(1) : app(9);
    if (kind === "webhook") sim.scenario.setWebhookTarget(src.id, { status: 500 });
    await poll(src);
    if (kind === "deployment") sim.scenario.deploy(src.id, { outcome: "BUILD_ERROR" });
    else if (kind === "cluster") sim.scenario.clusterRun(src.id, { entries: 3, errors: 1 });
    else sim.scenario.deploy(sim.ids.applicationIds[2]!, { outcome: "DEPLOYED" });
    minutes(6);
    await poll(src);
    const full = await alertsOf(src.id);
    expect(full.length).toBeGreaterThan(0);

    sim.faults.set(ENDPOINT[kind], { body: { results: [] }, times: 1 });
    const empty = await poll(src);
    expect(empty.ok).toBe(true);
    expect(empty.alerts).toBe(0);
    const back = await poll(src);
    expect(back.alerts).toBe(0);
    expect(await alertsOf(src.id)).toHaveLength(full.length);

    if (kind === "deployment") sim.scenario.deploy(src.id, { outcome: "DEPLOYMENT_ERROR" });
    else if (kind === "cluster") sim.scenario.clusterRun(src.id, { entries: 3, errors: 1 });
    else sim.scenario.deploy(sim.ids.applicationIds[2]!, { outcome: "DEPLOYED" });
    minutes(6);
    const fresh = await poll(src);
    expect(fresh.alerts).toBeGreaterThanOrEqual(1);
    expectNoDuplicates(await alertsOf(src.id));
    if (kind === "webhook") sim.scenario.setWebhookTarget(src.id, { status: 200 });
  });
});

describe("clock skew between the platform and us", () => {
  it.each([
    ["platform ahead of us by 10 minutes", -10],
    ["platform behind us by 10 minutes", 10],
    ["platform behind us by 40 minutes (more than the backfill window)", 40],
  ] as const)("%s: every new failure alerted once, none suppressed as backfill", async (_name, skewMinutes) => {
    const sources = [app(10), hook(1), cluster(0)];
    sim.scenario.setWebhookTarget(sources[1]!.id, { status: 500 });
    for (const s of sources) await poll(s);
    skewMs = skewMinutes * 60_000;
    const before = await Promise.all(sources.map((s) => alertsOf(s.id)));
    sim.scenario.deploy(sources[0]!.id, { outcome: "DEPLOYMENT_ERROR" });
    sim.scenario.clusterRun(sources[2]!.id, { entries: 3, errors: 1 });
    sim.scenario.deploy(sim.ids.applicationIds[3]!, { outcome: "DEPLOYED" });
    minutes(6);
    const results = [];
    for (const s of sources) results.push(await poll(s));
    for (const s of sources) await poll(s);
    for (const [j, r] of results.entries()) {
      expect(r.ok).toBe(true);
      expect(r.suppressed, sources[j]!.kind).toBe(0);
      expect(r.alerts, sources[j]!.kind).toBeGreaterThanOrEqual(1);
    }
    const after = await Promise.all(sources.map((s) => alertsOf(s.id)));
    after.forEach(expectNoDuplicates);
    expect(after[0]!.length - before[0]!.length).toBe(1);
    expect(after[2]!.length - before[2]!.length).toBe(1);
    sim.scenario.setWebhookTarget(sources[1]!.id, { status: 200 });
  });
});

describe("10 pollers racing on the same sources", () => {
  it("exactly one alert per transition, whatever the interleaving", async () => {
    const sources = [app(11), app(12), hook(0), cluster(1)];
    sim.scenario.setWebhookTarget(sources[2]!.id, { status: 502 });
    await Promise.all(sources.map(poll));
    const before = await Promise.all(sources.map((s) => alertsOf(s.id)));
    // A patient client here: 40 reads at once on one simulator are slow, not faulty.
    const racer = { ...deps, client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token", sleep: async () => {} }) };
    const race = () => Promise.all(Array.from({ length: 10 }, () => Promise.all(sources.map((source) => pollSource({ source }, racer)))));

    sim.scenario.deploy(sources[0]!.id, { outcome: "DEPLOYMENT_ERROR" });
    sim.scenario.deploy(sources[1]!.id, { outcome: "BUILD_ERROR" });
    sim.scenario.clusterRun(sources[3]!.id, { entries: 6, errors: 2 });
    minutes(6);
    const r1 = (await race()).flat();
    expect(r1.filter((r) => !r.ok).map((r) => r.error)).toEqual([]);
    sim.scenario.deploy(sources[0]!.id, { outcome: "DEPLOYMENT_ERROR" }); // still_failing
    sim.scenario.deploy(sources[1]!.id, { outcome: "DEPLOYED" }); // recovered
    minutes(6);
    const r2 = (await race()).flat();
    expect(r2.every((r) => r.ok)).toBe(true);

    const after = await Promise.all(sources.map((s) => alertsOf(s.id)));
    after.forEach(expectNoDuplicates);
    const fresh = after.map((list, j) => list.filter((a) => !before[j]!.some((b) => b.detail.id === a.detail.id)));
    expect(fresh[0]!.map((a) => a.detail.transition).sort()).toEqual(["failed", "still_failing"]);
    expect(fresh[1]!.map((a) => a.detail.transition).sort()).toEqual(["failed", "recovered"]);
    expect(fresh[3]!).toHaveLength(2);
    // The alerts the racing polls reported add up to what is stored: no poll counted one twice.
    const deploymentsReported = [...r1, ...r2].filter((r) => r.source.includes(sources[0]!.id) || r.source.includes(sources[1]!.id)).reduce((n, r) => n + r.alerts, 0);
    expect(deploymentsReported).toBe(4);
    const clusterReported = [...r1, ...r2].filter((r) => r.source.includes(sources[3]!.id)).reduce((n, r) => n + r.alerts, 0);
    expect(clusterReported).toBe(2);
    sim.scenario.setWebhookTarget(sources[2]!.id, { status: 200 });
  }, 90_000); // 40 concurrent reads on two cores: slow under load, never wrong
});
