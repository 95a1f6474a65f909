import { beforeAll, describe, expect, it, vi } from "vitest";
import type { Context, DynamoDBStreamEvent } from "aws-lambda";
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { handler } from "../../../../functions/publish.js";
import { createPublishHandler } from "../../../../lib/app/lambda/publish.js";
import { FakeEventBridge, byId } from "../../../support/fake-eventbridge.js";
import { EXAMPLE_DETAILS } from "../../../fixtures/event-examples.js";
import { alertInsert, recordInsert } from "../../../support/stream-records.js";
import { inOrderOfHappening } from "../../../../lib/alerts/outbox.js";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { DynamoQuarantine } from "../../../../lib/store/quarantine.js";
import { freshTable, scanTable, TEST_RETENTION_MS } from "../../../support/dynamodb.js";

const context = {
  functionName: "lookout-publish",
  functionVersion: "$LATEST",
  invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:lookout-publish",
  memoryLimitInMB: "256",
  awsRequestId: "req-1",
  logGroupName: "/aws/lambda/lookout-publish",
  logStreamName: "stream",
  callbackWaitsForEmptyEventLoop: false,
  getRemainingTimeInMillis: () => 30_000,
} as unknown as Context;

const failed = EXAMPLE_DETAILS["Deployment Failed"];
const still = EXAMPLE_DETAILS["Deployment Still Failing"];
const cluster = EXAMPLE_DETAILS["Cluster Error"];

beforeAll(() => {
  // Metrics would print EMF to stdout; the counts are checked on addMetric.
  process.env.POWERTOOLS_METRICS_DISABLED = "true";
});

function setup(bus: FakeEventBridge) {
  const logger = new Logger({ serviceName: "lookout-publish", logLevel: "SILENT" });
  const metrics = new Metrics({ namespace: "Lookout", serviceName: "lookout-publish" });
  const logged: unknown[][] = [];
  for (const level of ["debug", "info", "warn", "error"] as const) {
    vi.spyOn(logger, level).mockImplementation((...args: unknown[]) => void logged.push([level, ...args]));
  }
  const addMetric = vi.spyOn(metrics, "addMetric");
  const h = createPublishHandler({ bus, busName: "lookout", logger, metrics, publish: { maxAttempts: 2, sleep: async () => {} } });
  const counts = () => Object.fromEntries(addMetric.mock.calls.map((c) => [c[0], c[2]]));
  return { h, logged, counts };
}

