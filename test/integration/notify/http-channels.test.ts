/**
 * PagerDuty, the generic webhook and Teams, each against its test receiver (local/receivers/http-receivers.ts, real
 * HTTP servers speaking the documented contracts): what a person sees there through an incident (open,
 * follow-ups, repeat, close), the retries (429 after Retry-After, 5xx, network), what is never retried
 * (400, a redirect to another host), and the never-silent rule through the delivery core on DynamoDB
 * Local: a permanent failure goes to the fallback at once and raises one `receiver_failing`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { LookoutEventDetail } from "../../../lib/model/event.js";
import { checkConfig, resolveSecret, type Config } from "../../../lib/config/load.js";
import { receiverId } from "../../../lib/config/receivers.js";
import { httpSender, HttpDeliveryError } from "../../../lib/notify/http/post.js";
import { httpChannels, pagerDutyChannel, teamsChannel, webhookChannel } from "../../../lib/notify/http-channels.js";
import { channelResolver } from "../../../lib/notify/channel-resolver.js";
import { fileTransport } from "../../../lib/notify/email/transport.js";
import { flushDigests, notifyEvent, unfinished, type NotifierDeps } from "../../../lib/notify/notifier.js";
import { decideRoutes } from "../../../lib/routes/match.js";
import { newAlertItem } from "../../../lib/alerts/outbox-item.js";
import { DynamoNotifyStore } from "../../../lib/store/notify-store.js";
import { DynamoIngestStore } from "../../../lib/store/ingest-store.js";
import { slackSender } from "../../../lib/notify/slack/sender.js";
import { startPagerDutyReceiver, startTeamsReceiver, startWebhookReceiver, type PagerDutyReceiver, type TeamsReceiver, type WebhookReceiver } from "../../../local/receivers/http-receivers.js";
import { DEPLOYMENT_INCIDENT } from "../../golden/incident-inputs.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";
import { freshTable, TEST_RETENTION_MS } from "../../support/dynamodb.js";

/** A port nobody listens on (fetch refuses well-known "bad ports" such as 1 before connecting). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const ROUTING_KEY = "R0UT1NGKEY0123456789abcdefABCDEF";
const SECRET = "whsec-local-0123456789";
const [OPENING, STILL_1, STILL_2, REPEAT, CHANGES, CLOSE] = DEPLOYMENT_INCIDENT as [LookoutEventDetail, LookoutEventDetail, LookoutEventDetail, LookoutEventDetail, LookoutEventDetail, LookoutEventDetail];
const who = (id: string) => ({ id, label: id });

let pd: PagerDutyReceiver;
let hook: WebhookReceiver;
let teams: TeamsReceiver;
/** Each wait the sender would have slept (none is slept: the tests do not wait). */
let waits: Array<{ delayMs: number; status?: number; service: string }>;
const sender = () => httpSender({ sleep: async () => {}, random: () => 0, onRetry: (i) => void waits.push(i) });

beforeAll(async () => {
  [pd, hook, teams] = await Promise.all([startPagerDutyReceiver(), startWebhookReceiver({ secret: SECRET }), startTeamsReceiver()]);
});
afterAll(async () => {
  await Promise.all([pd.close(), hook.close(), teams.close()]);
});
beforeEach(() => {
  pd.reset();
  hook.reset();
  teams.reset();
  waits = [];
});

