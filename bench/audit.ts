/**
 * Audit query latency: p50/p95 of each filter (and a few combinations) over 100,000 stored items (or BENCH_AUDIT_ITEMS). The
 * items are written straight with BatchWriteItem, in the shapes the store writes (the same builders:
 * recordItem, newAlertItem, the execution's audit row), not through the pipeline: that would take an
 * hour on DynamoDB Local.
 */
import { DeleteTableCommand } from "@aws-sdk/client-dynamodb";
import { BatchWriteCommand, DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { randomUUID } from "node:crypto";
import type { LookoutEventDetail, Transition } from "../lib/model/event.js";
import { severityOf } from "../lib/model/event.js";
import { AuditTrail } from "../lib/audit/trail.js";
import { DynamoAuditItems } from "../lib/store/audit-store.js";
import { executionRow } from "../lib/model/audit-row.js";
import { auditAttributes } from "../lib/model/audit-index.js";
import { parseAuditQuery } from "../lib/audit/parse.js";
import { TRANSITIONS } from "../lib/audit/model.js";
import { keys, recordItem, TTL_ATTRIBUTE } from "../lib/model/items.js";
import { newAlertItem } from "../lib/alerts/outbox-item.js";
import { dynamo, percentile, report, rng, section, tableBytes } from "./support.js";
import { beforeLeanEntries } from "../test/support/earlier-formats.js";
import { ensureTable, INDEXES } from "../lib/store/table.js";
import { routineWrite } from "../lib/store/routine-batches.js";
import type { RecordItem } from "../lib/model/ingest-store.js";

/**
 * 100,000 items, the size the audit trail is specified at: about 90 s to load on a fresh DynamoDB Local
 * here, far longer on one already loaded by other work. BENCH_AUDIT_ITEMS sets another size.
 */
const TOTAL = Number(process.env.BENCH_AUDIT_ITEMS ?? 100_000);
const DAYS = 30;
const RUNS = 25;
const END = Date.parse("2026-03-31T00:00:00Z");

const uuid = (r: ReturnType<typeof rng>) => `${r.hex(8)}-${r.hex(4)}-4${r.hex(3)}-8${r.hex(3)}-${r.hex(12)}`;

/** 1 organization, 4 projects × 3 environments, 200 services, 20 clusters, 10 webhooks, 40 people. */
export function world(r: ReturnType<typeof rng>) {
  const org = uuid(r);
  const projects = Array.from({ length: 4 }, (_, i) => ({ id: uuid(r), name: `project-${i}` }));
  const envs = projects.flatMap((p) => ["production", "staging", "preview"].map((name) => ({ id: uuid(r), name, type: name.toUpperCase(), project: p })));
  const services = Array.from({ length: 200 }, (_, i) => ({ id: uuid(r), name: `svc-${i}`, type: "APPLICATION", env: r.pick(envs) }));
  const clusters = Array.from({ length: 20 }, () => uuid(r));
  const webhooks = Array.from({ length: 10 }, () => uuid(r));
  const actors = Array.from({ length: 40 }, (_, i) => `person-${i}@example.com`);
  return { org, projects, envs, services, clusters, webhooks, actors };
}

type World = ReturnType<typeof world>;

export function makeItem(i: number, w: World, r: ReturnType<typeof rng>, expires: number): Record<string, unknown> {
  const at = new Date(END - Math.floor(r.next() * DAYS * 86_400_000)).toISOString();
  const svc = r.pick(w.services);
  const u = r.next();
  if (u < 0.55) {
    const failed = r.next() < 0.03;
    return { ...recordItem({
      record_kind: "cluster_log", id: `c${i}`, organization_id: w.org, cluster_id: r.pick(w.clusters), timestamp: at,
      type: failed ? "error" : r.pick(["info", "info", "warning"]), step: r.pick(["Upgrade", "Upgraded", "Create"]), failed,
      message: "Applying helm chart ingress-nginx".padEnd(120, "."),
    } as never, at, at), [TTL_ATTRIBUTE]: expires };
  }
  if (u < 0.8) {
    const code = r.next() < 0.05 ? 503 : 200;
    return { ...recordItem({
      record_kind: "webhook_delivery", id: randomUUID(), organization_id: w.org, webhook_id: r.pick(w.webhooks), created_at: at,
      delivery_kind: "STANDARD", matched_event: "DEPLOYMENT_SUCCESSFUL", target_host: "hooks.example.com", status_code: code, failed: code !== 200,
      services: [{ id: svc.id, name: svc.name, type: "APPLICATION", project: svc.env.project, environment: { id: svc.env.id, name: svc.env.name, type: svc.env.type } }],
      request: { payload: { id: svc.env.id, current_status: "DEPLOYED", applications: [{ id: svc.id, name: svc.name }] } },
    } as never, at, at), [TTL_ATTRIBUTE]: expires };
  }
  const commit = { id: r.hex(40), message: "Change something", author: "Dev" };
  const actor = r.pick(w.actors);
  if (u < 0.92) {
    const status = r.pick(["DEPLOYED", "DEPLOYED", "DEPLOYED", "DEPLOYMENT_ERROR", "BUILD_ERROR", "CANCELED", "BUILDING"]);
    const obs = {
      record_kind: "deployment" as const, organization_id: w.org, application_id: svc.id, service_id: svc.id, service_name: svc.name,
      execution_id: randomUUID(), execution_id_derived: false, status, created_at: at, triggered_by: actor, origin: "GIT",
      // The report's times (docs/report.md): the commit an hour or so before, the end 2 minutes after the start.
      updated_at: new Date(Date.parse(at) + 120_000).toISOString(),
      commit: { id: commit.id, message: commit.message, author: commit.author, created_at: new Date(Date.parse(at) - (5 + Math.floor(r.next() * 235)) * 60_000).toISOString() },
    };
    const key = keys.execution(svc.id, obs.execution_id);
    return {
      ...key, item_type: "execution", version: 1, [TTL_ATTRIBUTE]: expires,
      state: { status, version: 1, first_seen_at: at, first_seen_status: status, observation: obs, history: [{ status, observed_at: at }] },
      ...auditAttributes(executionRow(obs, { name: svc.name, project: svc.env.project, environment: svc.env }, at), key.pk),
    };
  }
  const { transition, kind } = r.pick(TRANSITIONS.filter((t) => t.kind !== "health" || r.next() < 0.2));
  const detail: LookoutEventDetail = {
    version: 1, id: `a${i}`, kind, transition: transition as Transition, severity: severityOf(kind, transition),
    organization: { id: w.org },
    ...(kind === "deployment" || kind === "webhook_delivery"
      ? { project: svc.env.project, environment: { id: svc.env.id, name: svc.env.name }, service: { id: svc.id, name: svc.name } }
      : {}),
    ...(kind === "cluster_log" ? { cluster: { id: r.pick(w.clusters) } } : {}),
    ...(kind === "webhook_delivery" ? { webhook: { id: r.pick(w.webhooks) }, http: { status_code: 503 } } : {}),
    ...(kind === "deployment" ? { deployment: { execution_id: randomUUID(), triggered_by: actor, commit } } : {}),
    // A deployment incident opened up to a few hours before a close (the report's time to restore).
    ...(transition === "recovered"
      ? { incident_id: `opened-${i}`, incident: { subject: `deployment:${svc.id}`, opened_at: new Date(Date.parse(at) - (5 + Math.floor(r.next() * 295)) * 60_000).toISOString() } }
      : transition === "failed" ? { incident_id: `a${i}`, incident: { subject: `deployment:${svc.id}`, opened_at: at } } : {}),
    status: kind === "deployment" ? "DEPLOYMENT_ERROR" : kind === "webhook_delivery" ? "503" : "ERROR",
    occurred_at: at, observed_at: at, summary: `${svc.name} ${transition}`,
  };
  return newAlertItem(detail, at, expires, r.next() < 0.1 ? { reason: "backfill", detail: "older than the backfill window" } : undefined) as unknown as Record<string, unknown>;
}

/** A fresh table on a DynamoDB Local of its own, and the seeded world and generator its items come from. */
export async function seededWorld() {
  const { client, tableName } = await dynamo();
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  const r = rng(42);
  return { client, tableName, doc, r, w: world(r), expires: Math.floor((END + 400 * 86_400_000) / 1000) };
}

export async function benchAuditQueries() {
  section({
    id: "audit",
    title: "Audit query latency",
    method:
      `${TOTAL.toLocaleString("en")} items spread over ${DAYS} days (55 % cluster log records, 25 % webhook deliveries, 12 % deployment executions, 8 % alerts; ` +
      "1 organization, 200 services, 20 clusters, 10 webhooks, 40 people; a seeded PRNG, so the same items every run) are written straight into a fresh " +
      `table with BatchWriteItem, in the shapes the store writes (recordItem, newAlertItem, the execution's audit row), with its ${INDEXES.length} audit indexes (the organization filtered, not indexed). ` +
      "Each filter of `lookout audit` / the audit API is then asked for its first page of 50 through AuditTrail.query (Query on an index, never Scan), " +
      `${RUNS} times one after another; the figures are the p50 / p95 of the wall time of each call from Node, DynamoDB Local on the same machine. ` +
      "The section runs on a DynamoDB Local of its own; `BENCH_AUDIT_ITEMS=N` sets another size.",
  });
  const { client, tableName, doc, r, w, expires } = await seededWorld();

  // The same items twice: as before (every record whole, each index entry repeating its row), and as
  // now (index entries lean, rows read from the items; records that raised nothing in batches written per
  // source and hour, as batches spanning polls would be; a poll's own batches are smaller (docs/audit.md),
  // so queries read more of them than here).
  const batchedTable = `${tableName}-batched`;
  await ensureTable(client, batchedTable);
  const t0 = performance.now();
  let writes: Promise<unknown>[] = [];
  const sample: Array<Record<string, unknown>> = [];
  const routine = new Map<string, RecordItem[]>();
  const flush = async () => void (writes.length >= 32 && (await Promise.all(writes.splice(0))));
  for (let i = 0; i < TOTAL; i += 25) {
    const chunk = Array.from({ length: Math.min(25, TOTAL - i) }, (_, j) => makeItem(i + j, w, r, expires));
    if (i % 100 === 0) sample.push(chunk[0]!);
    writes.push(writeBatch(doc, tableName, chunk.map(beforeLeanEntries)));
    const whole = setRoutineAside(chunk, routine);
    if (whole.length) writes.push(writeBatch(doc, batchedTable, whole));
    await flush();
  }
  const loadS = (performance.now() - t0) / 1000;
  await writeRoutine(doc, batchedTable, routine, expires);
  await Promise.all(writes);
  writes = [];
  report({ name: `audit: ${TOTAL.toLocaleString("en")} items stored`, value: `${loadS.toFixed(0)} s`, method: `BatchWriteItem of the stored shapes (not the pipeline), 25 a batch, 32 in flight, ${INDEXES.length} audit indexes maintained` });

  const audit = new AuditTrail(new DynamoAuditItems({ client, tableName }));
  const batched = new AuditTrail(new DynamoAuditItems({ client, tableName: batchedTable }));
  const exec = sample.find((s) => s.item_type === "execution")!.row as { service: { id: string }; actor: string; commit: string };
  const svc = exec.service.id;
  const env = w.services.find((s) => s.id === svc)!.env;
  const now = new Date(END);
  const queries: Array<[string, Record<string, string>]> = [
    ["no filter (all 13 'what' partitions merged)", {}],
    ["organization", { organization: w.org }],
    ["project", { project: env.project.id }],
    ["environment", { environment: env.id }],
    ["service", { service: svc }],
    ["cluster", { cluster: w.clusters[0]! }],
    ["webhook", { webhook: w.webhooks[0]! }],
    ["kind (deployment: 5 partitions merged)", { kind: "deployment" }],
    ["status", { status: "DEPLOYMENT_ERROR" }],
    ["transition", { transition: "failed" }],
    ["severity (error: 3 partitions merged)", { severity: "error" }],
    ["actor", { actor: exec.actor }],
    ["commit (short id)", { commit: exec.commit.slice(0, 7) }],
    ["type (alert: 10 partitions merged)", { type: "alert" }],
    ["since 7d", { since: "7d" }],
    ["from/to (one day)", { from: "2026-03-10T00:00:00Z", to: "2026-03-11T00:00:00Z" }],
    ["service + since 7d", { service: svc, since: "7d" }],
    ["environment + transition", { environment: env.id, transition: "failed" }],
    ["kind + status (filtered)", { kind: "cluster_log", status: "ERROR" }],
    ["organization + severity + from/to", { organization: w.org, severity: "error", from: "2026-03-01T00:00:00Z", to: "2026-03-15T00:00:00Z" }],
    ["webhook + status 503 (filter keeps 5%)", { webhook: w.webhooks[0]!, status: "503" }],
  ];
  let worst = { name: "", ratio: 0 };
  for (const [name, raw] of queries) {
    const times = { whole: [] as number[], batched: [] as number[] };
    const ids = { whole: "", batched: "" };
    let rows = 0;
    for (let run = 0; run < RUNS; run++) {
      // In turn, so that both see the same machine.
      for (const [which, store] of [["whole", audit], ["batched", batched]] as const) {
        const t = performance.now();
        const page = await store.query(parseAuditQuery({ ...raw, limit: "50" }, now), { deliveries: false });
        times[which].push(performance.now() - t);
        rows = page.rows.length;
        ids[which] = page.rows.map((row) => row.id).join();
      }
    }
    if (ids.whole !== ids.batched) throw new Error(`audit bench: ${name}: the table as now answered other rows than the one as before`);
    const ratio = percentile(times.batched, 95) / Math.max(0.1, percentile(times.whole, 95));
    if (ratio > worst.ratio) worst = { name, ratio };
    report({
      name: `audit query p50 / p95: ${name}`,
      value: `${percentile(times.whole, 50).toFixed(1)} / ${percentile(times.whole, 95).toFixed(1)} → ${percentile(times.batched, 50).toFixed(1)} / ${percentile(times.batched, 95).toFixed(1)}`,
      unit: `ms (${rows} rows)`,
      method: `first page of 50, ${RUNS} runs each, in turn, over ${TOTAL.toLocaleString("en")} items in DynamoDB Local: before (every record whole, rows in the index entries) → now (lean index entries, records that raised nothing in batches; the same rows)`,
    });
  }
  report({
    name: "audit query p95, now over before: the largest ratio", value: `${worst.ratio.toFixed(2)}×`, unit: "",
    method: `${worst.name}; target within 2×: ${worst.ratio <= 2 ? "met" : "not met"}`,
  });

  // Deep paging: the fifth page through cursors, and an alert page with its deliveries joined.
  const paging = async (store: AuditTrail) => {
    const times: number[] = [];
    for (let run = 0; run < 10; run++) {
      let cursor: string | undefined;
      const t = performance.now();
      for (let p = 0; p < 5; p++) {
        const page = await store.query(parseAuditQuery({ organization: w.org, limit: "50", ...(cursor ? { cursor } : {}) }, now), { deliveries: false });
        cursor = page.cursor;
      }
      times.push((performance.now() - t) / 5);
    }
    return `${percentile(times, 50).toFixed(1)} / ${percentile(times, 95).toFixed(1)}`;
  };
  report({
    name: "audit query p50 / p95: organization, pages 1-5 by cursor (per page)", value: `${await paging(audit)} → ${await paging(batched)}`, unit: "ms",
    method: "5 pages of 50 through next cursors, 10 runs: before → now",
  });
  const [before, after] = [await tableBytes(client, tableName), await tableBytes(client, batchedTable)];
  const gb = (b: number) => `${(b / 1024 ** 3).toFixed(3)} GB`;
  report({
    name: "audit: stored, items + index entries", value: `${gb(before.items)} + ${gb(before.entries)} → ${gb(after.items)} + ${gb(after.entries)}`, unit: "",
    method: `the same ${TOTAL.toLocaleString("en")} items, before → now, scanned: DynamoDB's billed sizes with 100 bytes of overhead each, an index entry its keys and projected attributes`,
  });
  const joined: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const t = performance.now();
    await audit.query(parseAuditQuery({ transition: "failed", limit: "50" }, now));
    joined.push(performance.now() - t);
  }
  report({ name: "audit query p50 / p95: transition, with who was told joined", value: `${percentile(joined, 50).toFixed(1)} / ${percentile(joined, 95).toFixed(1)}`, unit: "ms", method: "first page of 50 alerts + one Query of their deliveries each (8 in flight)" });
  // DynamoDB Local keeps tables in memory: 100,000 items would weigh on the sections after this one.
  await client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
  await client.send(new DeleteTableCommand({ TableName: batchedTable })).catch(() => undefined);
  client.destroy();
}

