import { afterAll, beforeAll, beforeEach, describe, expect, it} from "vitest";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBStreamsClient, type _Record } from "@aws-sdk/client-dynamodb-streams";
import type { LookoutEventDetail, LookoutEventEnvelope } from "../../../lib/model/event.js";
import { selectPendingAlerts } from "../../../lib/alerts/outbox.js";
import { recordItem } from "../../../lib/model/items.js";
import { newAlertItem } from "../../../lib/alerts/outbox-item.js";
import { LocalBus } from "../../../local/runtime/local-bus.js";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../local/runtime/dynamodb-local.js";
import { CHECKPOINT_FILE, OutboxStreamReader, type RecordsHandler, outboxPublisher } from "../../../local/runtime/stream.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";
import { freshTable, dynamodbEndpoint } from "../../support/dynamodb.js";

let client: DynamoDBClient;
let doc: DynamoDBDocumentClient;
let streams: DynamoDBStreamsClient;
let tableName: string;
let dataDir: string;

beforeAll(() => {
  streams = new DynamoDBStreamsClient({ endpoint: dynamodbEndpoint(), region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
});
afterAll(() => {
  streams.destroy();
});

// Each test reads its own table's stream from the start, with its own checkpoint directory.
beforeEach(async () => {
  ({ client, tableName } = await freshTable("lookout-outbox"));
  doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  dataDir = await mkdtemp(join(tmpdir(), "lookout-stream-"));
  return async () => {
    client.destroy();
    await rm(dataDir, { recursive: true, force: true });
  };
});

const alert = (i: number, base: LookoutEventDetail = EXAMPLE_DETAILS["Deployment Failed"]): LookoutEventDetail => ({ ...base, id: `${base.id}-${i}` });

async function putAlert(detail: LookoutEventDetail, suppressed = false) {
  const item = newAlertItem(detail, detail.observed_at, 1_900_000_000, suppressed ? { reason: "mute", detail: "muted" } : undefined);
  await doc.send(new PutCommand({ TableName: tableName, Item: item }));
}

async function putRecord(id: string) {
  await doc.send(new PutCommand({ TableName: tableName, Item: recordItem({ record_kind: "webhook_delivery", id, organization_id: "org" }, undefined, "2026-03-02T00:00:00Z") }));
}

/** A callback that keeps what it was handed. */
function collector() {
  const batches: _Record[][] = [];
  const onRecords: RecordsHandler = async (records) => void batches.push(records);
  const alertIds = () => selectPendingAlerts(batches.flat()).map((a) => a.detail.id);
  return { batches, onRecords, alertIds };
}

const reader = (onRecords: RecordsHandler, batchSize?: number) =>
  new OutboxStreamReader({ dynamodb: client, streams, tableName, dataDir, onRecords, batchSize });

describe("OutboxStreamReader on DynamoDB Local", () => {
  it("hands over what was written, then only what is new", async () => {
    await putAlert(alert(1));
    await putRecord("dl-1");
    await putAlert(alert(2));
    await putAlert(alert(3), true);

    const c = collector();
    const r = reader(c.onRecords);
    expect(await r.drain()).toBe(4);
    expect(c.batches.flat().map((rec) => rec.eventName)).toEqual(["INSERT", "INSERT", "INSERT", "INSERT"]);
    expect(c.alertIds()).toEqual([alert(1).id, alert(2).id]); // the suppressed one is in the stream, not selected

    await putAlert(alert(4));
    await putAlert(alert(5));
    const c2 = collector();
    const r2 = reader(c2.onRecords);
    expect(await r2.drain()).toBe(2);
    expect(c2.alertIds()).toEqual([alert(4).id, alert(5).id]);
    expect(await r2.drain()).toBe(0);
    expect(await r.drain()).toBe(0); // the first reader reads the same checkpoint file
  });

  it("re-delivers a batch whose callback threw, to a new reader after a crash; not after it succeeded", async () => {
    await putAlert(alert(1));
    await putAlert(alert(2));

    const crashing = reader(async () => {
      throw new Error("crash before the bus answered");
    });
    await expect(crashing.drain()).rejects.toThrow(/crash/);

    const c = collector();
    expect(await reader(c.onRecords).drain()).toBe(2);
    expect(c.alertIds()).toEqual([alert(1).id, alert(2).id]);

    const c2 = collector();
    expect(await reader(c2.onRecords).drain()).toBe(0);
    expect(c2.batches).toEqual([]);
  });

  it("checkpoints batch by batch: a crash in the second batch re-delivers only that one", async () => {
    for (let i = 1; i <= 5; i++) await putAlert(alert(i));
    let calls = 0;
    const seen: string[] = [];
    const flaky = reader(async (records) => {
      if (++calls === 2) throw new Error("crash in batch 2");
      seen.push(...selectPendingAlerts(records).map((a) => a.detail.id));
    }, 2);
    await expect(flaky.drain()).rejects.toThrow(/batch 2/);
    expect(seen).toEqual([alert(1).id, alert(2).id]);

    const c = collector();
    expect(await reader(c.onRecords, 2).drain()).toBe(3);
    expect(c.alertIds()).toEqual([alert(3).id, alert(4).id, alert(5).id]);
  });

  it("keeps its checkpoint in one JSON file, written whole (no temp files left)", async () => {
    await putAlert(alert(1));
    const c = collector();
    await reader(c.onRecords).drain();
    expect(await readdir(dataDir)).toEqual([CHECKPOINT_FILE]);
    const cp = JSON.parse(await readFile(join(dataDir, CHECKPOINT_FILE), "utf8"));
    const seq = c.batches.flat().at(-1)!.dynamodb!.SequenceNumber;
    expect(cp.streamArn).toMatch(new RegExp(`table/${tableName}/stream/`));
    expect(Object.values(cp.shards)).toContainEqual(expect.objectContaining({ sequenceNumber: seq }));
  });

  it("publishes through the local bus: pending alerts become envelopes, once", async () => {
    const bus = new LocalBus({ dataDir });
    const publisher = outboxPublisher(bus, { busName: "lookout" });
    await putAlert(alert(1, EXAMPLE_DETAILS["Webhook Delivery Failed"]));
    await putAlert(alert(2, EXAMPLE_DETAILS["Cluster Error"]), true);
    await putAlert(alert(3, EXAMPLE_DETAILS["Lookout Health"]));
    await reader(publisher).drain();
    await reader(publisher).drain();
    const events = (await readFile(bus.file, "utf8")).trim().split("\n").map((l) => JSON.parse(l) as LookoutEventEnvelope);
    // In the order they happened (the fixture's health event is the older), whatever order they were written in.
    expect(events.map((e) => [e["detail-type"], e.detail.id])).toEqual([
      ["Lookout Health", alert(3, EXAMPLE_DETAILS["Lookout Health"]).id],
      ["Webhook Delivery Failed", alert(1, EXAMPLE_DETAILS["Webhook Delivery Failed"]).id],
    ]);
  });

  it("runs continuously with start/stop", async () => {
    const c = collector();
    const r = reader(c.onRecords);
    r.start(50);
    try {
      await putAlert(alert(1));
      const deadline = Date.now() + 10_000;
      while (!c.alertIds().length && Date.now() < deadline) await new Promise((res) => setTimeout(res, 25));
      expect(c.alertIds()).toEqual([alert(1).id]);
    } finally {
      await r.stop();
    }
    await putAlert(alert(2));
    await new Promise((res) => setTimeout(res, 200));
    expect(c.alertIds()).toEqual([alert(1).id]); // stopped: nothing more is read
  });
});