describe("PagerDuty Events API v2", () => {
  const channel = () => pagerDutyChannel(who("pd"), { routingKey: ROUTING_KEY, baseUrl: pd.url }, sender());

  it("an incident is one PagerDuty alert: triggered by the opening, follow-ups in its log, resolved by the close", async () => {
    const c = channel();
    for (const d of [OPENING, STILL_1, CHANGES, CLOSE]) await c.send(d, d === OPENING ? undefined : { first: OPENING, shown: true });
    expect(pd.alerts).toHaveLength(1);
    const [alert] = pd.alerts;
    expect(alert).toMatchObject({ dedupKey: OPENING.id, status: "resolved", severity: "critical" });
    expect(alert!.log.map((e) => e.event_action)).toEqual(["trigger", "trigger", "trigger", "resolve"]);
    expect(alert!.summary).toContain("deployment failed");
    // After its close, the service failing again is a new PagerDuty alert (a new incident).
    await c.send({ ...OPENING, id: "second-incident", incident_id: "second-incident" });
    expect(pd.alerts.map((a) => a.status)).toEqual(["resolved", "triggered"]);
  });

  it("429 and 5xx are retried with backoff; 400 is not, and says why without the routing key", async () => {
    pd.fail({ status: 429, times: 2 });
    pd.fail({ status: 502 });
    await channel().send(OPENING);
    expect(pd.requests.map((r) => r.status)).toEqual([429, 429, 502, 202]);
    expect(waits.map((w) => w.status)).toEqual([429, 429, 502]);

    const c = pagerDutyChannel(who("pd"), { routingKey: "too-short", baseUrl: pd.url }, sender());
    const err = await c.send(OPENING).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpDeliveryError);
    expect(err).toMatchObject({ retryable: false, status: 400 });
    expect((err as Error).message).toBe("PagerDuty answered HTTP 400 (Event object is invalid: 'routing_key' is invalid)");
    expect(pd.requests.at(-1)!.status).toBe(400);
  });

  it("an event it took but answered too late for is sent again: PagerDuty keeps one alert for its dedup_key", async () => {
    pd.fail({ lateMs: 1_000, times: 2 });
    const c = pagerDutyChannel(who("pd"), { routingKey: ROUTING_KEY, baseUrl: pd.url }, httpSender({ sleep: async () => {}, random: () => 0, timeoutMs: 200 }));
    await c.send(OPENING);
    expect(pd.requests).toHaveLength(3);
    expect(pd.alerts).toHaveLength(1);
  });

  it("a 429 that outlasts the attempts is retryable for the queue, the attempts bounded", async () => {
    pd.fail({ status: 429, times: 10 });
    const err = await channel().send(OPENING).catch((e: unknown) => e);
    expect(err).toMatchObject({ retryable: true, status: 429 });
    expect(pd.requests).toHaveLength(4);
  });
});

describe("generic webhook", () => {
  const channel = (secret = SECRET, url = hook.hookUrl()) => webhookChannel(who("whk"), { url, signingSecret: secret }, sender());

  it("each event signed and received once, with its place in the incident", async () => {
    const c = channel();
    await c.send(OPENING);
    await c.send(STILL_1, { first: OPENING, shown: true });
    await c.send(CLOSE, { first: OPENING, shown: true });
    expect(hook.refused).toEqual([]);
    expect(hook.deliveries.map((d) => [d.id, (d.body.incident as { role: string }).role])).toEqual([[OPENING.id, "opening"], [STILL_1.id, "follow_up"], [CLOSE.id, "close"]]);
    expect(hook.deliveries[1]!.body.incident).toMatchObject({ root_alert_id: OPENING.id });
  });

  it("a retry after a 503 or a network failure is signed afresh and received once", async () => {
    hook.fail({ status: 503, retryAfterSec: 1 });
    await channel().send(OPENING);
    expect(hook.requests.map((r) => r.status)).toEqual([503, 200]);
    expect(waits[0]!.delayMs).toBeGreaterThanOrEqual(1000);
    expect(hook.deliveries).toHaveLength(1);

    const refused = await webhookChannel(who("whk"), { url: `http://127.0.0.1:${await closedPort()}/hooks/x`, signingSecret: SECRET }, sender()).send(OPENING).catch((e: unknown) => e);
    expect(refused).toMatchObject({ retryable: true });
    expect((refused as Error).message).toMatch(/^webhook request failed \(ECONNREFUSED\)/);
  });

  it("an event it took but answered too late for is sent again, signed afresh: its receiver keeps one", async () => {
    hook.fail({ lateMs: 1_000, times: 2 });
    await webhookChannel(who("whk"), { url: hook.hookUrl(), signingSecret: SECRET }, httpSender({ sleep: async () => {}, random: () => 0, timeoutMs: 200 })).send(OPENING);
    expect(hook.requests).toHaveLength(3);
    expect(hook.deliveries).toHaveLength(1);
  });

  it("a signature the receiver refuses is a permanent failure", async () => {
    const err = await channel("not-the-secret").send(OPENING).catch((e: unknown) => e);
    expect(err).toMatchObject({ retryable: false, status: 401 });
    expect(hook.refused).toEqual(["bad signature"]);
  });

  it("a redirect to another host is never followed and names the host; one to the same host is", async () => {
    hook.fail({ status: 307, location: "https://elsewhere.example/steal" });
    const err = await channel().send(OPENING).catch((e: unknown) => e);
    expect(err).toMatchObject({ retryable: false, status: 307 });
    expect((err as Error).message).toBe("webhook answered HTTP 307, a redirect to another host (elsewhere.example), not followed");
    expect(hook.requests).toHaveLength(1);

    hook.fail({ status: 308, location: "/hooks/moved" });
    await channel().send(OPENING);
    expect(hook.deliveries.map((d) => d.path)).toEqual(["/hooks/moved"]);
  });
});

