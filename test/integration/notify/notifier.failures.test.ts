/**
 * Every failure ends in a delivered message or an explained suppression: a receiver whose secret is
 * missing or that Slack refuses for good goes to the fallback at once with one `Lookout Health` event
 * per episode (failures counted in the table, so separate processes count one run); events no route
 * matches go to the default route, on one machine and through the cloud's notify handler alike; and a
 * storm's held alerts go out as a digest when the flush runs, with nothing else arriving. Real parts:
 * DynamoDB Local, the local Slack receiver, email as .eml files.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { Context, SQSEvent } from "aws-lambda";
import { checkConfig, resolveSecret, type Config } from "../../../lib/config/load.js";
import { DynamoNotifyStore } from "../../../lib/store/notify-store.js";
import { DynamoIngestStore } from "../../../lib/store/ingest-store.js";
import { newAlertItem } from "../../../lib/alerts/outbox-item.js";
import { channelResolver } from "../../../lib/notify/channel-resolver.js";
import { slackSender } from "../../../lib/notify/slack/sender.js";
import { fileTransport, smtpTransport } from "../../../lib/notify/email/transport.js";
import { startSmtpReceiver } from "../../support/smtp-receiver.js";
import { flushDigests, notifyEvent, unfinished, type NotifierDeps } from "../../../lib/notify/notifier.js";
import { decideRoutes } from "../../../lib/routes/match.js";
import { formatWait } from "../../../lib/notify/view/index.js";
import { allReceivers, receiverId } from "../../../lib/config/receivers.js";
import { AuditTrail } from "../../../lib/audit/trail.js";
import { DynamoAuditItems } from "../../../lib/store/audit-store.js";
import { explanationLines } from "../../../lib/audit/output-formats.js";
import { toEnvelope } from "../../../lib/alerts/publish.js";
import type { LookoutEventDetail } from "../../../lib/model/event.js";
import { createNotifyHandler, FLUSH_DIGESTS } from "../../../lib/app/lambda/notify.js";
import { createDispatchHandler } from "../../../lib/app/lambda/dispatch.js";
import { heldKinds } from "../../../lib/app/dispatch-tick.js";
import { lambdaDigestFlusher, lambdaPollSender } from "../../../lib/app/cloud/invoke.js";
import { DynamoDispatchStore } from "../../../lib/store/dispatch-store.js";
import { watchlist } from "../../../lib/dispatch/watchlist.js";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { startLambdaAsync } from "../../support/lambda-async.js";
import { runLookout } from "../../../local/runtime/run.js";
import { PreflightError } from "../../../local/runtime/preflight.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";
import { startSlackReceiver, type SlackReceiver } from "../../../local/receivers/slack-receiver.js";
import { freshTable, TEST_RETENTION_MS } from "../../support/dynamodb.js";

const context = { functionName: "notify", awsRequestId: "r", invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:notify" } as unknown as Context;
const silent = { info() {}, warn() {}, error() {} };

let slack: SlackReceiver;
let client: DynamoDBClient;
let doc: DynamoDBDocumentClient;
let tableName: string;
let outboxDir: string;
let config: Config;
let env: Record<string, string | undefined>;
let clock = Date.parse("2026-03-02T15:00:00Z");
const now = () => new Date(clock);

beforeAll(async () => {
  slack = await startSlackReceiver();
  const t = await freshTable("notify-failures");
  client = t.client;
  tableName = t.tableName;
  doc = DynamoDBDocumentClient.from(t.client);
  outboxDir = mkdtempSync(join(tmpdir(), "lookout-failures-"));
  config = checkConfig(
    {
      platform: { url: "http://127.0.0.1:1", token: "env:T" },
      watch: [{ organization: EXAMPLE_DETAILS["Deployment Failed"].organization.id }],
      routes: [
        { name: "deploys", match: { kind: "deployment" }, slack: { webhook_url: "env:HOOK_DEPLOYS" } },
        { name: "api-team", match: { kind: "webhook_delivery" }, slack: { channel: "#api-team", token: "env:BOT" } },
      ],
      notify: {
        email: { from: "lookout@example.com" },
        slack_rate: { per_second: 1, burst: 1 },
        digest_within: "2m",
        default: { slack: { webhook_url: "env:HOOK_DEFAULT" } },
        fallback: { email: { to: ["fallback@example.com"] } },
      },
    },
    "test", {},
  );
});
afterAll(() => slack.close());
beforeEach(() => {
  slack.reset();
  env = { HOOK_DEPLOYS: slack.webhookUrl("T1/B1/deploys"), HOOK_DEFAULT: slack.webhookUrl("T1/B1/default"), BOT: "xoxb-1" };
});

/** The notifier as each process builds it (local/runtime/pipeline.ts, lib/app/cloud): nothing shared in memory. */
function process_(settings = config.notify): NotifierDeps {
  return {
    settings,
    store: new DynamoNotifyStore({ client, tableName, retentionMs: TEST_RETENTION_MS, now }),
    outbox: new DynamoIngestStore({ client, tableName, retentionMs: TEST_RETENTION_MS, now }),
    channelFor: channelResolver({
      resolveSecret: (ref) => resolveSecret(ref, env),
      slack: slackSender({ slackApiUrl: slack.apiUrl, sleep: async () => {} }),
      email: { from: "lookout@example.com", transport: fileTransport(outboxDir) },
    }),
    now,
    log: silent,
  };
}

