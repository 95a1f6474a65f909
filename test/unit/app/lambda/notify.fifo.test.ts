/**
 * The notify handler on a FIFO queue (docs/architecture.md, "Order per incident"): a batch holds several
 * incidents' messages, each incident a message group. A failure fails its message and every later message
 * of its group in the batch, unprocessed, so that nothing of that incident overtakes it when Lambda hands
 * them back; the other groups' messages are delivered in order. On the in-memory stores.
 */
import { describe, expect, it } from "vitest";
import type { Context, SQSEvent } from "aws-lambda";
import { createNotifyHandler, notifyBody } from "../../../../lib/app/lambda/notify.js";
import { toEnvelope } from "../../../../lib/alerts/publish.js";
import { checkConfig } from "../../../../lib/config/load.js";
import type { LookoutEventDetail } from "../../../../lib/model/event.js";
import type { Channel } from "../../../../lib/notify/deliver.js";
import { DeliveryError } from "../../../../lib/notify/types.js";
import { MemoryIngestStore } from "../../../support/memory-ingest-store.js";
import { MemoryNotifyStore } from "../../../support/memory-notify-store.js";
import { EXAMPLE_DETAILS } from "../../../fixtures/event-examples.js";

const context = { functionName: "notify", awsRequestId: "r", invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:notify" } as unknown as Context;
const silent = { info() {}, warn() {}, error() {}, debug() {} };
const T0 = Date.parse("2026-03-01T10:00:00Z");

function notifier(failing: Set<string>) {
  const config = checkConfig(
    {
      platform: { url: "http://127.0.0.1:1", token: "env:T" },
      watch: [{ organization: EXAMPLE_DETAILS["Deployment Failed"].organization.id }],
      routes: [{ name: "oncall", match: { kind: "deployment" }, slack: { webhook_url: "env:H" } }],
    },
    "test", {},
  );
  const tried: string[] = [];
  const sent: string[] = [];
  const channel: Channel = {
    id: "slack-test", label: "slack test",
    async send(detail) {
      tried.push(detail.id);
      if (failing.has(detail.id)) throw new DeliveryError("Slack answered 500", true, 500);
      sent.push(detail.id);
      return { ts: `${sent.length}.0001`, channel: "C1" };
    },
    async sendDigest() {
      return { ts: "0.0002" };
    },
  };
  const now = () => new Date(T0);
  const handler = createNotifyHandler("slack", {
    routes: config.routes,
    notifier: {
      settings: config.notify,
      store: new MemoryNotifyStore({ now }),
      outbox: new MemoryIngestStore({ retentionMs: 86_400_000, now }),
      channelFor: async () => channel,
      now,
      log: silent,
    },
  });
  return { handler, tried, sent };
}

/** Each its own opening (so that no follow-up waits for one); the SQS group is what orders them. */
const opening = (id: string): LookoutEventDetail => ({ ...EXAMPLE_DETAILS["Deployment Failed"], id, incident_id: id });
const fifoEvent = (records: Array<{ id: string; group: string }>): SQSEvent => ({
  Records: records.map(({ id, group }) => ({
    messageId: `m-${id}`, receiptHandle: "h", messageAttributes: {}, md5OfBody: "",
    attributes: { MessageGroupId: group, MessageDeduplicationId: `oncall/${id}` } as never,
    body: JSON.stringify({ route: "oncall", group, dedup: `oncall/${id}`, event: toEnvelope(opening(id), { account: "123456789012", region: "us-east-1", time: new Date(T0).toISOString(), eventId: `e-${id}` }) }),
    eventSource: "aws:sqs", eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:lookout-prod-slack.fifo", awsRegion: "us-east-1",
  })),
});

describe("notify on a FIFO queue (SqsFifoPartialProcessor, skipGroupOnError)", () => {
  it("fails the failed message and every later one of its incident, unprocessed; the other incidents go on in order", async () => {
    const { handler, tried, sent } = notifier(new Set(["a2"]));
    const batch = [
      { id: "a1", group: "inc-a" }, { id: "b1", group: "inc-b" },
      { id: "a2", group: "inc-a" }, { id: "b2", group: "inc-b" },
      { id: "a3", group: "inc-a" }, { id: "b3", group: "inc-b" },
      { id: "a4", group: "inc-a" },
    ];
    const res = await handler(fifoEvent(batch), context);
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: "m-a2" }, { itemIdentifier: "m-a3" }, { itemIdentifier: "m-a4" }]);
    // a3 and a4 were never tried: delivering them now would put them before a2.
    expect(tried).toEqual(["a1", "b1", "a2", "b2", "b3"]);
    expect(sent).toEqual(["a1", "b1", "b2", "b3"]);
  });

  it("a batch without failures is delivered whole, in the queue's order", async () => {
    const { handler, sent } = notifier(new Set());
    const res = await handler(fifoEvent([{ id: "c1", group: "inc-c" }, { id: "d1", group: "d1" }, { id: "c2", group: "inc-c" }]), context);
    expect(res.batchItemFailures).toEqual([]);
    expect(sent).toEqual(["c1", "d1", "c2"]);
  });

  it("takes the rule's message out of whatever the pipe sends: the message, its record, or the body as a string", () => {
    const msg = '{"route":"oncall","event":{}}';
    expect(notifyBody(msg)).toBe(msg);
    expect(notifyBody(JSON.stringify(msg))).toBe(msg);
    expect(notifyBody(JSON.stringify({ messageId: "m", body: msg }))).toBe(msg);
    expect(JSON.parse(notifyBody(JSON.stringify({ messageId: "m", body: JSON.parse(msg) })))).toEqual(JSON.parse(msg));
    expect(notifyBody("{nope")).toBe("{nope");
  });
});
