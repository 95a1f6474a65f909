/**
 * Records that raised nothing, kept in compressed batches (docs/audit.md, "Records that raised
 * nothing"), read through the audit trail on DynamoDB Local: every query and page answers exactly what
 * the records say, across batches that straddle a page's time bounds, beside records stored whole by
 * an earlier version, and a record written again in another batch is one row; `explain` finds each by id.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";
import { DynamoIngestStore } from "../../../lib/store/ingest-store.js";
import { AuditTrail } from "../../../lib/audit/trail.js";
import { DynamoAuditItems } from "../../../lib/store/audit-store.js";
import { parseAuditQuery } from "../../../lib/audit/parse.js";
import { recordItem, TTL_ATTRIBUTE } from "../../../lib/model/items.js";
import type { RecordItem } from "../../../lib/model/ingest-store.js";
import { expandRecords, routineWrite } from "../../../lib/store/routine-batches.js";
import { auditRowOf } from "../../../lib/model/audit-index.js";
import { freshTable, scanTable, TEST_RETENTION_MS } from "../../support/dynamodb.js";
import { batchBeforeLeanEntries, beforeLeanEntries } from "../../support/earlier-formats.js";

const ORG = randomUUID();
const CLUSTERS = [randomUUID(), randomUUID(), randomUUID()];
const START = Date.parse("2026-03-02T09:10:00.000Z");
const NOW = new Date("2026-03-02T13:00:00.000Z");

let doc: DynamoDBDocumentClient;
let audit: AuditTrail;
let store: DynamoIngestStore;
let oracleItems: Array<Record<string, unknown>>;
let written: RecordItem[];
let older: RecordItem;
/** Batched by the version before lean index entries: each record's whole row in the batch. */
let olderBatched: RecordItem[];

/** A routine cluster log line at `ms`: info or warning, on one of three clusters. */
function line(i: number, ms: number): RecordItem {
  const at = new Date(ms).toISOString();
  return recordItem({
    record_kind: "cluster_log", id: `line-${i}-${randomUUID()}`, organization_id: ORG, cluster_id: CLUSTERS[i % 3], timestamp: at,
    type: i % 5 === 0 ? "warning" : "info", step: "Upgrade", failed: false, message: `step ${i} of the upgrade`,
  } as never, at, at);
}

beforeAll(async () => {
  const t = await freshTable("routine-batches");
  doc = DynamoDBDocumentClient.from(t.client);
  audit = new AuditTrail(new DynamoAuditItems(t));
  store = new DynamoIngestStore({ ...t, retentionMs: TEST_RETENTION_MS, routineRetentionMs: 30 * 86_400_000, now: () => NOW });
  // 540 lines over three hours, written as polls would: in chunks, so batches of one hour and one
  // kind of line come from several writes and hold rows on both sides of a query's bounds.
  written = Array.from({ length: 540 }, (_, i) => line(i, START + i * 20_000 + (i % 7) * 1_000));
  for (let i = 0; i < written.length; i += 90) expect(await store.insertRecords(written.slice(i, i + 90))).toEqual([]);
  // Written again in another chunk (a poll retried after a crash): a stale copy stays in its first batch.
  expect(await store.insertRecords([written[45]!, written[46]!, line(9999, START + 3_000)])).toEqual([]);
  // Stored whole, with its index entries, by the version before batches.
  older = beforeLeanEntries(line(7777, START + 1_500_000));
  await doc.send(new PutCommand({ TableName: t.tableName, Item: { ...older, [TTL_ATTRIBUTE]: 1_900_000_000 } }));
  // Batched by the version before lean index entries.
  olderBatched = [8880, 8895, 8910].map((i) => line(i, START + 2_000_000 + i));
  const old = routineWrite(olderBatched, 1_900_000_000);
  expect(old.batches).toHaveLength(1);
  for (const item of [...old.batches.map((b) => batchBeforeLeanEntries(b.item)), ...old.pointers]) await doc.send(new PutCommand({ TableName: t.tableName, Item: item }));
  oracleItems = expandRecords(await scanTable(doc, t.tableName));
}, 120_000);

