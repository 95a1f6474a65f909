import { describe, expect, it } from "vitest";
import { newAlertItem } from "../../lib/alerts/outbox-item.js";
import { publishOutbox, selectPendingAlerts } from "../../lib/alerts/outbox.js";
import { FakeEventBridge, byId } from "../support/fake-eventbridge.js";
import { EXAMPLE_DETAILS } from "../fixtures/event-examples.js";
import { alertInsert, recordInsert, streamRecord } from "../support/stream-records.js";

const failed = EXAMPLE_DETAILS["Deployment Failed"];
const cluster = EXAMPLE_DETAILS["Cluster Error"];
const webhook = EXAMPLE_DETAILS["Webhook Delivery Failed"];

describe("selectPendingAlerts", () => {
  it("selects pending alert items that were inserted, in stream order, with their sequence numbers", () => {
    const records = [alertInsert(failed), recordInsert("dl-1"), alertInsert(cluster)];
    const out = selectPendingAlerts(records);
    expect(out).toEqual([
      { sequenceNumber: records[0]!.dynamodb!.SequenceNumber, detail: failed },
      { sequenceNumber: records[2]!.dynamodb!.SequenceNumber, detail: cluster },
    ]);
  });

  it("ignores suppressed alerts, modifications, removals and other items", () => {
    const item = newAlertItem(webhook, webhook.observed_at, 1_900_000_000);
    const records = [
      alertInsert(failed, { reason: "backfill", detail: "older than the 15m backfill window at first sight" }),
      alertInsert(cluster, { reason: "mute", detail: "muted by ops until 18:00" }),
      streamRecord("MODIFY", item),
      streamRecord("REMOVE", item),
      recordInsert("dl-2"),
      streamRecord("INSERT", { pk: "SVC#svc-1", sk: "STATE", item_type: "service", state: "pending", detail: failed }),
    ];
    expect(selectPendingAlerts(records)).toEqual([]);
  });

  it("keeps numbers and nulls of the detail as they were written", () => {
    const [a] = selectPendingAlerts([alertInsert({ ...webhook, http: { status_code: null, target_host: "h" } })]);
    expect(a!.detail.http).toEqual({ status_code: null, target_host: "h" });
    const [b] = selectPendingAlerts([alertInsert(EXAMPLE_DETAILS["Deployment Recovered"])]);
    expect(b!.detail.deployment!.duration_sec).toBe(245);
  });
});

describe("publishOutbox", () => {
  it("publishes the pending alerts and names the records of those it could not publish", async () => {
    const bus = new FakeEventBridge().failAlways(byId(cluster.id), "InternalFailure");
    const records = [alertInsert(failed), recordInsert("dl-3"), alertInsert(cluster), alertInsert(webhook)];
    const out = await publishOutbox(records, bus, { busName: "lookout", maxAttempts: 2, sleep: async () => {} });
    expect(out.published).toEqual([failed.id, webhook.id]);
    expect(out.failed.map((f) => f.id)).toEqual([cluster.id]);
    expect(out.failedSequenceNumbers).toEqual([records[2]!.dynamodb!.SequenceNumber]);
    expect(bus.accepted.map((a) => a.entry.DetailType)).toEqual(["Deployment Failed", "Webhook Delivery Failed"]);
  });

  it("does not call the bus when the batch holds no pending alert", async () => {
    const bus = new FakeEventBridge();
    const out = await publishOutbox([recordInsert("dl-4")], bus, { busName: "lookout" });
    expect(out).toMatchObject({ published: [], failed: [], failedSequenceNumbers: [] });
    expect(bus.calls).toEqual([]);
  });
});
