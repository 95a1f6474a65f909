/**
 * Ingest figures: requests and DynamoDB writes per poll (steady state and with N new records), and
 * records normalized and stored per second beside the raw BatchWriteItem rate of the same DynamoDB Local.
 */
import { BatchWriteCommand, DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { startSimulator } from "../local/simulator/index.js";
import { createPlatformClient } from "../lib/platform/client.js";
import { DynamoIngestStore } from "../lib/store/ingest-store.js";
import { pollSource, type PollDeps } from "../lib/ingest/poll.js";
import type { SourceRef } from "../lib/model/source.js";
import { dynamo, report, section } from "./support.js";

const silent = { info() {}, warn() {}, error() {} };

export async function benchIngest() {
  section({
    id: "ingest",
    title: "Ingest: requests and writes per poll, ingest rate",
    method:
      "One simulator (2 applications, a cluster, a webhook) over HTTP and a fresh table on DynamoDB Local. After some activity and three polls of each " +
      "source, 20 more polls of each source with nothing new count the requests sent and the DynamoDB writes made (DynamoIngestStore's write counter). " +
      "Then cluster runs of 10, 100 and 500 new log entries are each read by one poll, timed from Node: read, normalize, redact, conditional put (16 in " +
      "flight). The raw rate beside it is plain BatchWriteItem of 500 similar items into the same DynamoDB Local, with no conditions and no normalizing.",
  });
  const sim = await startSimulator({ size: { applications: 2, clusters: 1, webhooks: 1 } });
  try {
    const { client, tableName } = await dynamo();
    const store = new DynamoIngestStore({ client, tableName, retentionMs: 400 * 86_400_000, now: () => sim.clock.now() });
    const deps: PollDeps = {
      client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token" }),
      store, now: () => sim.clock.now(), backfillWindowMs: 15 * 60_000, log: silent,
    };
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

    for (const n of [10, 100, 500]) {
      sim.clock.advance(60_000);
      sim.scenario.clusterRun(sim.ids.clusterIds[0]!, { entries: n, errors: Math.ceil(n / 50) });
      const w = store.writes.count;
      const t = performance.now();
      const r = await poll(sources[2]!);
      const ms = performance.now() - t;
      report({ name: `cluster run of ${n} new entries: requests / writes`, value: `${r.requests} / ${store.writes.count - w}`, method: "one poll; an error entry writes its record and its alert" });
      report({ name: `cluster run of ${n} new entries: records stored per second`, value: (n / ms) * 1000, unit: "rec/s", method: "read, normalize, conditional put (16 in flight) against DynamoDB Local" });
    }

    // Raw BatchWriteItem of the same number of similar items, same DynamoDB Local.
    const doc = DynamoDBDocumentClient.from(client);
    const n = 500;
    const item = (i: number) => ({ pk: `RAW#${i}`, sk: "RECORD", item_type: "record", record: { id: `x${i}`, message: "m".repeat(200), step: "Create", type: "info" } });
    const t = performance.now();
    const batches = [];
    for (let i = 0; i < n; i += 25) {
      batches.push(doc.send(new BatchWriteCommand({ RequestItems: { [tableName]: Array.from({ length: Math.min(25, n - i) }, (_, j) => ({ PutRequest: { Item: item(i + j) } })) } })));
      if (batches.length === 16) await Promise.all(batches.splice(0));
    }
    await Promise.all(batches);
    report({ name: `raw BatchWriteItem, ${n} items`, value: (n / (performance.now() - t)) * 1000, unit: "items/s", method: "25 items a batch, 16 batches in flight, no conditions, no normalizing" });
    client.destroy();
  } finally {
    await sim.close();
  }
}