const rowsOf = (items: Array<Record<string, unknown>>) => items.filter((i) => i.item_type === "record").map((i) => ({ row: auditRowOf(i)!, at: String(i.ix_at) }));

function expected(f: { cluster?: string; status?: string; from?: string; to?: string }): string[] {
  return rowsOf(oracleItems)
    .filter(({ row }) => (!f.cluster || row.cluster?.id === f.cluster) && (!f.status || row.status?.toUpperCase() === f.status.toUpperCase()))
    .filter(({ row }) => (!f.from || row.at >= f.from) && (!f.to || row.at < f.to))
    .sort((a, b) => (a.at < b.at ? 1 : -1))
    .map(({ row }) => row.id);
}

async function allPages(raw: Record<string, string>, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await audit.query(parseAuditQuery({ ...raw, limit: String(limit), ...(cursor ? { cursor } : {}) }, NOW), { deliveries: false });
    ids.push(...page.rows.map((r) => r.id));
    cursor = page.cursor;
  } while (cursor);
  return ids;
}

describe("records that raised nothing, in batches", () => {
  it("are stored compactly: a batch holds many records, each record keeps a pointer", async () => {
    const all = await scanTable(doc, (store as unknown as { table: string }).table);
    const batches = all.filter((i) => i.item_type === "routine_batch");
    const pointers = all.filter((i) => i.item_type === "record_ref");
    expect(pointers).toHaveLength(544);
    // Three hours × three clusters × two kinds of line, from six writes: far fewer batches than records.
    expect(batches.length).toBeLessThan(544 / 8);
    for (const p of pointers) expect(Object.keys(p).sort()).toEqual(["batch", "expires_at", "item_type", "pk", "sk"]);
    // Found by its source and kind: in those indexes only; its status is a filtered field.
    for (const b of batches.filter((b) => b.expires_at !== 1_900_000_000)) { // not the earlier version's
      expect(Object.keys(b).filter((k) => k.startsWith("ix_")).sort()).toEqual(["ix_at", "ix_org", "ix_subject", "ix_what"]);
      expect(b.audit).toMatchObject({ ix_status: expect.stringMatching(/^ST#(INFO|WARNING)$/) });
    }
    expect(rowsOf(oracleItems)).toHaveLength(545);
  });

  it("answer every filter and time range exactly, page after page, beside records stored whole by an earlier version", async () => {
    const mid = (h: number, m: number) => new Date(Date.UTC(2026, 2, 2, h, m, 30)).toISOString();
    const queries: Array<Record<string, string>> = [
      {},
      { cluster: CLUSTERS[1]! },
      { status: "warning" },
      { cluster: CLUSTERS[2]!, status: "info" },
      { from: mid(9, 40), to: mid(10, 20) },
      { cluster: CLUSTERS[0]!, from: mid(10, 5), to: mid(11, 55) },
      { type: "record", kind: "cluster_log", from: mid(11, 59) },
      { to: mid(9, 30) },
    ];
    for (const q of queries) {
      const want = expected(q);
      expect(want.length, JSON.stringify(q)).toBeGreaterThan(0);
      // Small pages where the answer is small: each page is a query and a batch read, and CI is busy.
      for (const limit of want.length <= 120 ? [7, 50, 1000] : [50, 1000]) expect(await allPages(q, limit), `${JSON.stringify(q)} by ${limit}`).toEqual(want);
    }
    // The record written twice is one row; the whole one is there.
    const everything = await allPages({}, 1000);
    expect(everything.filter((id) => id === auditRowOf(written[45]!)!.id)).toHaveLength(1);
    expect(everything).toContain(auditRowOf(older)!.id);
    for (const r of olderBatched) expect(everything).toContain(auditRowOf(r)!.id);
    expect(await allPages({ status: "error" }, 50)).toEqual([]);
  }, 60_000);

  it("are explained by id: the record as read, no alert", async () => {
    for (const r of [written[3]!, written[45]!, older, olderBatched[1]!]) {
      const id = auditRowOf(r)!.id;
      const e = (await audit.explain(id))!;
      expect(e, id).toBeDefined();
      expect(e.alerts).toEqual([]);
      expect(JSON.stringify(e.subject)).toContain(id);
    }
  });
});
