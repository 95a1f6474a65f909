/**
 * Faults of what Lookout depends on (issue 7): DynamoDB throttling (the real SDK exception, thrown
 * inside the SDK's retry loop by a middleware, since DynamoDB Local never throttles), Slack 429 storms
 * and 5xx (local Slack receiver), SMTP refusing (local SMTP receiver): retried, then failed and sent to
 * the fallback, with a health event in the outbox; nothing sent twice per receiver.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ProvisionedThroughputExceededException, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { createPlatformClient } from "../../../lib/platform/client.js";
import { DynamoIngestStore } from "../../../lib/store/ingest-store.js";
import { DynamoNotifyStore } from "../../../lib/store/notify-store.js";
import { pollSource, type PollDeps } from "../../../lib/poll/poll.js";
import { sourceKey, type SourceRef } from "../../../lib/model/source.js";
import { checkConfig } from "../../../lib/config/load.js";
import { notifyEvent } from "../../../lib/notify/notifier.js";
import { routeReceivers } from "../../../lib/config/route-types.js";
import { channelResolver } from "../../../lib/notify/channel-resolver.js";
import { slackSender } from "../../../lib/notify/slack/sender.js";
import { sesTransport, smtpTransport } from "../../../lib/notify/email/transport.js";
import type { EmailTransport } from "../../../lib/notify/types.js";
import { MessageRejected, SESv2Client, TooManyRequestsException } from "@aws-sdk/client-sesv2";
import type { LookoutEventDetail } from "../../../lib/model/event.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";
import { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../local/runtime/dynamodb-local.js";
import { OutboxStreamReader, outboxPublisher } from "../../../local/runtime/stream.js";
import { newAlertItem } from "../../../lib/alerts/outbox-item.js";
import { FakeEventBridge, byId } from "../../support/fake-eventbridge.js";
import { freshTable, TEST_RETENTION_MS, scanTable, dynamodbEndpoint } from "../../support/dynamodb.js";
import { startSlackReceiver, type SlackReceiver } from "../../../local/receivers/slack-receiver.js";
import { startSmtpReceiver, type SmtpReceiver } from "../../support/smtp-receiver.js";

const log = { info() {}, warn() {}, error() {} };
let client: DynamoDBClient;
let doc: DynamoDBDocumentClient;
let tableName: string;

/** Throttles the next `n` DynamoDB requests inside the SDK's retry loop, with the real exception. */
let throttleNext = 0;
let throttled = 0;

beforeAll(async () => {
  const t = await freshTable("faults-deps");
  client = t.client;
  tableName = t.tableName;
  doc = DynamoDBDocumentClient.from(client);
  client.middlewareStack.add(
    (next) => async (args) => {
      if (throttleNext > 0) {
        throttleNext--;
        throttled++;
        throw new ProvisionedThroughputExceededException({ message: "Rate of requests exceeds the allowed throughput.", $metadata: { httpStatusCode: 400 } });
      }
      return next(args);
    },
    { step: "deserialize", name: "fakeThrottle" },
  );
});
beforeEach(() => {
  throttleNext = 0;
  throttled = 0;
});

async function alertItems(): Promise<Array<{ detail: LookoutEventDetail }>> {
  const items = await scanTable(doc, tableName);
  return items.filter((i) => i.item_type === "alert") as unknown as Array<{ detail: LookoutEventDetail }>;
}