/** The same, its email sent over SMTP (to a test receiver that can refuse for now). */
const emailOverSmtp = (url: string, settings = config.notify): NotifierDeps => ({
  ...process_(settings),
  channelFor: channelResolver({
    resolveSecret: (ref) => resolveSecret(ref, env),
    slack: slackSender({ slackApiUrl: slack.apiUrl, sleep: async () => {} }),
    email: { from: "lookout@example.com", transport: smtpTransport(url) },
  }),
});

let seq = 0;
/** An alert as raised (in the outbox, so explain finds it) and delivered as the local router does. */
async function raise(base: LookoutEventDetail, deps = process_()): Promise<LookoutEventDetail> {
  clock += 1_000; // within the budget of 1 a second, unless a test says otherwise
  const detail = { ...base, id: `${base.kind}-${++seq}-${clock}` };
  await deps.outbox.raiseAlert(newAlertItem(detail, now().toISOString(), deps.outbox.expiresAt()));
  return detail;
}
const local = (detail: LookoutEventDetail, deps = process_()) => notifyEvent(detail, decideRoutes(detail, config.routes, config.notify), deps);

const healthEvents = async () =>
  ((await doc.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }))).Items ?? []).filter(
    (i) => i.item_type === "alert" && i.detail?.transition === "receiver_failing",
  );
const mails = (id: string) => (existsSync(outboxDir) ? readdirSync(outboxDir).filter((f) => f.includes(id)) : []);
const posted = (name: string) => slack.messages.filter((m) => m.form === "webhook" && m.path?.endsWith(name));

const sqsEvent = (...bodies: string[]): SQSEvent => ({
  Records: bodies.map((body, i) => ({
    messageId: `m${i}`, receiptHandle: "h", body, attributes: {} as never, messageAttributes: {}, md5OfBody: "",
    eventSource: "aws:sqs", eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:notify-slack", awsRegion: "us-east-1",
  })),
});
const message = (detail: LookoutEventDetail, route: string) =>
  JSON.stringify({ route, event: toEnvelope(detail, { account: "123456789012", region: "us-east-1", time: detail.observed_at, eventId: "e1" }) });

