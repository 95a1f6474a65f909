/**
 * No record can block a source: hostile sizes and shapes from the platform (a plain node:http server
 * serving real simulator samples, mutated) through the poller into DynamoDB Local. A record is stored
 * clipped or quarantined; the records beside it are stored and alerted once; the cursor is saved and
 * the next poll succeeds (docs/platform.md, "Field sizes"; docs/audit.md, "Quarantine").
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DynamoDBDocumentClient, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { startSimulator } from "../../../local/simulator/index.js";
import { createPlatformClient } from "../../../lib/platform/client.js";
import { DynamoIngestStore } from "../../../lib/store/ingest-store.js";
import { pollSource, type PollDeps } from "../../../lib/poll/poll.js";
import type { Log } from "../../../lib/model/log.js";
import type { SourceRef } from "../../../lib/model/source.js";
import { CLIP_MARKER } from "../../../lib/model/bounds.js";
import type { AlertItem } from "../../../lib/model/alert-item.js";
import { keys } from "../../../lib/model/items.js";
import { AuditTrail } from "../../../lib/audit/trail.js";
import { DynamoAuditItems } from "../../../lib/store/audit-store.js";
import { parseAuditQuery } from "../../../lib/audit/parse.js";
import { freshTable, localDynamoClient, scanTable, TEST_RETENTION_MS } from "../../support/dynamodb.js";
import { expandRecords } from "../../../lib/store/routine-batches.js";
import { ProvisionedThroughputExceededException } from "@aws-sdk/client-dynamodb";

type Json = Record<string, unknown>;
const ORG = "0b7c7f4e-5a55-4d0e-9d0a-000000000001";
const NOW = Date.parse("2026-11-23T10:00:00Z");

/** The platform: lists by path, exactly as set. */
const lists = new Map<string, Json[]>();
let platform: Server;
let baseUrl: string;
let samples: { deployment: Json; webhook: Json };
let doc: DynamoDBDocumentClient;
let tableName: string;
let deps: PollDeps;
let audit: AuditTrail;
const errors: Array<Record<string, unknown>> = [];
const log: Log = { info() {}, warn() {}, error: (_m, extra) => void errors.push(extra ?? {}) };

beforeAll(async () => {
  // Real items to start from: what the simulator serves.
  const sim = await startSimulator({ seed: 11, size: { applications: 1, clusters: 1, webhooks: 1 } });
  try {
    const app = sim.ids.applicationIds[0]!;
    sim.scenario.setWebhookTarget(sim.ids.webhookIds[0]!, { status: 500, body: "boom" });
    sim.scenario.deploy(app, { outcome: "DEPLOYMENT_ERROR", commit: { git_commit_id: "abcdef123456", message: "m", author_name: "A" } });
    sim.clock.advance(10 * 60_000);
    const get = async (path: string) => {
      const res = await fetch(sim.url + path, { headers: { authorization: `Token ${sim.apiToken}` } });
      return ((await res.json()) as { results: Json[] }).results;
    };
    const deployments = await get(`/application/${app}/deploymentHistoryV2?pageSize=20`);
    const webhook = await get(`/organization/${sim.ids.organizationId}/webhook/${sim.ids.webhookIds[0]}/event`);
    samples = { deployment: deployments[0]!, webhook: webhook.find((w) => (w.request as Json | undefined)?.payload) ?? webhook[0]! };
  } finally {
    await sim.close();
  }
  platform = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0]!;
    const results = lists.get(path);
    res.writeHead(results ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(results ? { results } : { message: "not found" }));
  });
  await new Promise<void>((r) => platform.listen(0, "127.0.0.1", r));
  baseUrl = `http://127.0.0.1:${(platform.address() as AddressInfo).port}`;

  const t = await freshTable("quarantine-ingest");
  tableName = t.tableName;
  doc = DynamoDBDocumentClient.from(t.client);
  const now = () => new Date(NOW);
  deps = {
    client: createPlatformClient({ baseUrl, token: "t0k3n", auth: "token", sleep: async () => {} }),
    store: new DynamoIngestStore({ client: t.client, tableName, retentionMs: TEST_RETENTION_MS, now }),
    now, backfillWindowMs: 15 * 60_000, log,
  };
  audit = new AuditTrail(new DynamoAuditItems({ client: t.client, tableName }));
});
afterAll(() => new Promise<void>((r) => platform.close(() => r())));