describe("DynamoDB throttling (ProvisionedThroughputExceededException)", () => {
  let sim: Simulator;
  let deps: PollDeps;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 91, size: { applications: 2, clusters: 1, webhooks: 1 } });
    const now = () => sim.clock.now();
    deps = {
      client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token", sleep: async () => {} }),
      store: new DynamoIngestStore({ client, tableName, retentionMs: TEST_RETENTION_MS, now }),
      now, backfillWindowMs: 15 * 60_000, log,
    };
  });
  afterAll(() => sim.close());
  const src = (i: number): SourceRef => ({ kind: "deployment", organizationId: sim.ids.organizationId, id: sim.ids.applicationIds[i]! });
  const mine = async (id: string) => (await alertItems()).filter((a) => a.detail.kind === "deployment" && a.detail.service?.id === id);

  it("a brief throttle is absorbed by the SDK's retries: the failure is alerted once", async () => {
    const s = src(0);
    await pollSource({ source: s }, deps);
    sim.scenario.deploy(s.id, { outcome: "DEPLOYMENT_ERROR" });
    sim.clock.advance(6 * 60_000);
    throttleNext = 2;
    const r = await pollSource({ source: s }, deps);
    expect(throttled).toBe(2);
    expect(r.ok).toBe(true);
    expect(r.alerts).toBe(1);
    expect(await mine(s.id)).toHaveLength(1);
  });

  it("a persistent throttle fails the poll, writes no cursor past unseen data, and the next poll alerts once", async () => {
    const s = src(1);
    await pollSource({ source: s }, deps);
    const cursor = await deps.store.getCursor(sourceKey(s));
    sim.scenario.deploy(s.id, { outcome: "BUILD_ERROR" });
    sim.clock.advance(6 * 60_000);
    throttleNext = 1_000;
    const r = await pollSource({ source: s }, deps);
    expect(r.ok).toBe(false);
    expect(r.error?.message).toMatch(/throughput/i);
    throttleNext = 0;
    expect(await deps.store.getCursor(sourceKey(s))).toEqual(cursor);
    expect(await mine(s.id)).toHaveLength(0);
    const again = await pollSource({ source: s }, deps);
    expect(again.ok).toBe(true);
    expect(again.alerts).toBe(1);
    await pollSource({ source: s }, deps);
    expect(await mine(s.id)).toHaveLength(1);
  });
});