describe("a receiver whose secret is unset", () => {
  it("lookout run refuses to start, in one line naming the variable", async () => {
    const run = runLookout({ config, env: { ...env, HOOK_DEPLOYS: undefined, HOOK_DEFAULT: "" }, once: true, log: silent, print: () => {} });
    await expect(run).rejects.toThrow(PreflightError);
    await expect(run).rejects.toThrow(
      "HOOK_DEPLOYS is not set (routes[0].slack.webhook_url read env:HOOK_DEPLOYS); HOOK_DEFAULT is not set (notify.default.slack.webhook_url read env:HOOK_DEFAULT): export them, or `lookout check-config` to see every secret; a receiver without its secret cannot send",
    );
  });

  it("removed after start: the alert goes to the fallback at once, one health event per episode, explain tells it", async () => {
    clock += 3_600_000;
    delete env.HOOK_DEPLOYS;
    const first = await raise(EXAMPLE_DETAILS["Deployment Failed"]);
    const deliveries = await local(first);
    expect(deliveries).toEqual([
      { route: "fallback", receiver: "email fallback@example.com", outcome: "sent" },
      { route: "deploys", receiver: "slack webhook env:HOOK_DEPLOYS", outcome: "rejected" },
    ]);
    expect(unfinished(deliveries)).toBe(false); // retrying cannot set a variable: not retried
    expect(mails(first.id)).toHaveLength(1);
    expect(await healthEvents()).toHaveLength(1);

    // Another process (a separate `lookout run --once`, another Lambda) fails the same receiver: the run
    // continues in the table, and it is still the same episode: no second health event.
    const second = await raise(EXAMPLE_DETAILS["Deployment Failed"]);
    clock += 60_000;
    expect((await local(second, process_())).map((d) => d.outcome)).toEqual(["sent", "rejected"]);
    const store = process_().store;
    const receiver = receiverId(config.routes[0]!.slack[0]!);
    expect(await store.receiverFailures(receiver)).toMatchObject({ consecutive_failures: 2, receiver_label: "slack webhook env:HOOK_DEPLOYS" });
    const health = await healthEvents();
    expect(health).toHaveLength(1);
    expect(health[0]!.detail.summary).toContain("HOOK_DEPLOYS is not set");
    expect(JSON.stringify(health)).not.toContain("/services/"); // never a secret's value

    const explained = (await new AuditTrail(new DynamoAuditItems({ client, tableName })).explain(first.id))!;
    const lines = explanationLines(explained).join("\n");
    expect(lines).toContain("route deploys → slack webhook env:HOOK_DEPLOYS: failed");
    expect(lines).toContain("HOOK_DEPLOYS is not set");
    expect(lines).toContain("not retried: retrying cannot fix this failure");
    expect(lines).toContain(`raised health event ${health[0]!.detail.id} (receiver_failing)`);
    expect(lines).toContain("route fallback → email fallback@example.com: sent");
    expect(explained.alerts[0]!.verdict).toMatch(
      /^told: not slack webhook env:HOOK_DEPLOYS \(route deploys\): failed after 1 attempt\(s\) \(.*HOOK_DEPLOYS is not set.*\), not retried: retrying cannot fix it; health event [\w-]+ raised \(receiver_failing\); email fallback@example\.com \(the fallback, after a receiver failed\)$/,
    );

    // Set again: the next alert gets through and ends the run; a later failure is a new episode.
    env.HOOK_DEPLOYS = slack.webhookUrl("T1/B1/deploys");
    expect((await local(await raise(EXAMPLE_DETAILS["Deployment Failed"]))).map((d) => d.outcome)).toEqual(["sent"]);
    expect(await store.receiverFailures(receiver)).toBeUndefined();
    delete env.HOOK_DEPLOYS;
    clock += 60_000;
    await local(await raise(EXAMPLE_DETAILS["Deployment Failed"]));
    expect(await healthEvents()).toHaveLength(2);
    env.HOOK_DEPLOYS = slack.webhookUrl("T1/B1/deploys");
    expect((await local(await raise(EXAMPLE_DETAILS["Deployment Failed"]))).map((d) => d.outcome)).toEqual(["sent"]);
  });
});

describe("a receiver Slack refuses for good", () => {
  it("webhook 404 no_service, Web API channel_not_found: the fallback at once, one health event each, no retries", async () => {
    clock += 3_600_000;
    const before = (await healthEvents()).length;
    slack.fail({ form: "webhook", status: 404, error: "no_service", times: 100 });
    const a = await raise(EXAMPLE_DETAILS["Deployment Failed"]);
    const d1 = await local(a);
    expect(d1.map((d) => [d.route, d.outcome])).toEqual([["fallback", "sent"], ["deploys", "rejected"]]);
    expect(unfinished(d1)).toBe(false);

    slack.fail({ form: "api", error: "channel_not_found", times: 100 });
    const b = await raise(EXAMPLE_DETAILS["Webhook Delivery Failed"]);
    // The cloud path: the message is not sent back to the queue (no endless retries).
    const handler = createNotifyHandler("slack", { routes: config.routes, notifier: process_() });
    expect((await handler(sqsEvent(message(b, "api-team")), context)).batchItemFailures).toEqual([]);
    expect(mails(a.id)).toHaveLength(1);
    expect(mails(b.id)).toHaveLength(1);
    const health = (await healthEvents()).slice(before);
    expect(health.map((h) => h.detail.health.subject).sort()).toEqual(["slack #api-team", "slack webhook env:HOOK_DEPLOYS"]);
    expect(slack.messages).toEqual([]);
  });
});