/** Every item, records kept in batches as their record items. */
const scanAll = async () => expandRecords(await scanTable(doc, tableName));
const alerts = async () => (await scanAll()).filter((i) => i.item_type === "alert") as unknown as AlertItem[];
const at = (minutesAgo: number) => new Date(NOW - minutesAgo * 60_000).toISOString();

function historyItem(appId: string, status: string, minutesAgo: number, patch: (i: Json) => void = () => {}): Json {
  const item = structuredClone(samples.deployment) as Json & { identifier: Json; auditing_data: Json; details: Json };
  item.identifier = { ...item.identifier, service_id: appId, execution_id: `exec-${randomUUID()}` };
  item.status = status;
  item.auditing_data = { ...item.auditing_data, created_at: at(minutesAgo), updated_at: at(minutesAgo) };
  patch(item);
  return item;
}

const HOSTILE: Array<[string, (i: Json & Record<string, any>, v: string) => void]> = [
  ["auditing_data.triggered_by", (i, v) => void (i.auditing_data.triggered_by = v)],
  ["identifier.name", (i, v) => void (i.identifier.name = v)],
  ["status", (i, v) => void (i.status = `DEPLOYMENT_ERROR${v}`)],
  ["total_duration", (i, v) => void (i.total_duration = v)],
  ["details.commit.tag", (i, v) => void (i.details = { ...i.details, commit: { ...i.details?.commit, tag: v } })],
];