describe("receivers failing: retried, then the fallback and a health event", () => {
  let slack: SlackReceiver;
  let smtp: SmtpReceiver;
  const slept: number[] = [];
  let clock = Date.parse("2026-04-01T10:00:00Z");
  const now = () => new Date(clock);
  const env: Record<string, string> = { SLACK_BOT_TOKEN: "xoxb-1" };
  type Notify = (detail: LookoutEventDetail, route: "slack" | "email") => ReturnType<typeof notifyEvent>;
  let notify: Notify;
  /** The same notifier, its email sent through SES whose client always throws `error`. */
  let notifyViaFailingSes: (error: Error) => Notify;
  let make: (transport: EmailTransport) => Notify;

  beforeAll(async () => {
    [slack, smtp] = await Promise.all([startSlackReceiver(), startSmtpReceiver()]);
    const config = checkConfig(
      {
        platform: { url: "http://127.0.0.1:1", token: "env:T" },
        watch: [{ organization: EXAMPLE_DETAILS["Deployment Failed"].organization.id }],
        routes: [
          { name: "slack", match: { kind: "deployment" }, slack: { channel: "#oncall", token: "env:SLACK_BOT_TOKEN" } },
          { name: "email", match: { kind: "deployment" }, email: { to: ["oncall@example.com"] } },
        ],
        notify: {
          email: { from: "lookout@example.com" },
          fallback: { email: { to: ["fallback@example.com"] }, slack: { channel: "#fallback", token: "env:SLACK_BOT_TOKEN" } },
        },
      },
      "test", {},
    );
    const store = new DynamoNotifyStore({ client, tableName, retentionMs: TEST_RETENTION_MS, now });
    const outbox = new DynamoIngestStore({ client, tableName, retentionMs: TEST_RETENTION_MS, now });
    make = (transport: EmailTransport): Notify => {
      const channelFor = channelResolver({
        resolveSecret: async (ref) => env[ref.replace(/^env:/, "")]!,
        slack: slackSender({ slackApiUrl: slack.apiUrl, sleep: async (ms) => void slept.push(ms), random: () => 0.5 }),
        email: { from: "lookout@example.com", transport },
      });
      return (detail, route) => {
        const r = config.routes.find((x) => x.name === route)!;
        return notifyEvent(detail, [{ route, receivers: routeReceivers(r) }], { settings: config.notify, store, outbox, channelFor, now, log });
      };
    };
    notify = make(smtpTransport(smtp.url, { timeoutMs: 3_000 }));
    notifyViaFailingSes = (error) => {
      const ses = new SESv2Client({ region: "us-east-1", credentials: { accessKeyId: "x", secretAccessKey: "y" } });
      ses.send = (async () => {
        throw error;
      }) as typeof ses.send;
      return make(sesTransport(ses, { sleep: async () => {} }));
    };
  });
  afterAll(async () => {
    await slack.close();
    await smtp.close();
  });
  beforeEach(() => {
    slack.reset();
    slept.length = 0;
    clock += 3_600_000; // health about a failing receiver is raised at most once an hour
  });

  let seq = 0;
  const alert = (): LookoutEventDetail => ({ ...EXAMPLE_DETAILS["Deployment Failed"], id: `deps-alert-${++seq}-${Date.now()}` });
  const health = async (subject: string) => (await alertItems()).filter((a) => a.detail.kind === "health" && JSON.stringify(a.detail).includes(subject));
  const slackTo = (channel: string, id: string) => slack.messages.filter((m) => m.channel === channel && JSON.stringify(m.body).includes(id));
  const mailsTo = (to: string, id: string) => smtp.messages.filter((m) => m.to.includes(to) && m.raw.includes(id.slice(0, 12)));

  it("a short Slack 429 storm honours Retry-After and then sends once", async () => {
    const a = alert();
    slack.fail({ status: 429, retryAfterSec: 3, times: 2 });
    const out = await notify(a, "slack");
    expect(out.map((d) => d.outcome)).toEqual(["sent"]);
    expect(slept.filter((ms) => ms >= 3_000)).toHaveLength(2);
    expect(slackTo("#oncall", a.id)).toHaveLength(1);
    expect(await notify(a, "slack")).toEqual([expect.objectContaining({ outcome: "duplicate" })]);
    expect(slackTo("#oncall", a.id)).toHaveLength(1);
  });

  it.each([
    ["a Slack 429 storm", { status: 429, retryAfterSec: 1, times: 50 }],
    ["Slack answering 503", { status: 503, times: 50 }],
  ] as const)("%s: failed after retries, fallback email once, a health event, then delivered once on redelivery", async (_n, fault) => {
    const a = alert();
    slack.fail(fault);
    const out = await notify(a, "slack");
    expect(out.find((d) => d.route === "slack")!.outcome).toBe("failed");
    expect(out.filter((d) => d.route === "fallback").map((d) => d.outcome)).toContain("sent");
    expect(slack.requests.filter((r) => r.status === fault.status).length).toBeGreaterThan(1); // retried
    expect(mailsTo("fallback@example.com", a.id)).toHaveLength(1);
    expect(await health("slack #oncall")).not.toHaveLength(0);
    slack.reset();
    const again = await notify(a, "slack");
    expect(again.map((d) => d.outcome)).toEqual(["sent"]);
    expect(slackTo("#oncall", a.id)).toHaveLength(1);
    expect(mailsTo("fallback@example.com", a.id)).toHaveLength(1);
  });

  it("the SMTP server refusing: failed, the Slack fallback gets it once, a health event", async () => {
    // Its own SMTP server: the receiver's faults outlast this test otherwise.
    const refusing = await startSmtpReceiver();
    try {
      const viaRefusing = make(smtpTransport(refusing.url, { timeoutMs: 3_000 }));
      const a = alert();
      refusing.fail({ phase: "mail", code: 451, message: "try again later", times: 1_000 });
      const out = await viaRefusing(a, "email");
      expect(out.find((d) => d.route === "email")!.outcome).toBe("failed");
      expect(refusing.messages).toHaveLength(0);
      expect(slackTo("#fallback", a.id)).toHaveLength(1);
      expect(await health("oncall@example.com")).not.toHaveLength(0);
      await viaRefusing(a, "email");
      expect(slackTo("#fallback", a.id)).toHaveLength(1); // the fallback is not sent twice
    } finally {
      await refusing.close();
    }
  });

  // Throttling may pass (retried later); a rejected message will not (rejected: not retried).
  it.each([
    ["throttled (TooManyRequestsException)", () => new TooManyRequestsException({ message: "Maximum sending rate exceeded.", $metadata: { httpStatusCode: 429 } }), "failed"],
    ["rejecting the message (MessageRejected)", () => new MessageRejected({ message: "Email address is not verified.", $metadata: { httpStatusCode: 400 } }), "rejected"],
  ] as const)("SES %s: the Slack fallback gets it once, a health event", async (_n, error, outcome) => {
    const viaSes = notifyViaFailingSes(error());
    const a = alert();
    const out = await viaSes(a, "email");
    expect(out.find((d) => d.route === "email")!.outcome).toBe(outcome);
    expect(slackTo("#fallback", a.id)).toHaveLength(1);
    expect(await health("oncall@example.com")).not.toHaveLength(0);
  });

  it("10 notifiers delivering the same alerts at once: one message per receiver", async () => {
    const alerts = [alert(), alert(), alert()];
    const runs = await Promise.all(Array.from({ length: 10 }, () => Promise.all(alerts.map(async (a) => [...(await notify(a, "slack")), ...(await notify(a, "email"))]))));
    const outcomes = runs.flat(2).map((d) => d.outcome);
    expect(outcomes.filter((o) => o === "sent")).toHaveLength(alerts.length * 2);
    expect(runs.flat(2).filter((d) => !["sent", "duplicate", "in_flight"].includes(d.outcome))).toEqual([]);
    for (const a of alerts) {
      expect(slackTo("#oncall", a.id)).toHaveLength(1);
      expect(mailsTo("oncall@example.com", a.id)).toHaveLength(1);
    }
  });
});