/**
 * The items of a chunk stored whole as they are now; the records that raised nothing are set aside in
 * `routine`, by source and hour, for writeRoutine.
 */
export function setRoutineAside(chunk: Array<Record<string, unknown>>, routine: Map<string, RecordItem[]>): Array<Record<string, unknown>> {
  const whole: Array<Record<string, unknown>> = [];
  for (const item of chunk) {
    const rec = item.record as { failed?: boolean; cluster_id?: string; webhook_id?: string } | undefined;
    if (item.item_type !== "record" || rec?.failed !== false) whole.push(item);
    else {
      const key = `${rec.cluster_id ?? rec.webhook_id}#${String(item.ix_at).slice(0, 13)}`;
      routine.set(key, [...(routine.get(key) ?? []), item as RecordItem]);
    }
  }
  return whole;
}

/** The records set aside, in batches per source and hour (as batches spanning polls would be) with their pointers. */
export async function writeRoutine(doc: DynamoDBDocumentClient, table: string, routine: Map<string, RecordItem[]>, expires: number): Promise<void> {
  const writes: Promise<unknown>[] = [];
  for (const records of routine.values()) {
    const { batches, pointers } = routineWrite(records, expires);
    const items = [...batches.map((b) => b.item), ...pointers];
    for (let i = 0; i < items.length; i += 25) {
      writes.push(writeBatch(doc, table, items.slice(i, i + 25)));
      if (writes.length >= 32) await Promise.all(writes.splice(0));
    }
  }
  await Promise.all(writes);
}

export async function writeBatch(doc: DynamoDBDocumentClient, table: string, items: Array<Record<string, unknown>>): Promise<void> {
  let request: Record<string, Array<{ PutRequest: { Item: Record<string, unknown> } }>> | undefined = {
    [table]: items.map((Item) => ({ PutRequest: { Item } })),
  };
  for (let attempt = 0; request && Object.keys(request).length; attempt++) {
    if (attempt > 10) throw new Error("BatchWriteItem kept leaving items unprocessed");
    const res = await doc.send(new BatchWriteCommand({ RequestItems: request }));
    request = res.UnprocessedItems as typeof request;
  }
}