describe("a deployment history item with a field of hostile length", () => {
  it.each(HOSTILE.flatMap(([field, set]) => [3_000, 300_000].map((n) => [field, n, set] as const)))(
    "%s of %i characters: the failure beside it is alerted once, the next poll succeeds, the cursor is saved",
    async (_field, n, set) => {
      const appId = randomUUID();
      const source: SourceRef = { kind: "deployment", organizationId: ORG, id: appId };
      const path = `/application/${appId}/deploymentHistoryV2`;
      lists.set(path, [historyItem(appId, "DEPLOYED", 120)]);
      expect((await pollSource({ source }, deps)).ok).toBe(true); // first sight: history

      const hostile = historyItem(appId, "DEPLOYED", 3, (i) => set(i, "é".repeat(n / 2) + "x".repeat(n / 2)));
      const genuine = historyItem(appId, "DEPLOYMENT_ERROR", 2);
      lists.set(path, [genuine, hostile, ...lists.get(path)!]);
      const r1 = await pollSource({ source }, deps);
      expect(r1.error).toBeUndefined();
      expect(r1.ok).toBe(true);
      const r2 = await pollSource({ source }, deps);
      expect(r2.ok).toBe(true);
      expect(r2.newRecords).toBe(0);

      const mine = (await alerts()).filter((a) => a.detail.service?.id === appId);
      const genuineId = (genuine.identifier as Json).execution_id;
      const forGenuine = mine.filter((a) => a.detail.deployment?.execution_id === genuineId);
      expect(forGenuine).toHaveLength(1);
      expect(forGenuine[0]!.state).toBe("pending");
      // The hostile one was stored (clipped) or quarantined; either way within bounds.
      const hostileId = (hostile.identifier as Json).execution_id as string;
      const stored = (await scanAll()).filter((i) => JSON.stringify(i).includes(hostileId));
      expect(stored.length).toBeGreaterThan(0);
      for (const i of stored) expect(Buffer.byteLength(JSON.stringify(i))).toBeLessThan(200 * 1024);
      const exec = stored.find((i) => i.item_type === "execution");
      if (exec && n > 1024) expect(JSON.stringify(exec)).toContain(CLIP_MARKER.slice(0, -1)); // an id or a status: with a hash inside it
      const cursor = await deps.store.getCursor(r1.source);
      expect(cursor!.deployments!.map((d) => d.execution_id)).toEqual(expect.arrayContaining([genuineId, hostileId]));
    },
    60_000,
  );

  it("a 3,000-character service id: hashed into the keys, kept whole as an attribute, found by explain", async () => {
    const appId = randomUUID();
    const longId = `svc-${"s".repeat(2_996)}`;
    const source: SourceRef = { kind: "deployment", organizationId: ORG, id: appId };
    const path = `/application/${appId}/deploymentHistoryV2`;
    lists.set(path, [historyItem(appId, "DEPLOYED", 120)]);
    await pollSource({ source }, deps);
    const failing = historyItem(appId, "DEPLOYMENT_ERROR", 2, (i) => void ((i.identifier as Json).service_id = longId));
    lists.set(path, [failing, ...lists.get(path)!]);
    expect((await pollSource({ source }, deps)).ok).toBe(true);
    expect((await pollSource({ source }, deps)).ok).toBe(true);
    const mine = (await alerts()).filter((a) => a.detail.service?.id === longId);
    expect(mine).toHaveLength(1);
    const exec = await doc.send(new QueryCommand({
      TableName: tableName, KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": keys.execution(longId, (failing.identifier as Json).execution_id as string).pk },
    }));
    expect(exec.Items).toHaveLength(1);
    expect(Buffer.byteLength(exec.Items![0]!.pk as string)).toBeLessThan(400);
    expect((exec.Items![0]!.state as { observation: { service_id: string } }).observation.service_id).toBe(longId);
    const explained = await audit.explain(`${longId}:${(failing.identifier as Json).execution_id}`);
    expect(explained?.subject?.type).toBe("execution");
    expect(explained?.alerts).toHaveLength(1);
  });
});

function delivery(webhookId: string, i: number, status: number, patch: (d: Json & Record<string, any>) => void = () => {}): Json {
  const d = structuredClone(samples.webhook) as Json & Record<string, any>;
  d.id = randomUUID();
  d.created_at = at(5 - i / 10);
  d.target_response_status_code = status;
  patch(d);
  return d;
}

