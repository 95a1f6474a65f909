/**
 * A flood in one answer (a crash-looping component): a cluster log list far past what one poll stores
 * and what one DynamoDB item holds, read from the simulator over HTTP into DynamoDB Local. It is stored
 * in chunks over several polls, oldest first; every item stays under 400 KB; each error is alerted and
 * counted once; a failed chunk moves no cursor (docs/limits.md, "A flood of records"). `npm run bench --
 * flood-ingest` reads one of 50,000 entries within the poll function's memory and time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BatchGetCommand, type BatchGetCommandInput, type BatchGetCommandOutput, DynamoDBDocumentClient, GetCommand } from "@aws-sdk/lib-dynamodb";
import pMap from "p-map";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { createPlatformClient } from "../../../lib/platform/client.js";
import { DynamoIngestStore } from "../../../lib/store/ingest-store.js";
import { pollSource, type PollDeps } from "../../../lib/poll/poll.js";
import { type Seen, loadSeen } from "../../../lib/poll/seen.js";
import type { SourceRef } from "../../../lib/model/source.js";
import { keys } from "../../../lib/model/items.js";
import { freshTable, scanTable, TEST_RETENTION_MS } from "../../support/dynamodb.js";
import { expandRecords } from "../../../lib/store/routine-batches.js";

const MIN = 60_000;
const ITEM_LIMIT = 400 * 1024;
const ENTRIES = 10_000;
const ERRORS = 500;
/** Records a poll stores here: one chunk a poll, so the flood takes several. */
const CHUNK = 2_000;

let sim: Simulator;
let doc: DynamoDBDocumentClient;
let tableName: string;
let store: DynamoIngestStore;
let deps: PollDeps;
const warnings: string[] = [];
/** Ids of the alerts the polls raised. */
const raised: string[] = [];

beforeAll(async () => {
  const t = await freshTable("ingest-flood");
  tableName = t.tableName;
  doc = DynamoDBDocumentClient.from(t.client);
  sim = await startSimulator({ size: { applications: 1, clusters: 2, webhooks: 1 } });
  const now = () => sim.clock.now();
  store = new DynamoIngestStore({ client: t.client, tableName, retentionMs: TEST_RETENTION_MS, now });
  deps = {
    client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token", sleep: async () => {} }),
    store, now, backfillWindowMs: 15 * MIN,
    log: { info() {}, warn: (m) => void warnings.push(m), error() {} },
    bounds: { chunkRecords: CHUNK, pollWorkMs: 0 },
    onAlert: (d) => void raised.push(d.id),
  };
});
afterAll(() => sim.close());

const cluster = (i: number): SourceRef => ({ kind: "cluster", organizationId: sim.ids.organizationId, id: sim.ids.clusterIds[i]! });
const keyOf = (s: SourceRef) => `cluster:${s.organizationId}/${s.id}`;
/** A poll at the next tick. */
const poll = (s: SourceRef) => {
  sim.clock.advance(MIN);
  return pollSource({ source: s, previousPollAt: sim.clock.nowIso() }, deps);
};
const itemBytes = (item: Record<string, unknown>) => Buffer.byteLength(JSON.stringify(item), "utf8");
const seenOf = async (s: SourceRef): Promise<Seen> => loadSeen(store, await store.getCursor(keyOf(s)));
/** Items by key, only the attributes named (paths of one level below the top). */
async function getAll(keyList: Array<{ pk: string; sk: string }>, attributes: string[]): Promise<Array<Record<string, unknown>>> {
  const names = Object.fromEntries([...new Set(["pk", ...attributes.flatMap((a) => a.split("."))])].map((n, i) => [`#n${i}`, n]));
  const alias = Object.fromEntries(Object.entries(names).map(([k, v]) => [v, k]));
  const projection = ["pk", ...attributes].map((a) => a.split(".").map((n) => alias[n]).join(".")).join(", ");
  const batches = Array.from({ length: Math.ceil(keyList.length / 100) }, (_, i) => keyList.slice(i * 100, i * 100 + 100));
  const found = await pMap(batches, async (Keys) => {
    const out: Array<Record<string, unknown>> = [];
    let request: BatchGetCommandInput["RequestItems"] = { [tableName]: { Keys, ProjectionExpression: projection, ExpressionAttributeNames: names } };
    while (request && Object.keys(request).length) {
      const res: BatchGetCommandOutput = await doc.send(new BatchGetCommand({ RequestItems: request }));
      out.push(...(res.Responses?.[tableName] ?? []));
      request = res.UnprocessedKeys;
    }
    return out;
  }, { concurrency: 8 });
  return found.flat();
}
const seenCount = (seen: Seen) => seen.inline.length + seen.parts.reduce((n, p) => n + p.ids.length, 0);