describe("a receiver refused for good while the fallback fails for now", () => {
  it("is delivered again, in the cloud and on one machine, until the fallback shows it", async () => {
    clock += 3_600_000;
    const smtp = await startSmtpReceiver();
    try {
      const overSmtp = () => emailOverSmtp(smtp.url);
      slack.fail({ form: "webhook", status: 404, error: "no_service", times: 100 });
      smtp.fail({ phase: "rcpt", code: 451, message: "try again later", times: 1 });
      const a = await raise(EXAMPLE_DETAILS["Deployment Failed"]);
      // The cloud path: the message goes back to the queue, though the receiver's refusal is for good.
      const handler = createNotifyHandler("slack", { routes: config.routes, notifier: overSmtp() });
      expect((await handler(sqsEvent(message(a, "deploys")), context)).batchItemFailures).toEqual([{ itemIdentifier: "m0" }]);
      expect(smtp.messages).toEqual([]);
      // Delivered again (SQS, or the local retry file): the fallback takes it; nothing is retried after.
      clock += 60_000;
      const again = await local(a, overSmtp());
      expect(again.map((d) => [d.route, d.outcome])).toEqual([["fallback", "sent"], ["deploys", "rejected"]]);
      expect(unfinished(again)).toBe(false);
      expect(smtp.messages.map((m) => m.to)).toEqual([["fallback@example.com"]]);
    } finally {
      await smtp.close();
    }
  });
});

describe("a Slack token rotated in its store", () => {
  it("reaches a running process: the message Slack refused goes to the fallback, the next is posted with the new token", async () => {
    clock += 3_600_000;
    const deps = process_(); // one process: its channels are built once and kept
    slack.tokens = new Set(["xoxb-rotated"]);
    try {
      env.BOT = "xoxb-revoked";
      const a = await raise(EXAMPLE_DETAILS["Webhook Delivery Failed"], deps);
      expect((await local(a, deps)).map((d) => [d.route, d.outcome])).toEqual([["fallback", "sent"], ["api-team", "rejected"]]);
      expect(mails(a.id)).toHaveLength(1);

      env.BOT = "xoxb-rotated";
      const b = await raise({ ...EXAMPLE_DETAILS["Webhook Delivery Failed"], webhook: { id: "wh-rotated", name: "rotated" } }, deps);
      expect((await local(b, deps)).map((d) => [d.route, d.outcome])).toEqual([["api-team", "sent"]]);
      expect(slack.messages.filter((m) => m.form === "api").map((m) => [m.channel, m.token])).toEqual([["#api-team", "xoxb-rotated"]]);
      expect(mails(b.id)).toHaveLength(0);
    } finally {
      delete slack.tokens;
    }
  });
});

describe("the default route", () => {
  it("takes what no route matches, on one machine and through the cloud's notify handler alike", async () => {
    clock += 3_600_000;
    const cluster = await raise(EXAMPLE_DETAILS["Cluster Error"]);
    expect(decideRoutes(cluster, config.routes, config.notify).map((d) => d.route)).toEqual(["default"]);
    expect(await local(cluster)).toEqual([{ route: "default", receiver: "slack webhook env:HOOK_DEFAULT", outcome: "sent" }]);
    expect(posted("default")).toHaveLength(1);

    // The default route's rule takes every event: the handler keeps what no route matches, skips the rest.
    const handler = createNotifyHandler("slack", { routes: config.routes, notifier: process_() });
    const another = await raise(EXAMPLE_DETAILS["Cluster Error"]);
    const deployment = await raise(EXAMPLE_DETAILS["Deployment Failed"]);
    expect((await handler(sqsEvent(message(another, "default"), message(deployment, "default")), context)).batchItemFailures).toEqual([]);
    expect(posted("default").map((m) => m.text)).toHaveLength(2);
    expect(posted("deploys")).toHaveLength(0);
    // The email function has no email receiver on the default route: nothing to do.
    const email = createNotifyHandler("email", { routes: config.routes, notifier: process_() });
    expect((await email(sqsEvent(message(another, "default")), context)).batchItemFailures).toEqual([]);
    expect(mails(another.id)).toEqual([]);

    const explained = (await new AuditTrail(new DynamoAuditItems({ client, tableName })).explain(cluster.id))!;
    expect(explained.alerts[0]!.verdict).toBe("told: slack webhook env:HOOK_DEFAULT (the default route: no route matched it)");
  });
});