describe("webhook deliveries", () => {
  it("item 2 of 30 names a 3,000-character service id: the other 29 are stored and their failures alerted", async () => {
    const webhookId = randomUUID();
    const source: SourceRef = { kind: "webhook", organizationId: ORG, id: webhookId };
    const path = `/organization/${ORG}/webhook/${webhookId}/event`;
    lists.set(path, []);
    await pollSource({ source }, deps); // first sight
    const longId = "a".repeat(3_000);
    const list = Array.from({ length: 30 }, (_, i) =>
      delivery(webhookId, i, i % 3 === 0 ? 500 : 200, (d) => {
        if (i !== 1) return;
        d.request = { ...(d.request ?? {}), payload: { ...(d.request?.payload ?? {}), applications: [{ id: longId, name: "n".repeat(300_000) }] } };
      }),
    );
    lists.set(path, list);
    const r = await pollSource({ source }, deps);
    expect(r.error).toBeUndefined();
    expect(r.newRecords + (r.quarantined ?? 0)).toBe(30);
    const items = await scanAll();
    const records = items.filter((i) => i.item_type === "record" && (i.record as Json).webhook_id === webhookId);
    for (const d of list.filter((_, i) => i !== 1)) expect(records.some((rec) => (rec.record as Json).id === d.id)).toBe(true);
    const failedIds = new Set(list.filter((d) => d.target_response_status_code === 500).map((d) => d.id));
    const raised = (await alerts()).filter((a) => a.detail.webhook?.id === webhookId);
    expect(raised.filter((a) => a.detail.transition === "delivery_failed")).toHaveLength(failedIds.size);
    // Each failure's incident is closed by the 2xx after it (docs/events.md, "Incidents").
    expect(raised.filter((a) => a.detail.transition === "target_recovered")).toHaveLength(failedIds.size);
    const cursor = await deps.store.getCursor(r.source);
    expect(cursor!.seen).toHaveLength(30);
    expect((await pollSource({ source }, deps)).newRecords).toBe(0);
  });

  it("a delivery DynamoDB refuses whatever is clipped (nesting too deep) is quarantined once, with a health event", async () => {
    const webhookId = randomUUID();
    const source: SourceRef = { kind: "webhook", organizationId: ORG, id: webhookId };
    const path = `/organization/${ORG}/webhook/${webhookId}/event`;
    lists.set(path, []);
    await pollSource({ source }, deps);
    let deep: unknown = "bottom";
    for (let i = 0; i < 31; i++) deep = { n: deep };
    const list = [
      delivery(webhookId, 0, 500),
      delivery(webhookId, 1, 500, (d) => void (d.request = { ...(d.request ?? {}), payload: { deep, token: "s3cr3t-value" } })),
      delivery(webhookId, 2, 502),
    ];
    lists.set(path, list);
    errors.length = 0;
    const r = await pollSource({ source }, deps);
    expect(r.error).toBeUndefined();
    expect(r.quarantined).toBe(1);
    expect(r.newRecords).toBe(2);
    expect(JSON.stringify(errors)).not.toContain("s3cr3t-value");
    // The next poll reads it again and does not fail on it, nor quarantine it twice.
    const again = await pollSource({ source }, deps);
    expect(again.ok).toBe(true);
    expect(again.quarantined).toBeUndefined();

    const items = await scanAll();
    const quar = items.filter((i) => i.item_type === "quarantine" && i.subject_id === list[1]!.id);
    expect(quar).toHaveLength(1);
    expect(quar[0]).toMatchObject({ stage: "ingest", kind: "webhook_delivery", source: r.source });
    expect(String(quar[0]!.reason)).toMatch(/ValidationException|nesting/i);
    expect(String(quar[0]!.excerpt)).not.toContain("s3cr3t-value");
    expect(Buffer.byteLength(String(quar[0]!.excerpt))).toBeLessThanOrEqual(4 * 1024);
    const health = (await alerts()).filter((a) => a.detail.transition === "quarantined" && a.detail.health?.subject?.includes(String(list[1]!.id)));
    expect(health).toHaveLength(1);
    expect(health[0]!.state).toBe("pending");
    expect(health[0]!.detail).toMatchObject({ kind: "health", severity: "error", health: { check: "quarantined" } });
    // The failure the refused record carried is raised all the same, without it.
    const failures = (await alerts()).filter((a) => a.detail.webhook?.id === webhookId);
    expect(failures.map((a) => a.detail.record?.id ?? a.detail.http?.delivery_id).sort()).toEqual([list[0]!.id, list[1]!.id, list[2]!.id].map(String).sort());

    // Shown by the audit trail (through an index) and by explain.
    const page = await audit.query(parseAuditQuery({ type: "quarantine", webhook: webhookId }, new Date(NOW)));
    expect(page.rows.map((row) => row.id)).toEqual([list[1]!.id]);
    expect(page.rows[0]).toMatchObject({ type: "quarantine", stage: "ingest", kind: "webhook_delivery" });
    const byType = await audit.query(parseAuditQuery({ type: "quarantine" }, new Date(NOW)));
    expect(byType.plan.index).toBe("audit-what");
    expect(byType.rows.some((row) => row.id === list[1]!.id)).toBe(true);
    const explained = await audit.explain(String(list[1]!.id));
    expect(explained?.quarantined?.[0]).toMatchObject({ stage: "ingest", kind: "webhook_delivery" });
    expect(explained?.alerts.map((a) => a.id)).toEqual([health[0]!.alert_id]);
  });
});