describe("a cluster answer of 10,000 entries, 500 of them errors", () => {
  it("is stored completely across polls, every item under 400 KB, each error alerted and counted once, the cursor never past what is stored", { timeout: 180_000 }, async () => {
    const src = cluster(0);
    await poll(src); // the seeded run: first sight
    sim.scenario.clusterRun(src.id, { entries: ENTRIES, errors: ERRORS });

    const backlogs: number[] = [];
    let alerted = 0;
    while (backlogs.length < 10) {
      if (backlogs.at(-1) === CHUNK) {
        // The last chunk (every error is in it) fails after its alerts were written: its batch writes
        // are throttled. The poll fails and its cursor does not move; the next stores it, alerting none again.
        const insertRecords = store.insertRecords.bind(store);
        store.insertRecords = async (records) => records.map((record) => ({ record, error: Object.assign(new Error("slow down"), { name: "ThrottlingException" }) }));
        const cursor = await store.getCursor(keyOf(src));
        const failed = await poll(src);
        expect(failed).toMatchObject({ ok: false, alerts: ERRORS });
        alerted += failed.alerts;
        expect(await store.getCursor(keyOf(src))).toEqual(cursor);
        store.insertRecords = insertRecords;
      }
      const r = await poll(src);
      expect(r).toMatchObject({ ok: true, requests: 1 });
      alerted += r.alerts;
      backlogs.push(r.backlog ?? 0);
      // What the cursor names is what was stored, no more.
      expect(seenCount(await seenOf(src))).toBe(ENTRIES - (r.backlog ?? 0));
      if (!r.backlog) break;
    }
    expect(backlogs).toEqual([8_000, 6_000, 4_000, 2_000, 0]);
    expect(alerted).toBe(ERRORS);

    // The state items, the cursor and its parts above all, each under DynamoDB's limit; the seen ids
    // outgrew the cursor and went into parts of their own.
    const cursor = await store.getCursor(keyOf(src));
    expect(cursor?.seen_parts?.length).toBeGreaterThan(1);
    const stateKeys = [keys.cursor(keyOf(src)), keys.incident(`cluster:${src.id}`), ...cursor!.seen_parts!.map((p) => keys.seenPart(keyOf(src), p))];
    for (const Key of stateKeys) {
      const { Item } = await doc.send(new GetCommand({ TableName: tableName, Key }));
      expect(itemBytes(Item!), Key.sk).toBeLessThan(ITEM_LIMIT);
    }

    // Every id the cursor names is a stored record: all 10,000; each error's alert is in the outbox once.
    const seenIds = await seenOf(src);
    const ids = [...seenIds.inline, ...seenIds.parts.flatMap((p) => p.ids)];
    expect(new Set(ids).size).toBe(ENTRIES);
    // Records that raised nothing are kept in batches: read back through their pointers.
    const wanted = new Set(ids.map((id) => keys.record("cluster_log", id).pk));
    const records = expandRecords(await scanTable(doc, tableName)).filter((i) => wanted.has(String(i.pk)));
    expect(records.length).toBe(ENTRIES);
    const errorRecords = records.filter((i) => (i.record as { failed: boolean }).failed).map((i) => (i.record as { id: string }).id);
    expect(errorRecords.length).toBe(ERRORS);
    const alerts = await getAll([...new Set(raised)].map((id) => keys.alert(id)), ["detail.transition", "row.source"]);
    const raisedBy = alerts.filter((a) => (a.detail as { transition: string }).transition === "cluster_error").map((a) => (a.row as { source: string }).source);
    expect(raisedBy.length).toBe(ERRORS);
    expect(new Set(raisedBy)).toEqual(new Set(errorRecords));
    expect((await store.getIncident(`cluster:${src.id}`))?.open?.failures).toBe(ERRORS);

    // Caught up: the same answer again reads no part and writes nothing.
    const writes = store.writes.count;
    expect(await poll(src)).toMatchObject({ ok: true, newRecords: 0, alerts: 0 });
    expect(store.writes.count).toBe(writes);
  });

  it("first seen with an old flood: every chunk stays quiet, on the later polls too", { timeout: 60_000 }, async () => {
    const src = cluster(1);
    sim.scenario.clusterRun(src.id, { entries: 4_000, errors: 500, at: new Date(sim.clock.nowMs() - 3 * 60 * MIN) });
    let alerts = 0;
    let suppressed = 0;
    let polls = 0;
    for (let backlog = 1; backlog && polls < 5; polls++) {
      const r = await poll(src);
      expect(r.ok).toBe(true);
      alerts += r.alerts;
      suppressed += r.suppressed;
      backlog = r.backlog ?? 0;
      if (backlog) expect((await store.getCursor(keyOf(src)))?.quiet_before).toBeDefined();
    }
    expect(polls).toBe(2);
    expect({ alerts, suppressed }).toEqual({ alerts: 0, suppressed: 500 });
    expect((await store.getCursor(keyOf(src)))?.quiet_before).toBeUndefined();
  });
});
