import { describe, expect, it } from "vitest";
import { newAlertItem } from "../../../lib/alerts/outbox-item.js";
import { inOrderOfHappening, publishOutbox, selectPendingAlerts } from "../../../lib/alerts/outbox.js";
import type { LookoutEventDetail } from "../../../lib/model/event.js";
import { FakeEventBridge, byId } from "../../support/fake-eventbridge.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";
import { alertInsert, recordInsert, streamRecord } from "../../support/stream-records.js";

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

describe("inOrderOfHappening", () => {
  const at = (minute: number) => `2026-03-02T14:${String(minute).padStart(2, "0")}:00.000Z`;
  const inIncident = (id: string, over: Partial<LookoutEventDetail>): LookoutEventDetail =>
    ({ ...EXAMPLE_DETAILS["Webhook Delivery Failed"], id, incident_id: "open", ...over }) as LookoutEventDetail;
  const open = inIncident("open", { occurred_at: at(1), incident: { subject: "s", opened_at: at(1), failures: 1 } });
  const again2 = inIncident("again2", { occurred_at: at(2), incident: { subject: "s", opened_at: at(1), failures: 2, repeat: true } });
  const again3 = inIncident("again3", { occurred_at: at(3), incident: { subject: "s", opened_at: at(1), failures: 3, repeat: true } });
  const amends = inIncident("amends", { transition: "changes_listed", amends: "open", occurred_at: at(1) });
  const closed = inIncident("closed", { ...EXAMPLE_DETAILS["Webhook Target Recovered"], id: "closed", incident_id: "open", occurred_at: at(3), incident: { subject: "s", opened_at: at(1), failures: 3 } });

  it("puts a page listed newest first (as a poll writes it) in the order it happened, as a thread shows it", () => {
    expect(inOrderOfHappening([closed, again3, again2, amends, open]).map((d) => d.id)).toEqual(["open", "amends", "again2", "again3", "closed"]);
  });

  it("keeps the stream's order where nothing tells them apart", () => {
    const other = { ...open, id: "other", incident_id: "other" };
    expect(inOrderOfHappening([other, open]).map((d) => d.id)).toEqual(["other", "open"]);
    expect(inOrderOfHappening([open, other]).map((d) => d.id)).toEqual(["open", "other"]);
  });
});
