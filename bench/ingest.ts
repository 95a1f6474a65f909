/**
 * Ingest figures: requests and DynamoDB writes per poll (steady state and with N new records), and
 * records normalized and stored per second beside the raw BatchWriteItem rate of the same DynamoDB Local.
 */
import { BatchWriteCommand, DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { startSimulator } from "../local/simulator/index.js";
import { createPlatformClient } from "../lib/platform/client.js";
import { DynamoIngestStore } from "../lib/store/ingest-store.js";
import { pollSource } from "../lib/poll/poll.js";
import { pollDepsOf } from "../lib/app/ingest.js";
import { checkConfig } from "../lib/config/load.js";
import type { SourceRef } from "../lib/model/source.js";
import type { RecordItem } from "../lib/model/ingest-store.js";
import { TTL_ATTRIBUTE } from "../lib/model/items.js";
import { dynamo, percentile, report, section } from "./support.js";

const silent = { info() {}, warn() {}, error() {} };
const STORED_HOW =
  "read over HTTP, normalize, redact; each error entry with its alert by a conditional transaction (16 in flight), then the entries without an alert by BatchWriteItem (25 a batch, 16 in flight), against DynamoDB Local";

export async function benchIngest() {
  section({
    id: "ingest",
    title: "Ingest: requests and writes per poll, ingest rate",
    method:
      "One simulator (2 applications, a cluster, a webhook) over HTTP and a fresh table on DynamoDB Local. After some activity and three polls of each " +
      "source, 20 more polls of each source with nothing new count the requests sent and the DynamoDB writes made (DynamoIngestStore's write counter). " +
      "Then cluster runs of 10, 100 and 500 new log entries are each read by one poll, timed from Node: read, normalize, redact; an entry with " +
      "an alert (one in 50 is an error) written with it by a conditional transaction, the others by BatchWriteItem. The raw rates beside it " +
      "are plain BatchWriteItem of 500 items into the same DynamoDB Local (small items, and copies of the poll's own items with their audit " +
      "index attributes), with no conditions and no normalizing, taken in turn with the poll.",
  });
  const sim = await startSimulator({ size: { applications: 2, clusters: 1, webhooks: 1 } });
  try {
    const { client, tableName } = await dynamo();
    const store = new DynamoIngestStore({ client, tableName, retentionMs: 400 * 86_400_000, now: () => sim.clock.now() });
    // The configuration's defaults (a 15-minute backfill window).
    const config = checkConfig({ platform: { url: sim.url, token: "env:T" }, watch: [{ organization: sim.ids.organizationId }] }, "bench", {});
    const deps = pollDepsOf(config, {
      client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token" }),
      store, now: () => sim.clock.now(), log: silent,
    });
    const org = sim.ids.organizationId;
    const sources: SourceRef[] = [
      { kind: "webhook", organizationId: org, id: sim.ids.webhookIds[0]! },
      { kind: "deployment", organizationId: org, id: sim.ids.applicationIds[0]! },
      { kind: "cluster", organizationId: org, id: sim.ids.clusterIds[0]! },
    ];
    const poll = (source: SourceRef) => pollSource({ source, previousPollAt: sim.clock.nowIso() }, deps);

    // Activity, then polls until each source is settled.
    sim.scenario.deploy(sim.ids.applicationIds[0]!, { outcome: "DEPLOYMENT_ERROR" });
    sim.scenario.clusterRun(sim.ids.clusterIds[0]!, { entries: 20, errors: 1 });
    sim.clock.advance(10 * 60_000);
    for (let i = 0; i < 3; i++) for (const s of sources) await poll(s);

    for (const s of sources) {
      const w = store.writes.count;
      const rounds = 20;
      let requests = 0;
      for (let i = 0; i < rounds; i++) requests += (await poll(s)).requests;
      report({ name: `steady state, ${s.kind}: requests per poll`, value: requests / rounds, method: `${rounds} polls with nothing new` });
      report({ name: `steady state, ${s.kind}: DynamoDB writes per poll`, value: (store.writes.count - w) / rounds, method: `${rounds} polls with nothing new` });
    }

    /** One poll of a cluster run of `n` new entries (one error in 50, each with its alert): records stored per second. */
    const clusterRun = async (n: number, errors = Math.ceil(n / 50)) => {
      sim.clock.advance(60_000);
      sim.scenario.clusterRun(sim.ids.clusterIds[0]!, { entries: n, errors });
      const w = store.writes.count;
      const t = performance.now();
      const r = await poll(sources[2]!);
      const ms = performance.now() - t;
      if (!r.ok || r.newRecords !== n) throw new Error(`cluster run of ${n}: ${r.newRecords} records stored, ${r.error?.message ?? "no error"}`);
      return { requests: r.requests, writes: store.writes.count - w, perSecond: (n / ms) * 1000 };
    };
    for (const n of [10, 100, 500]) {
      const r = await clusterRun(n);
      report({ name: `cluster run of ${n} new entries: requests / writes`, value: `${r.requests} / ${r.writes}`, method: "one poll; an error entry writes its record and its alert" });
      report({ name: `cluster run of ${n} new entries: records stored per second`, value: r.perSecond, unit: "rec/s", method: STORED_HOW });
    }

    // Plain BatchWriteItem of as many items into the same DynamoDB Local: small items without audit index
    // attributes (the figure this section always gave), and copies of the very items the poll wrote.
    const doc = DynamoDBDocumentClient.from(client);
    const n = 500;
    const written: RecordItem[] = [];
    const insertRecords = store.insertRecords.bind(store);
    store.insertRecords = (records) => (written.push(...records), insertRecords(records));
    await clusterRun(n);
    store.insertRecords = insertRecords;
    const expiresAt = store.expiresAt();
    let raws = 0;
    const raw = async (item: (round: number, i: number) => Record<string, unknown>) => {
      const round = raws++;
      const t = performance.now();
      const batches = [];
      for (let i = 0; i < n; i += 25) {
        batches.push(doc.send(new BatchWriteCommand({ RequestItems: { [tableName]: Array.from({ length: Math.min(25, n - i) }, (_, j) => ({ PutRequest: { Item: item(round, i + j) } })) } })));
        if (batches.length === 16) await Promise.all(batches.splice(0));
      }
      await Promise.all(batches);
      return (n / (performance.now() - t)) * 1000;
    };
    const small = (round: number, i: number) => ({ pk: `RAW#${round}#${i}`, sk: "RECORD", item_type: "record", record: { id: `x${i}`, message: "m".repeat(200), step: "Create", type: "info" } });
    const same = (round: number, i: number) => {
      const item = written[i % written.length]!;
      return { ...item, pk: `${item.pk}#RAW#${round}`, [TTL_ATTRIBUTE]: expiresAt };
    };
    // Taken in turn, so that all four see the same load; DynamoDB Local's JIT warms up over the first
    // turns (a run's rate doubles over five), which are not counted. The median of each.
    const rounds = 15;
    const warmUp = 3;
    const [plainSmall, plainSame, ingest, quiet] = [[], [], [], []] as [number[], number[], number[], number[]];
    for (let i = 0; i < warmUp + rounds; i++) {
      const turn = [await raw(small), await raw(same), (await clusterRun(n)).perSecond, (await clusterRun(n, 0)).perSecond];
      if (i >= warmUp) [plainSmall, plainSame, ingest, quiet].forEach((xs, j) => xs.push(turn[j]!));
    }
    const [smallRate, sameRate, ingestRate, quietRate] = [plainSmall, plainSame, ingest, quiet].map((xs) => percentile(xs, 50)) as [number, number, number, number];
    const turns = `median of ${rounds} turns after ${warmUp} to warm up, taken in turn with the others`;
    const plainHow = "25 items a batch, 16 batches in flight, no conditions, no normalizing";
    report({ name: `raw BatchWriteItem, ${n} small items`, value: smallRate, unit: "items/s", method: `${plainHow}; about 300 bytes, no audit index attributes; ${turns}` });
    report({ name: `raw BatchWriteItem, ${n} of the poll's own record items`, value: sameRate, unit: "items/s", method: `${plainHow}; copies of the items a cluster run of 500 wrote (about 1.1 kB, with their audit index attributes); ${turns}` });
    report({ name: `cluster run of ${n} new entries, in turn with raw BatchWriteItem`, value: ingestRate, unit: "rec/s", method: `${STORED_HOW}; ${turns}` });
    report({ name: `cluster run of ${n} new entries, none an error, in turn with raw BatchWriteItem`, value: quietRate, unit: "rec/s", method: `${STORED_HOW}: here no alert, every record in batches; ${turns}` });
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
    report({ name: "ingest rate (one in 50 an error) / raw BatchWriteItem, small items / same items", value: `${ratio(ingestRate, smallRate)} / ${ratio(ingestRate, sameRate)}`, method: "the medians above" });
    report({ name: "ingest rate (no error) / raw BatchWriteItem, small items / same items", value: `${ratio(quietRate, smallRate)} / ${ratio(quietRate, sameRate)}`, method: "the medians above; target at least 0.8×" });
    client.destroy();
  } finally {
    await sim.close();
  }
}