describe("publish handler", () => {
  it("publishes the pending alerts of the batch and reports none failed", async () => {
    const bus = new FakeEventBridge();
    const { h, counts } = setup(bus);
    const event: DynamoDBStreamEvent = { Records: [alertInsert(failed), recordInsert("dl-1"), alertInsert(cluster)] };
    await expect(h(event, context)).resolves.toEqual({ batchItemFailures: [] });
    expect(bus.acceptedIds()).toEqual(inOrderOfHappening([failed, cluster]).map((d) => d.id));
    expect(bus.accepted.every((a) => a.entry.EventBusName === "lookout")).toBe(true);
    expect(counts()).toEqual({ AlertsPublished: 2, AlertsFailed: 0 });
  });

  it("returns the sequence numbers of the records whose alert was not published", async () => {
    const bus = new FakeEventBridge().failAlways(byId(still.id), "InternalFailure");
    const { h, counts } = setup(bus);
    const records = [alertInsert(failed), recordInsert("dl-2"), alertInsert(still), alertInsert(cluster)];
    const res = await h({ Records: records }, context);
    expect(res).toEqual({ batchItemFailures: [{ itemIdentifier: records[2]!.dynamodb!.SequenceNumber }] });
    expect(bus.acceptedIds()).toEqual(inOrderOfHappening([failed, cluster]).map((d) => d.id));
    expect(counts()).toEqual({ AlertsPublished: 2, AlertsFailed: 1 });
  });

  it("reports every alert record (and no other record) when the bus is unreachable, instead of throwing", async () => {
    const down = () => Object.assign(new Error("connect ECONNREFUSED"), { name: "Error" });
    const bus = new FakeEventBridge().throwOnNextCalls(down(), down());
    const { h } = setup(bus);
    const records = [alertInsert(failed), recordInsert("dl-3"), alertInsert(cluster)];
    const res = await h({ Records: records }, context);
    expect(res.batchItemFailures.map((f) => f.itemIdentifier)).toEqual([records[0], records[2]].map((r) => r!.dynamodb!.SequenceNumber));
  });

  it("logs alert ids and detail-types, never the text of a detail", async () => {
    const bus = new FakeEventBridge().failAlways(byId(cluster.id), "InternalFailure");
    const { h, logged } = setup(bus);
    await h({ Records: [alertInsert(failed), alertInsert(cluster)] }, context);
    const text = JSON.stringify(logged);
    expect(logged.find((l) => l[0] === "info")).toEqual(["info", "alerts published", { alerts: [{ id: failed.id, detailType: "Deployment Failed" }] }]);
    expect(text).toContain(cluster.id);
    for (const secret of [failed.summary, failed.deployment!.commit!.message, failed.deployment!.triggered_by, cluster.error!.message]) {
      expect(text).not.toContain(JSON.stringify(secret).slice(1, -1));
    }
  });

  it("the default handler refuses to run without EVENT_BUS_NAME", async () => {
    delete process.env.EVENT_BUS_NAME;
    await expect(handler({ Records: [] }, context)).rejects.toThrow(/EVENT_BUS_NAME/);
  });
});

describe("publish handler with the quarantine port (DynamoDB Local)", () => {
  it("reports only passing failures; an alert no retry can publish is quarantined with one health alert", async () => {
    const { client, tableName } = await freshTable("publish-handler");
    const doc = DynamoDBDocumentClient.from(client);
    const quarantine = new DynamoQuarantine({ client, tableName, retentionMs: TEST_RETENTION_MS });
    const bus = new FakeEventBridge().failAlways(byId(still.id), "InternalFailure");
    const logger = new Logger({ serviceName: "lookout-publish", logLevel: "SILENT" });
    const metrics = new Metrics({ namespace: "Lookout", serviceName: "lookout-publish" });
    const addMetric = vi.spyOn(metrics, "addMetric");
    const h = createPublishHandler({ bus, busName: "lookout", logger, metrics, quarantine, publish: { maxAttempts: 2, sleep: async () => {} } });
    const bad = { ...cluster, id: "poisoned", transition: "melted" as never };
    const records = [alertInsert(failed), alertInsert(bad), alertInsert(still), alertInsert(cluster)];
    const res = await h({ Records: records }, context);
    expect(res).toEqual({ batchItemFailures: [{ itemIdentifier: records[2]!.dynamodb!.SequenceNumber }] });
    expect(bus.acceptedIds()).toEqual(inOrderOfHappening([failed, cluster]).map((d) => d.id));
    expect(Object.fromEntries(addMetric.mock.calls.map((c) => [c[0], c[2]]))).toMatchObject({ AlertsFailed: 1, AlertsQuarantined: 1 });
    const items = await scanTable(doc, tableName);
    expect(items.filter((i) => i.item_type === "quarantine").map((i) => [i.subject_id, i.stage])).toEqual([["poisoned", "publish"]]);
    const health = items.filter((i) => i.item_type === "alert");
    expect(health).toHaveLength(1);
    expect(health[0]!.detail).toMatchObject({ transition: "quarantined", health: { check: "quarantined" } });
    // Delivered again (the shard is retried from the passing failure): nothing is quarantined twice.
    await h({ Records: records }, context);
    expect((await scanTable(doc, tableName)).filter((i) => i.item_type === "alert")).toHaveLength(1);
    client.destroy();
  });
});