describe("PutEvents partial failures, through the table's outbox stream", () => {
  it("entries that keep failing leave the batch without a checkpoint; the next read publishes them; nothing lost", async () => {
    const t = await freshTable("faults-outbox");
    const store = new DynamoIngestStore({ client: t.client, tableName: t.tableName, retentionMs: TEST_RETENTION_MS });
    const base = EXAMPLE_DETAILS["Deployment Failed"];
    const ids = Array.from({ length: 12 }, (_, i) => `outbox-alert-${String(i).padStart(2, "0")}`);
    for (const id of ids) await store.raiseAlert(newAlertItem({ ...base, id }, base.observed_at, store.expiresAt()));
    // alert-03 is throttled for its first 2 attempts (retried within the call); alert-07 fails its
    // first 4 attempts: more than one publish allows (maxAttempts 3), so the batch must be read again.
    const bus = new FakeEventBridge().failFirst(2, byId(ids[3]!), "ThrottlingException").failFirst(4, byId(ids[7]!), "InternalFailure");
    const streams = new DynamoDBStreamsClient({ endpoint: dynamodbEndpoint(), region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
    const failures: string[] = [];
    const reader = new OutboxStreamReader({
      dynamodb: t.client, streams, tableName: t.tableName, dataDir: mkdtempSync(join(tmpdir(), "lookout-outbox-")),
      onRecords: outboxPublisher(bus, { busName: "lookout", maxAttempts: 3, sleep: async () => {}, random: () => 0.5 }, (r) => failures.push(...r.failed.map((f) => f.id))),
    });
    try {
      await expect(reader.drain()).rejects.toThrow(/not published/);
      expect(failures).toEqual([ids[7]]);
      expect(bus.acceptedIds()).not.toContain(ids[7]);
      await reader.drain(); // the batch again: alert-07 gets through (its 5th attempt)
      await reader.drain(); // checkpointed now: nothing more
    } finally {
      await reader.stop();
      streams.destroy();
    }
    const accepted = bus.acceptedIds();
    for (const id of ids) expect(accepted, id).toContain(id);
    expect(accepted.filter((id) => id === ids[7])).toHaveLength(1);
    expect(bus.attemptsOf(ids[3]!)).toBeGreaterThanOrEqual(3);
    // At-least-once: the others of the re-read batch may be put again (receivers deduplicate), at most twice.
    for (const id of ids) expect(accepted.filter((x) => x === id).length).toBeLessThanOrEqual(2);
  });
});