describe("Teams through a Workflows webhook", () => {
  const channel = () => teamsChannel(who("teams"), { url: teams.workflowUrl() }, sender());

  it("cards for the opening, a follow-up quoting it, and the close", async () => {
    const c = channel();
    await c.send(OPENING);
    await c.send(STILL_1, { first: OPENING, shown: true });
    await c.send(CLOSE, { first: OPENING, shown: true });
    expect(teams.posts).toHaveLength(3);
    expect(teams.posts[0]!.text).toMatch(/^🚨 FAILED — Deployment failed: api/);
    expect(teams.posts[1]!.text).toContain("↪ Follow-up of the alert of 2026-03-02 14:07:31 UTC");
    expect(teams.posts[2]!.text).toMatch(/✅ Resolved after 55m/);
    expect(teams.posts[2]!.text).toContain("api (storefront/production) recovered");
  });

  it("a digest names the channel it is read in, never the workflow URL's secret reference", async () => {
    const c = teamsChannel({ id: "teams-x", label: "teams env:TEAMS_URL" }, { url: teams.workflowUrl() }, sender());
    const before = teams.posts.length;
    await c.sendDigest([OPENING, STILL_1], { from: OPENING.occurred_at, to: STILL_1.occurred_at, id: "digest-t" });
    const card = teams.posts.slice(before).map((p) => p.text).join("\n");
    expect(card).toContain("for this channel");
    expect(card).not.toContain("env:TEAMS_URL");
  });

  it("a card it took but answered too late for is sent again once at most: two at most, then the delivery retries later", async () => {
    const slow = (n: number) => {
      teams.reset();
      teams.fail({ lateMs: 1_000, times: n });
      return teamsChannel(who("teams"), { url: teams.workflowUrl() }, httpSender({ sleep: async () => {}, random: () => 0, timeoutMs: 200 })).send(OPENING);
    };
    // One slow answer: sent again, and the second is answered (no fallback for one slow answer).
    await slow(1);
    expect(teams.posts).toHaveLength(2);
    // Slow every time: two cards, never the four the retry policy allows, and a failure the delivery retries.
    const err = await slow(4).catch((e: unknown) => e);
    expect(err).toMatchObject({ retryable: true });
    expect((err as Error).message).toContain("it may have arrived");
    expect(teams.posts).toHaveLength(2);
  });

  it("429 waits its Retry-After; 400 is permanent", async () => {
    teams.fail({ status: 429, retryAfterSec: 3 });
    await channel().send(OPENING);
    expect(teams.requests.map((r) => r.status)).toEqual([429, 202]);
    expect(waits[0]).toMatchObject({ status: 429, service: "Teams" });
    expect(waits[0]!.delayMs).toBeGreaterThanOrEqual(3000);

    teams.fail({ status: 400, body: JSON.stringify({ error: { code: "InvalidRequestContent", message: "card body must be a non-empty list" } }) });
    const err = await channel().send(OPENING).catch((e: unknown) => e);
    expect(err).toMatchObject({ retryable: false, status: 400 });
    expect((err as Error).message).toBe("Teams answered HTTP 400 (InvalidRequestContent: card body must be a non-empty list)");
    expect((err as Error).message).not.toContain("sig=");
  });
});

