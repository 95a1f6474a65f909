/**
 * The notify Lambda handler on real parts: DynamoDB Local for deliveries and the outbox, the local Slack
 * receiver (its real contract: 5xx, 429), email as .eml files. Messages are what the route's rule puts
 * on the queue: `{ route, event }` (test/integration/routes/rules.moto.test.ts checks the rule produces exactly that).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { Context, SQSEvent } from "aws-lambda";
import { createNotifyHandler } from "../../../../lib/app/lambda/notify.js";
import { parseNotifyMessage, MalformedNotifyMessage } from "../../../../lib/app/lambda/messages.js";
import { checkConfig } from "../../../../lib/config/load.js";
import { DynamoNotifyStore } from "../../../../lib/store/notify-store.js";
import { DynamoIngestStore } from "../../../../lib/store/ingest-store.js";
import { channelResolver } from "../../../../lib/notify/channel-resolver.js";
import { slackSender } from "../../../../lib/notify/slack/sender.js";
import { fileTransport } from "../../../../lib/notify/email/transport.js";
import { toEnvelope } from "../../../../lib/alerts/publish.js";
import { EXAMPLE_DETAILS } from "../../../fixtures/event-examples.js";
import { startSlackReceiver, type SlackReceiver } from "../../../../local/receivers/slack-receiver.js";
import { freshTable, TEST_RETENTION_MS } from "../../../support/dynamodb.js";

const context = { functionName: "notify", awsRequestId: "r", invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:notify" } as unknown as Context;
const silent = { info() {}, warn() {}, error() {} };

let slack: SlackReceiver;
let handler: ReturnType<typeof createNotifyHandler>;
let doc: DynamoDBDocumentClient;
let tableName: string;
let outboxDir: string;

beforeAll(async () => {
  slack = await startSlackReceiver();
  const t = await freshTable("notify-fn");
  tableName = t.tableName;
  doc = DynamoDBDocumentClient.from(t.client);
  outboxDir = mkdtempSync(join(tmpdir(), "lookout-mail-"));
  const env = { SLACK_BOT_TOKEN: "xoxb-1" };
  const config = checkConfig(
    {
      platform: { url: "http://127.0.0.1:1", token: "env:T" },
      watch: [{ organization: EXAMPLE_DETAILS["Deployment Failed"].organization.id }],
      routes: [{ name: "oncall", match: { kind: "deployment" }, slack: { channel: "#oncall", token: "env:SLACK_BOT_TOKEN" } }],
      notify: { email: { from: "lookout@example.com" }, fallback: { email: { to: ["fallback@example.com"] } } },
    },
    "test", {},
  );
  const now = () => new Date();
  handler = createNotifyHandler("slack", {
    routes: config.routes,
    notifier: {
      settings: config.notify,
      store: new DynamoNotifyStore({ client: t.client, tableName, retentionMs: TEST_RETENTION_MS }),
      outbox: new DynamoIngestStore({ client: t.client, tableName, retentionMs: TEST_RETENTION_MS }),
      channelFor: channelResolver({
        resolveSecret: async (ref) => env[ref.replace(/^env:/, "") as keyof typeof env],
        slack: slackSender({ slackApiUrl: slack.apiUrl, sleep: async () => {} }),
        email: { from: "lookout@example.com", transport: fileTransport(outboxDir) },
      }),
      now,
      log: silent,
    },
  });
});
afterAll(() => slack.close());

const sqsEvent = (...bodies: string[]): SQSEvent => ({
  Records: bodies.map((body, i) => ({
    messageId: `m${i}`, receiptHandle: "h", body, attributes: {} as never, messageAttributes: {}, md5OfBody: "",
    eventSource: "aws:sqs", eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:notify-slack", awsRegion: "us-east-1",
  })),
});
const message = (detail = EXAMPLE_DETAILS["Deployment Failed"], route = "oncall") =>
  JSON.stringify({ route, event: toEnvelope(detail, { account: "123456789012", region: "us-east-1", time: detail.observed_at, eventId: "e1" }) });

describe("notify-slack", () => {
  it("posts once, however often the queue delivers the message", async () => {
    const body = message();
    // Two copies in one batch: one posts; the other may find it still in flight and go back to the queue.
    expect((await handler(sqsEvent(body, body), context)).batchItemFailures.length).toBeLessThanOrEqual(1);
    // The redelivery finds it settled.
    expect((await handler(sqsEvent(body), context)).batchItemFailures).toEqual([]);
    expect(slack.messages).toHaveLength(1);
    expect(slack.messages[0]!.channel).toBe("#oncall");
  });

  it("when Slack keeps failing: the fallback gets it, a health event is raised, and the message is retried", async () => {
    slack.fail({ status: 500, times: 20 });
    const detail = { ...EXAMPLE_DETAILS["Deployment Failed"], id: "failing-receiver-alert" };
    const res = await handler(sqsEvent(message(detail)), context);
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: "m0" }]);
    expect(existsSync(outboxDir) ? readdirSync(outboxDir).filter((f) => f.includes(detail.id)) : []).toHaveLength(1);
    const items = (await doc.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }))).Items ?? [];
    const health = items.filter((i) => i.item_type === "alert" && i.detail?.transition === "receiver_failing");
    expect(health).toHaveLength(1);
    expect(health[0]!.detail.health.subject).toBe("slack #oncall");
    slack.reset();
    // The retry delivers to Slack; the fallback is not sent twice.
    expect((await handler(sqsEvent(message(detail)), context)).batchItemFailures).toEqual([]);
    expect(readdirSync(outboxDir).filter((f) => f.includes(detail.id))).toHaveLength(1);
  });

  it("skips an event for a route that no longer exists, and fails a malformed message", async () => {
    const res = await handler(sqsEvent(message(EXAMPLE_DETAILS["Deployment Failed"], "gone"), "{nope"), context);
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: "m1" }]);
    expect(() => parseNotifyMessage('{"route":"x"}')).toThrow(MalformedNotifyMessage);
    expect(() => parseNotifyMessage('{"route":"x"}')).toThrow(/\$\.event: is required/);
  });
});