describe("a storm's digest", () => {
  it("goes out at the flush though nothing else arrives, each held alert recorded as sent in it, with how long it waited", async () => {
    clock += 3_600_000;
    // A budget of one message per 100 s: six alerts within 6 s are a storm.
    const tight = { ...config.notify, slackRate: { perSecond: 0.01, burst: 1, perHour: 60 } };
    const deps = process_(tight);
    const storm = [];
    for (let i = 0; i < 6; i++) storm.push(await raise({ ...EXAMPLE_DETAILS["Deployment Failed"], summary: `storm alert ${i}` }));
    clock -= 6_000;
    const outcomes = [];
    for (const a of storm) {
      clock += 1_000;
      outcomes.push(...(await local(a, deps)).map((d) => d.outcome));
    }
    expect(outcomes).toEqual(["sent", "held", "held", "held", "held", "held"]);
    expect(posted("deploys")).toHaveLength(1);

    // Nothing else arrives. Within digest_within (2m) the flush runs: locally the run loop, in the cloud
    // dispatch's tick, which finds alerts held for a Slack receiver and invokes the Slack notify function
    // (asynchronously: Lambda's Invoke API, test/support/lambda-async.ts). Here the cloud's, then the
    // local one finds nothing.
    clock += 100_000; // the budget (0.01/s) has a token again
    const lambda = await startLambdaAsync();
    const lambdaClient = new LambdaClient(lambda.clientConfig);
    try {
      lambda.register("notify-slack", createNotifyHandler("slack", { routes: config.routes, notifier: process_(tight) }));
      lambda.register("notify-email", createNotifyHandler("email", { routes: config.routes, notifier: process_(tight) }));
      lambda.register("poll", async () => undefined);
      const digests = { held: heldKinds(deps.store, allReceivers(config.routes, config.notify)), ...lambdaDigestFlusher(lambdaClient, { slack: "notify-slack", email: "notify-email", http: "notify-http" }) };
      const tick = createDispatchHandler({ store: new DynamoDispatchStore({ client, tableName }), watch: watchlist(config), polls: lambdaPollSender(lambdaClient, "poll"), digests, now: () => clock });
      expect((await tick({}, context)).flushed).toEqual(["slack"]);
      expect(lambda.accepted.filter((a) => a.name.startsWith("notify"))).toEqual([{ name: "notify-slack", event: { lookout: FLUSH_DIGESTS } }]);
      await lambda.drain();
      expect(lambda.failed).toEqual([]);
      // Nothing held any more: the next tick invokes no notify function.
      expect((await tick({}, context)).flushed).toEqual([]);
    } finally {
      lambdaClient.destroy();
      await lambda.close();
    }
    expect(await flushDigests(allReceivers(config.routes, config.notify), deps)).toBe(0);
    const digests = posted("deploys").slice(1);
    expect(digests).toHaveLength(1);
    const text = JSON.stringify(digests[0]!.blocks);
    expect(text).toContain("5 alerts held back");
    // Each says how long it waited: from its arrival until the flush, 100 s after the last one came.
    for (let i = 1; i < 6; i++) expect(text).toContain(`storm alert ${i} (held ${formatWait(100_000 + (5 - i) * 1_000)})`);
    expect(text).toContain("storm alert 5 (held 1m 40s)");
    const store = deps.store;
    for (const a of storm.slice(1)) {
      const [record] = await store.deliveriesOf(a.id);
      expect(record).toMatchObject({ state: "sent", digest_id: expect.stringMatching(/^digest-/) });
    }
    expect(await store.heldFor(receiverId(config.routes[0]!.slack[0]!))).toEqual([]);
  });

  it("refused for good at the flush (the webhook revoked): what it held goes to the fallback, recorded so, never held forever", async () => {
    clock += 3_600_000;
    const tight = { ...config.notify, slackRate: { perSecond: 0.01, burst: 1, perHour: 60 } };
    const deps = process_(tight);
    const storm = [];
    for (let i = 0; i < 3; i++) storm.push(await raise({ ...EXAMPLE_DETAILS["Deployment Failed"], summary: `revoked ${i}` }));
    expect((await Promise.all(storm.map(async (a) => (await local(a, deps)).map((d) => d.outcome)))).flat().sort()).toEqual(["held", "held", "sent"]);
    const held = (await Promise.all(storm.map(async (a) => (await deps.store.deliveriesOf(a.id))[0]!))).filter((r) => r.state === "held");

    clock += 100_000;
    slack.fail({ form: "webhook", status: 404, error: "no_service", times: 10 });
    // What the revoked webhook's digest held went to the fallback; a held alert goes out in the fallback's
    // own digest, which this flush sends too when the fallback's budget allows it.
    const inDigests = await flushDigests(allReceivers(config.routes, config.notify), deps);
    for (const r of held) {
      const records = await deps.store.deliveriesOf(r.alert_id);
      expect(records.find((x) => x.route === "deploys")).toMatchObject({ state: "failed", permanent: true, error: expect.stringContaining("no_service"), health_id: expect.any(String) });
      // The fallback has the same tight budget: sent, or held for the fallback's own digest.
      expect(["sent", "held"]).toContain(records.find((x) => x.route === "fallback")!.state);
    }
    const inFallbackDigest = (await Promise.all(held.map(async (r) => (await deps.store.deliveriesOf(r.alert_id)).find((x) => x.route === "fallback")!)))
      .filter((x) => x.state === "sent" && x.digest_id).length;
    expect(inDigests).toBe(inFallbackDigest);
    // Sent on its own, a mail each (a digest's mail is named after the digest).
    expect(held.flatMap((r) => mails(r.alert_id))).toHaveLength(held.length - inFallbackDigest);
    expect(await deps.store.heldFor(receiverId(config.routes[0]!.slack[0]!))).toEqual([]);
  });

  it("refused for good at the flush while the fallback fails for now: what it held stays held, and goes to the fallback at the next flush", async () => {
    clock += 3_600_000;
    const smtp = await startSmtpReceiver();
    try {
      // A fallback of its own: its budget untouched by the tests before.
      const tight = { ...config.notify, slackRate: { perSecond: 0.01, burst: 1, perHour: 60 }, fallback: { email: { ...config.notify.fallback!.email!, to: ["fallback-2@example.com"] } } };
      const deps = emailOverSmtp(smtp.url, tight);
      const storm = [];
      for (let i = 0; i < 2; i++) storm.push(await raise({ ...EXAMPLE_DETAILS["Deployment Failed"], summary: `revoked, fallback down ${i}` }));
      expect((await Promise.all(storm.map(async (a) => (await local(a, deps)).map((d) => d.outcome)))).flat().sort()).toEqual(["held", "sent"]);
      const receiver = receiverId(config.routes[0]!.slack[0]!);
      const mine = new Set(storm.map((a) => a.id));
      const heldHere = async () => (await deps.store.heldFor(receiver)).filter((h) => mine.has(h.detail.id)).map((h) => h.detail.id);
      const [held] = await heldHere();
      // What reaches this test's fallback (the flush sends the other receivers' digests too).
      const fallbackMail = () => smtp.messages.filter((m) => m.to.includes("fallback-2@example.com")).map((m) => m.parsed.text);

      clock += 100_000;
      slack.fail({ form: "webhook", status: 404, error: "no_service", times: 10 });
      smtp.fail({ phase: "rcpt", code: 451, message: "try again later", times: 1 });
      await flushDigests(allReceivers(config.routes, config.notify), deps);
      expect(await heldHere()).toEqual([held]);
      expect(fallbackMail()).toEqual([]);

      clock += 200_000; // the digest's budget refilled
      await flushDigests(allReceivers(config.routes, config.notify), deps);
      expect(await heldHere()).toEqual([]);
      expect(fallbackMail()).toEqual([expect.stringContaining(`Alert:                 ${held}`)]);
      expect((await deps.store.deliveriesOf(held!)).find((x) => x.route === "deploys")).toMatchObject({ state: "failed", permanent: true });
    } finally {
      await smtp.close();
    }
  });
});