describe("through the delivery core: never silent", () => {
  let client: DynamoDBClient;
  let doc: DynamoDBDocumentClient;
  let tableName: string;
  let outboxDir: string;
  let config: Config;
  let clock = Date.parse("2026-03-02T15:00:00Z");
  const now = () => new Date(clock);
  const env: Record<string, string> = {};

  beforeAll(async () => {
    ({ client, tableName } = await freshTable("http-receivers"));
    doc = DynamoDBDocumentClient.from(client);
    outboxDir = mkdtempSync(join(tmpdir(), "lookout-http-receivers-"));
    config = checkConfig(
      {
        platform: { url: "http://127.0.0.1:1", token: "env:T" },
        watch: [{ organization: EXAMPLE_DETAILS["Deployment Failed"].organization.id }],
        routes: [{
          name: "oncall",
          match: { kind: "deployment" },
          pagerduty: { routing_key: "env:PD_KEY" },
          webhook: { url: "env:HOOK_URL", signing_secret: "env:HOOK_SECRET" },
          teams: { url: "env:TEAMS_URL" },
        }],
        notify: { email: { from: "lookout@example.com" }, fallback: { email: { to: ["fallback@example.com"] } } },
      },
      "test", {},
    );
  });
  afterAll(() => rmSync(outboxDir, { recursive: true, force: true }));
  beforeEach(() => {
    Object.assign(env, { PD_KEY: ROUTING_KEY, HOOK_URL: hook.hookUrl(), HOOK_SECRET: SECRET, TEAMS_URL: teams.workflowUrl() });
  });

  const deps = (): NotifierDeps => ({
    settings: config.notify,
    store: new DynamoNotifyStore({ client, tableName, retentionMs: TEST_RETENTION_MS, now }),
    outbox: new DynamoIngestStore({ client, tableName, retentionMs: TEST_RETENTION_MS, now }),
    channelFor: channelResolver({
      resolveSecret: (ref) => resolveSecret(ref, env),
      slack: slackSender(),
      httpChannel: httpChannels({ sender: sender(), pagerDutyUrl: pd.url }),
      email: { from: "lookout@example.com", transport: fileTransport(outboxDir) },
    }),
    now,
    log: { info() {}, warn() {}, error() {} },
  });
  let seq = 0;
  async function deliver(base: LookoutEventDetail, incidentOf?: string) {
    clock += 60_000;
    const id = `${base.transition}-${++seq}`;
    const detail: LookoutEventDetail = { ...base, id, incident_id: incidentOf ?? id, observed_at: now().toISOString() };
    const d = deps();
    await d.outbox.raiseAlert(newAlertItem(detail, now().toISOString(), d.outbox.expiresAt()));
    return { detail, deliveries: await notifyEvent(detail, decideRoutes(detail, config.routes, config.notify), d) };
  }
  const healthEvents = async () =>
    ((await doc.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }))).Items ?? []).filter((i) => i.item_type === "alert" && i.detail?.transition === "receiver_failing");

  it("an incident reaches all three, its repeat only where it counts, its close resolves PagerDuty's alert", async () => {
    const open = await deliver(OPENING);
    expect(open.deliveries.map((d) => [d.receiver, d.outcome])).toEqual([
      [`pagerduty env:PD_KEY`, "sent"], [`webhook env:HOOK_URL`, "sent"], [`teams env:TEAMS_URL`, "sent"],
    ]);
    const repeat = await deliver(REPEAT, open.detail.id);
    // No thread to count it in: recorded as suppressed, counted at the close.
    expect(repeat.deliveries.map((d) => d.outcome)).toEqual(["suppressed", "suppressed", "suppressed"]);
    await deliver(STILL_2, open.detail.id);
    await deliver(CLOSE, open.detail.id);
    expect(pd.alerts.map((a) => [a.dedupKey, a.status, a.log.length])).toEqual([[open.detail.id, "resolved", 3]]);
    expect(hook.deliveries.map((d) => (d.body.incident as { role: string }).role)).toEqual(["opening", "follow_up", "close"]);
    expect(teams.posts.map((p) => p.text.split("\n")[0])).toEqual([
      expect.stringMatching(/^🚨 FAILED/), expect.stringMatching(/^🚨 STILL FAILING/), expect.stringMatching(/^✅ RECOVERED/),
    ]);
  });

  it("a receiver that refuses for good: the fallback at once, one receiver_failing per episode, no retry", async () => {
    pd.fail({ status: 400, times: 100 });
    const before = (await healthEvents()).length;
    const first = await deliver(OPENING);
    expect(first.deliveries.map((d) => [d.route, d.receiver, d.outcome])).toEqual([
      ["fallback", "email fallback@example.com", "sent"],
      ["oncall", "pagerduty env:PD_KEY", "rejected"],
      ["oncall", "webhook env:HOOK_URL", "sent"],
      ["oncall", "teams env:TEAMS_URL", "sent"],
    ]);
    expect(unfinished(first.deliveries)).toBe(false);
    expect(pd.requests).toHaveLength(1); // not retried
    expect(readdirSync(outboxDir).filter((f) => f.includes(first.detail.id))).toHaveLength(1);
    const health = await healthEvents();
    expect(health).toHaveLength(before + 1);
    expect(health.at(-1)!.detail.summary).toContain("pagerduty env:PD_KEY");
    expect(JSON.stringify(health)).not.toContain(ROUTING_KEY);

    await deliver(OPENING);
    expect(await healthEvents()).toHaveLength(before + 1); // the same episode
    expect(await deps().store.receiverFailures(receiverId(config.routes[0]!.http![0]!))).toMatchObject({ consecutive_failures: 2 });
    pd.clearFaults();
  });

  it("a webhook redirected to another host and a Teams URL secret that is unset: the fallback, health raised", async () => {
    hook.fail({ status: 302, location: "https://attacker.example/x", times: 100 });
    delete env.TEAMS_URL;
    const before = (await healthEvents()).length;
    const r = await deliver(OPENING);
    expect(r.deliveries.filter((d) => d.outcome === "rejected").map((d) => d.receiver)).toEqual(["webhook env:HOOK_URL", "teams env:TEAMS_URL"]);
    // The fallback is told once, whichever receiver failed first.
    expect(r.deliveries.filter((d) => d.route === "fallback").map((d) => d.outcome)).toEqual(["sent", "duplicate"]);
    const health = await healthEvents();
    expect(health.length).toBe(before + 2);
    expect(health.map((h) => h.detail.summary).join("\n")).toMatch(/attacker\.example/);
    hook.clearFaults();
  });

  it("PagerDuty in a storm: a close whose incident is held waits behind it, so the digest triggers, then resolves", async () => {
    pd.reset();
    // A message every 20 s, a digest a minute at most.
    const stormy = { ...config.notify, slackRate: { perSecond: 0.05, burst: 1, perHour: 600 } };
    const d = () => ({ ...deps(), settings: stormy });
    const receiver = config.routes[0]!.http![0]!;
    const send = async (base: LookoutEventDetail, incidentOf?: string) => {
      const id = `${base.transition}-${++seq}`;
      const detail: LookoutEventDetail = { ...base, id, incident_id: incidentOf ?? id, observed_at: now().toISOString() };
      const x = d();
      await x.outbox.raiseAlert(newAlertItem(detail, now().toISOString(), x.outbox.expiresAt()));
      return { detail, outcomes: (await notifyEvent(detail, [{ route: "oncall", receivers: [receiver] }], x)).map((o) => o.outcome) };
    };
    const at = (ms: number) => void (clock += ms);
    at(3_600_000);
    expect((await send({ ...OPENING, service: { id: "other", name: "other" } })).outcomes).toEqual(["sent"]); // takes the burst
    at(1_000);
    expect((await send(OPENING)).outcomes).toEqual(["held"]);
    at(25_000);
    expect(await flushDigests([receiver], d())).toBe(1); // that digest goes; none other for a minute
    at(1_000);
    const y = await send(OPENING);
    expect(y.outcomes).toEqual(["held"]);
    at(24_000); // a message in the budget again, but no digest yet: the close would overtake its trigger
    expect((await send(CLOSE, y.detail.id)).outcomes).toEqual(["held"]);
    at(120_000);
    expect(await flushDigests([receiver], d())).toBe(2);
    const alert = pd.alerts.find((a) => a.dedupKey === y.detail.id)!;
    expect(alert.log.map((e) => e.event_action)).toEqual(["trigger", "resolve"]);
    expect(alert.status).toBe("resolved");
  });

  it("PagerDuty as the fallback: a webhook that refuses for good pages someone", async () => {
    const paging = checkConfig(
      {
        platform: { url: "http://127.0.0.1:1", token: "env:T" },
        watch: [{ organization: EXAMPLE_DETAILS["Deployment Failed"].organization.id }],
        routes: [{ name: "bot", webhook: { url: "env:HOOK_URL", signing_secret: "env:HOOK_SECRET" } }],
        notify: { fallback: { pagerduty: { routing_key: "env:PD_KEY" } } },
      },
      "test", {},
    );
    hook.fail({ status: 410, times: 10 });
    pd.reset();
    clock += 60_000;
    const detail: LookoutEventDetail = { ...OPENING, id: `fallback-${++seq}`, incident_id: `fallback-${seq}`, observed_at: now().toISOString() };
    const d = { ...deps(), settings: paging.notify };
    await d.outbox.raiseAlert(newAlertItem(detail, now().toISOString(), d.outbox.expiresAt()));
    const deliveries = await notifyEvent(detail, decideRoutes(detail, paging.routes, paging.notify), d);
    expect(deliveries.map((x) => [x.route, x.receiver, x.outcome])).toEqual([
      ["fallback", "pagerduty env:PD_KEY", "sent"],
      ["bot", "webhook env:HOOK_URL", "rejected"],
    ]);
    expect(pd.alerts.map((a) => [a.dedupKey, a.status])).toEqual([[detail.id, "triggered"]]);
    hook.clearFaults();
  });

  it("a network failure is retried later, not sent to the fallback as permanent", async () => {
    env.HOOK_URL = `http://127.0.0.1:${await closedPort()}/hooks/down`;
    const r = await deliver(OPENING);
    expect(r.deliveries.find((d) => d.receiver === "webhook env:HOOK_URL")!.outcome).toBe("failed");
    expect(unfinished(r.deliveries)).toBe(true);
  });
});