describe("an incident whose closing record DynamoDB refuses", () => {
  it("still closes: the recovery is raised without its record, which is quarantined", async () => {
    const webhookId = randomUUID();
    const source: SourceRef = { kind: "webhook", organizationId: ORG, id: webhookId };
    const path = `/organization/${ORG}/webhook/${webhookId}/event`;
    lists.set(path, []);
    await pollSource({ source }, deps);
    let deep: unknown = "bottom";
    for (let i = 0; i < 31; i++) deep = { n: deep };
    const list = [
      delivery(webhookId, 0, 503),
      delivery(webhookId, 1, 200, (d) => void (d.request = { ...(d.request ?? {}), payload: { deep } })),
    ];
    lists.set(path, list);
    const r = await pollSource({ source }, deps);
    expect(r).toMatchObject({ ok: true, quarantined: 1, newRecords: 1, alerts: 2 });
    const mine = (await alerts()).filter((a) => a.detail.webhook?.id === webhookId);
    expect(mine.map((a) => a.detail.transition).sort()).toEqual(["delivery_failed", "target_recovered"]);
    const close = mine.find((a) => a.detail.transition === "target_recovered")!;
    expect(close.detail.incident_id).toBe(mine.find((a) => a.detail.transition === "delivery_failed")!.detail.id);
    expect(close.state).toBe("pending"); // published: the incident's root turns resolved
    expect((await scanAll()).filter((i) => i.item_type === "quarantine" && i.subject_id === list[1]!.id)).toHaveLength(1);
    // Read again, the refused record raises nothing twice.
    expect(await pollSource({ source }, deps)).toMatchObject({ ok: true });
    expect((await alerts()).filter((a) => a.detail.webhook?.id === webhookId)).toHaveLength(2);
  });
});

describe("webhook deliveries without an alert, stored in batches", () => {
  it("a successful delivery nested past DynamoDB's 32 levels is stored whole in its batch (compressed): nothing to quarantine", async () => {
    const webhookId = randomUUID();
    const source: SourceRef = { kind: "webhook", organizationId: ORG, id: webhookId };
    const path = `/organization/${ORG}/webhook/${webhookId}/event`;
    lists.set(path, []);
    await pollSource({ source }, deps);
    let deep: unknown = "bottom";
    for (let i = 0; i < 31; i++) deep = { n: deep };
    const list = Array.from({ length: 40 }, (_, i) =>
      delivery(webhookId, i, 200, i === 7 ? (d) => void (d.request = { ...(d.request ?? {}), payload: { deep } }) : undefined));
    lists.set(path, list);
    const r = await pollSource({ source }, deps);
    expect(r).toMatchObject({ ok: true, newRecords: 40, alerts: 0 });
    expect(r.quarantined ?? 0).toBe(0);
    const items = await scanAll();
    const ids = new Set(list.map((d) => String(d.id)));
    expect(items.filter((i) => i.item_type === "record" && ids.has(String((i.record as Json).id)))).toHaveLength(40);
    const stored = items.find((i) => i.item_type === "record" && (i.record as Json).id === list[7]!.id)!;
    expect(JSON.stringify(stored.record)).toContain(`"deep":${"{\"n\":".repeat(31)}`);
    expect(items.filter((i) => i.item_type === "quarantine" && ids.has(String(i.subject_id)))).toEqual([]);
    expect((await deps.store.getCursor(r.source))!.seen).toHaveLength(40);
    expect(await pollSource({ source }, deps)).toMatchObject({ ok: true, newRecords: 0 });
  });
});

/**
 * A webhook source seen once (empty), polled through a store whose writes naming `throttle.id` (only
 * `command`'s, when given) throw the real SDK exception: DynamoDB Local never throttles.
 */
async function throttledWebhook(command?: string) {
  const client = localDynamoClient();
  const throttle: { id?: string } = {};
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const named = throttle.id && JSON.stringify((args as { input?: unknown }).input ?? {}).includes(throttle.id);
      if (named && (!command || context.commandName === command)) {
        throw new ProvisionedThroughputExceededException({ message: "Rate of requests exceeds the allowed throughput.", $metadata: { httpStatusCode: 400 } });
      }
      return next(args);
    },
    { step: "initialize", name: "throttleNamed" },
  );
  const flakyDeps: PollDeps = { ...deps, store: new DynamoIngestStore({ client, tableName, retentionMs: TEST_RETENTION_MS, now: deps.now }) };
  const webhookId = randomUUID();
  const source: SourceRef = { kind: "webhook", organizationId: ORG, id: webhookId };
  const path = `/organization/${ORG}/webhook/${webhookId}/event`;
  lists.set(path, []);
  await pollSource({ source }, flakyDeps);
  return { client, throttle, flakyDeps, webhookId, source, path };
}

describe("a passing store error is not a reason to quarantine", () => {
  it("fails the poll after the other records were stored, keeps the cursor, and the next poll stores the rest", async () => {
    const { client, throttle, flakyDeps, webhookId, source, path } = await throttledWebhook();
    const list = Array.from({ length: 5 }, (_, i) => delivery(webhookId, i, 500));
    lists.set(path, list);
    throttle.id = String(list[2]!.id);
    const before = await flakyDeps.store.getCursor(`webhook:${ORG}/${webhookId}`);

    const r = await pollSource({ source }, flakyDeps);
    expect(r.ok).toBe(false);
    expect(r.quarantined).toBeUndefined();
    expect(r.newRecords).toBe(4); // the others were tried and stored
    expect(await flakyDeps.store.getCursor(r.source)).toEqual(before); // not moved past the one not stored
    expect((await scanAll()).filter((i) => i.item_type === "quarantine" && i.subject_id === String(list[2]!.id))).toEqual([]);

    throttle.id = undefined;
    const again = await pollSource({ source }, flakyDeps);
    expect(again.ok).toBe(true);
    expect(again.newRecords).toBe(1);
    expect((await alerts()).filter((a) => a.detail.webhook?.id === webhookId)).toHaveLength(5);
    expect((await flakyDeps.store.getCursor(r.source))!.seen).toHaveLength(5);
    client.destroy();
  });

  it("a throttled batch of successful deliveries fails the poll after the other batch was stored; the next poll writes them all again", async () => {
    const { client, throttle, flakyDeps, webhookId, source, path } = await throttledWebhook("BatchWriteItemCommand");
    const list = Array.from({ length: 30 }, (_, i) => delivery(webhookId, i, 200));
    lists.set(path, list);
    throttle.id = String(list[0]!.id);
    const before = await flakyDeps.store.getCursor(`webhook:${ORG}/${webhookId}`);

    const r = await pollSource({ source }, flakyDeps);
    expect(r).toMatchObject({ ok: false, newRecords: 5 }); // the batch of 25 with it refused, the other stored
    expect(r.quarantined).toBeUndefined();
    expect(await flakyDeps.store.getCursor(r.source)).toEqual(before);

    throttle.id = undefined;
    // A batch put cannot tell new from stored: the 5 stored already are written and counted again.
    expect(await pollSource({ source }, flakyDeps)).toMatchObject({ ok: true, newRecords: 30 });
    const ids = new Set(list.map((d) => String(d.id)));
    expect((await scanAll()).filter((i) => i.item_type === "record" && ids.has(String((i.record as Json).id)))).toHaveLength(30);
    expect((await flakyDeps.store.getCursor(r.source))!.seen).toHaveLength(30);
    client.destroy();
  });
});
