/**
 * The deployed stack end to end, run from its packaged artifacts (docs/cloud-local.md): the zips and the
 * CloudFormation template that `serverless package` makes, on DynamoDB Local and moto_server. A
 * deployment failure, a webhook target failing and a cluster error travel from the simulator through
 * dispatch → poll → table → stream → publish → bus → rules → inboxes → pipes → queues → the notify
 * functions, to the local Slack and to SES; each reaches a person once, a second pass delivers nothing,
 * a recovery turns the Slack message green, the audit API answers for them, and a poll function killed
 * mid-poll loses and repeats nothing.
 *
 * Parity: the same story, step for step, on a twin simulator (same seed, same clock) through `lookout
 * run --once` with the same configuration yields the same alerts (ids, detail-types, incident ids) and
 * the same view at each receiver. A difference is a defect of one of them.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";
import { aMinuteLater } from "../../support/cloud-local-clock.js";
import { simpleParser } from "mailparser";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { type CloudLocal, startCloudLocal } from "../../../local/cloud-local/runner.js";
import { MOTO_ABSENT, MOTO_REGION, motoAvailable } from "../../../local/runtime/moto.js";
import type { ReceivedSlackMessage } from "../../../local/receivers/slack-receiver.js";
import { SEVERITY_COLOR } from "../../../lib/notify/slack/render.js";
import { checkConfig } from "../../../lib/config/load.js";
import { runLookout } from "../../../local/runtime/run.js";
import { startSlackReceiver, type SlackReceiver } from "../../../local/receivers/slack-receiver.js";
import { demoCloudConfig, LOCAL_SLACK_SIGNING_SECRET } from "../../../local/cloud-local/runner.js";
import { slackClick } from "../../../local/receivers/slack-receiver.js";
import { INCIDENT_ACTIONS } from "../../../lib/model/incident-action.js";
import { detailTypeOfDetail } from "../../../lib/notify/view/alert.js";
import type { AlertItem } from "../../../lib/model/alert-item.js";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import { EVENT_SOURCE, type LookoutEventDetail } from "../../../lib/model/event.js";
import { newAlertItem } from "../../../lib/alerts/outbox-item.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";
import { existsSync, readdirSync } from "node:fs";

const available = motoAvailable();
if (!available) console.warn(MOTO_ABSENT);

const MINUTE = 60_000;
/** The functions read the real clock: the simulator's runs behind it, and its story ends before now. */
const T0 = Date.now() - 40 * MINUTE;

let sim: Simulator;
/** The twin that `lookout run --once` watches: the same seed, start and story as `sim`. */
let twin: Simulator;
let twinSlack: SlackReceiver;
let runOnce: () => Promise<unknown>;
let twinDir: string;
const TWIN_TABLE = "lookout-parity-run";
let cl: CloudLocal;
let workDir: string;
let doc: DynamoDBDocumentClient;
let tableName: string;
const activity: string[] = [];

beforeAll(async () => {
  if (!available) return;
  const world = { seed: 23, startTime: new Date(T0).toISOString(), size: { applications: 2, clusters: 1, webhooks: 1 } };
  [sim, twin, twinSlack] = await Promise.all([startSimulator(world), startSimulator(world), startSlackReceiver()]);
  workDir = mkdtempSync(join(tmpdir(), "lookout-cloud-local-test-"));
  cl = await startCloudLocal({ workDir, simulator: sim, continuous: false, asyncRetryDelaysMs: [300, 600], activity: (l) => activity.push(l) });
  tableName = cl.stack.functions.get("lookout-local-dispatch")!.def.environment.TABLE_NAME!;
  doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: cl.stack.emulators.dynamodb, region: "us-east-1", credentials: { accessKeyId: "test", secretAccessKey: "test" } }));

  // The same configuration for `lookout run`: its secrets from the environment instead of SSM, its table in the same DynamoDB Local.
  twinDir = mkdtempSync(join(tmpdir(), "lookout-parity-run-"));
  const demo = demoCloudConfig(twin) as { platform: Record<string, unknown>; routes: Array<{ slack: Record<string, unknown> }> };
  const config = checkConfig(
    { ...demo, platform: { ...demo.platform, token: "env:PLATFORM_TOKEN" }, routes: demo.routes.map((r) => ({ ...r, slack: { ...r.slack, token: "env:SLACK_BOT_TOKEN" } })), data_dir: twinDir },
    "parity",
    {},
  );
  const env = { PLATFORM_TOKEN: twin.apiToken, SLACK_BOT_TOKEN: "xoxb-parity", LOOKOUT_SLACK_API_URL: twinSlack.apiUrl, DYNAMODB_ENDPOINT: cl.stack.emulators.dynamodb, LOOKOUT_TABLE: TWIN_TABLE };
  const silent = { info() {}, warn() {}, error() {} };
  runOnce = () => runLookout({ config, env, once: true, log: silent, print: () => undefined });
}, 180_000);

afterAll(async () => {
  doc?.destroy();
  await cl?.stop();
  await sim?.close();
  await twin?.close();
  await twinSlack?.close();
  if (twinDir) rmSync(twinDir, { recursive: true, force: true });
  if (workDir && !process.env.KEEP_CLOUD_LOCAL) rmSync(workDir, { recursive: true, force: true });
});

/** A dispatch tick a minute later: the schedule fires and everything it sets moving is let settle. */
async function pass(): Promise<void> {
  await aMinuteLater(doc, tableName);
  cl.stack.fireSchedules();
  await cl.stack.settle();
}

/** One step of the story, told to both simulators: the packaged stack's and `lookout run`'s twin. */
function both(step: (s: Simulator) => void): void {
  step(sim);
  step(twin);
}

/** A pass of the packaged stack (above) and, in lockstep, a `lookout run --once` on the twin a minute later too. */
async function passBoth(cloudPass: Promise<void> = pass()): Promise<void> {
  await cloudPass;
  await aMinuteLater(doc, TWIN_TABLE);
  await runOnce();
}

const topLevel = () => cl.slack.messages.filter((m) => !m.thread_ts);
const colorOf = (m: ReceivedSlackMessage) => m.attachments?.[0]?.color;
const subjects = async () => Promise.all((await cl.emails()).map(async (e) => (await simpleParser(e.raw)).subject ?? ""));

describe.skipIf(!available)("the packaged stack on one machine", () => {
  it("first sight: what the platform already holds is read, and nothing is delivered", async () => {
    both((s) => s.clock.set(new Date(T0 + 2 * MINUTE)));
    await passBoth();
    const poll = cl.stack.functions.get("lookout-local-poll")!;
    expect(poll.counts).toMatchObject({ invocations: 1, errors: 0, coldStarts: 1 });
    // Its log as CloudWatch would hold it: Powertools' lines (a cold start, as Lambda's variables tell it) and a REPORT line.
    const log = readFileSync(poll.logFile, "utf8");
    expect(log).toContain('"cold_start":true');
    expect(log).toMatch(/^REPORT RequestId: \S+\tDuration: [\d.]+ ms\tBilled Duration: \d+ ms\tMemory Size: \d+ MB\tMax Memory Used: \d+ MB\tInit Duration: [\d.]+ ms$/m);
    expect(cl.slack.messages).toEqual([]);
    expect(await cl.emails()).toEqual([]);
  });

  it("a deployment failure, a webhook target failing and a cluster error reach Slack and email once each", async () => {
    both((s) => {
      s.scenario.setWebhookTarget(s.ids.webhookIds[0]!, { status: 503 });
      s.scenario.deploy(s.ids.applicationIds[0]!, { outcome: "DEPLOYMENT_ERROR", commit: { git_commit_id: "0123456789ab", message: "<!channel> *boom*", author_name: "Ann" } });
      s.clock.advance(5 * MINUTE);
      s.scenario.clusterRun(s.ids.clusterIds[0]!, { entries: 5, errors: 1 });
      s.clock.advance(MINUTE);
    });
    await passBoth();

    const titles = topLevel().map((m) => m.text ?? "");
    expect(titles).toHaveLength(3);
    // Its project and environment from the change feed, read before the deployment in the same pass.
    expect(titles.filter((t) => t.startsWith("api-gateway (shop/production) deployment failed — DEPLOYMENT_ERROR — commit 0123456 by Ann"))).toHaveLength(1);
    // Text from the platform is escaped before it reaches Slack.
    expect(titles.join("\n")).toContain("&lt;!channel&gt;");
    expect(titles.filter((t) => t.includes("answered HTTP 503"))).toHaveLength(1);
    expect(titles.filter((t) => t.startsWith(`Cluster ${sim.ids.clusterIds[0]}`))).toHaveLength(1);
    // One email thread per incident; the deployment's list of what changed follows its failure there.
    const subjectsNow = await subjects();
    expect(new Set(subjectsNow).size).toBe(3);
    expect(subjectsNow.filter((x) => x.includes("api-gateway in shop/production — deployment"))).toHaveLength(2);
    expect(cl.stack.functions.get("lookout-local-publish")!.counts.errors).toBe(0);
    // Each message delivered at its first receive: none failed back to its queue for a retry minutes later.
    expect(activity.filter((l) => l.includes("back after the visibility timeout"))).toEqual([]);
  }, 60_000);

  it("a second pass reads the platform again and delivers nothing", async () => {
    const before = { slack: cl.slack.messages.length, updates: cl.slack.updates.length, email: (await cl.emails()).length, polls: cl.stack.functions.get("lookout-local-poll")!.counts.invocations };
    both((s) => s.clock.advance(MINUTE));
    await passBoth();
    expect(cl.stack.functions.get("lookout-local-poll")!.counts.invocations).toBeGreaterThan(before.polls);
    expect({ slack: cl.slack.messages.length, updates: cl.slack.updates.length, email: (await cl.emails()).length }).toEqual({ slack: before.slack, updates: before.updates, email: before.email });
  }, 60_000);

  it("a recovery turns the deployment's Slack message green", async () => {
    const failed = topLevel().find((m) => m.text?.startsWith("api-gateway (shop/production) deployment failed"))!;
    expect(colorOf(failed)).not.toBe(SEVERITY_COLOR.info);
    both((s) => {
      s.scenario.deploy(s.ids.applicationIds[0]!, { outcome: "DEPLOYED" });
      s.clock.advance(5 * MINUTE);
    });
    await passBoth();
    expect(colorOf(failed)).toBe(SEVERITY_COLOR.info);
    expect(failed.edits).toBeGreaterThan(0);
    expect(cl.slack.messages.filter((m) => m.thread_ts === failed.ts).length).toBeGreaterThan(0);
  }, 60_000);

  it("the audit API answers GET /events and GET /explain/{id} through the HTTP API", async () => {
    const api = cl.stack.httpApi!;
    const events = (await (await fetch(`${api.url}events?type=alert&limit=50`)).json()) as { events: Array<{ id: string; type: string; detail_type?: string }> };
    const alerts = events.events.filter((e) => e.type === "alert");
    expect(alerts.length).toBeGreaterThanOrEqual(5);
    const res = await fetch(`${api.url}explain/${encodeURIComponent(alerts[0]!.id)}`);
    expect(res.status).toBe(200);
    expect(JSON.stringify(await res.json())).toContain(alerts[0]!.id);
    expect((await fetch(`${api.url}no-such-route`)).status).toBe(404);
  }, 60_000);

  it("a poll function killed mid-poll loses and repeats nothing: Lambda's retry polls again", async () => {
    both((s) => {
      s.scenario.deploy(s.ids.applicationIds[1]!, { outcome: "BUILD_ERROR" });
      s.clock.advance(5 * MINUTE);
    });
    const before = topLevel().length;
    // Slow platform answers keep the poll in flight long enough to be killed in the middle of it.
    sim.faults.set("*", { delayMs: 400 });
    const poll = cl.stack.functions.get("lookout-local-poll")!;
    const passed = pass();
    for (let i = 0; i < 100 && !poll.busyPids().length; i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    const [pid] = poll.busyPids();
    expect(pid).toBeDefined();
    process.kill(pid!, "SIGKILL");
    sim.faults.clear();
    await passBoth(passed);
    expect(activity.some((l) => l.includes("lookout-local-poll ← async event: Runtime.ExitError"))).toBe(true);
    const added = topLevel().slice(before).map((m) => m.text ?? "");
    expect(added.filter((t) => t.includes("deployment failed — BUILD_ERROR"))).toHaveLength(1);
    expect(added).toHaveLength(1);
  }, 60_000);

  it("parity: `lookout run --once` told the same story raised the same alerts and shows each receiver the same", async () => {
    const cloud = { alerts: await alertsIn(tableName), slack: slackView(cl.slack.messages), email: await emailView((await cl.emails()).map((e) => e.raw)) };
    const run = { alerts: await alertsIn(TWIN_TABLE), slack: slackView(twinSlack.messages), email: await emailView(twinEmails()) };
    expect(cloud.alerts.length).toBeGreaterThanOrEqual(6);
    expect(run.alerts).toEqual(cloud.alerts);
    expect(run.slack).toEqual(cloud.slack);
    expect(run.email).toEqual(cloud.email);
  }, 60_000);

  it("a click on an open incident's message goes through the HTTP API to the packaged slack-actions function: acknowledged, once", async () => {
    const open = topLevel().find((m) => m.text?.includes("deployment failed — BUILD_ERROR"))!;
    expect(JSON.stringify(open.attachments)).toContain(INCIDENT_ACTIONS.acknowledge);
    const click = slackClick(open, INCIDENT_ACTIONS.acknowledge, { id: "U0ANN", name: "ann" }, LOCAL_SLACK_SIGNING_SECRET);
    const post = () => fetch(`${cl.stack.httpApi!.url}slack/actions`, { method: "POST", headers: click.headers, body: click.body });
    expect((await post()).status).toBe(200);
    await cl.stack.settle(); // the function's asynchronous invocation of itself acts on the click
    expect(JSON.stringify(open.attachments)).toContain("Acknowledged by <@U0ANN>");
    expect(JSON.stringify(open.attachments)).not.toContain(INCIDENT_ACTIONS.acknowledge);
    const replies = () => cl.slack.messages.filter((m) => m.thread_ts === open.ts && m.text?.startsWith("👀"));
    expect(replies()).toHaveLength(1);
    // Slack's retry of the same request, and one it did not sign.
    expect((await post()).status).toBe(200);
    expect((await fetch(`${cl.stack.httpApi!.url}slack/actions`, { method: "POST", headers: click.headers, body: click.body.replace("U0ANN", "U0EVE") })).status).toBe(401);
    await cl.stack.settle();
    expect(replies()).toHaveLength(1);
  }, 60_000);

  it("a follow-up the bus delivers ahead of its opening: each receiver shows the opening, then the follow-up in its thread, as in order", async () => {
    const observed = new Date().toISOString();
    const opening: LookoutEventDetail = { ...EXAMPLE_DETAILS["Deployment Failed"], id: "out-of-order-opening", incident_id: "out-of-order-opening", observed_at: observed };
    const { repeat: _, ...incident } = EXAMPLE_DETAILS["Deployment Still Failing"].incident!;
    const followUp: LookoutEventDetail = { ...EXAMPLE_DETAILS["Deployment Still Failing"], id: "out-of-order-again", incident_id: opening.id, incident, observed_at: observed };
    const slackBefore = cl.slack.messages.length;
    const emailBefore = (await cl.emails()).length;
    // The opening is in the outbox, not yet read from the stream; its follow-up is on the bus ahead of it.
    await doc.send(new PutCommand({ TableName: tableName, Item: newAlertItem(opening, observed, Math.floor(Date.now() / 1000) + 86_400) }));
    const bus = cl.stack.functions.get("lookout-local-publish")!.def.environment.EVENT_BUS_NAME!;
    const eb = new EventBridgeClient({ endpoint: cl.stack.emulators.moto, region: MOTO_REGION, credentials: { accessKeyId: "test", secretAccessKey: "test" } });
    const put = await eb.send(new PutEventsCommand({ Entries: [{ EventBusName: bus, Source: EVENT_SOURCE, DetailType: detailTypeOfDetail(followUp), Detail: JSON.stringify(followUp) }] }));
    eb.destroy();
    expect(put.FailedEntryCount).toBe(0);
    await cl.stack.settle();

    const added = cl.slack.messages.slice(slackBefore);
    expect(added.map((m) => (m.thread_ts ? `reply in ${m.thread_ts}` : `top ${m.ts}`))).toEqual([`top ${added[0]!.ts}`, `reply in ${added[0]!.ts}`]);
    expect(added[0]!.text).toContain("deployment failed");
    expect(added[1]!.text).toContain("still failing");
    const mails = await Promise.all((await cl.emails()).slice(emailBefore).map((e) => simpleParser(e.raw)));
    expect(mails.map((m) => m.subject)).toEqual([mails[0]!.subject, mails[0]!.subject]);
    expect(mails[0]!.inReplyTo).toBeUndefined();
    expect(mails[1]!.inReplyTo).toBe(mails[0]!.messageId);
  }, 60_000);
});

/** Every alert a table holds, as the bus saw it: its id, detail-type, incident and whether it was held back. */
async function alertsIn(table: string) {
  const items: AlertItem[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(new ScanCommand({ TableName: table, ConsistentRead: true, ExclusiveStartKey: start, FilterExpression: "item_type = :a", ExpressionAttributeValues: { ":a": "alert" } }));
    items.push(...((page.Items ?? []) as AlertItem[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return items
    .map((i) => ({ id: i.alert_id, detailType: detailTypeOfDetail(i.detail), incident: i.detail.incident_id, suppressed: i.suppression?.reason ?? null, summary: i.detail.summary }))
    .sort((a, b) => a.id.localeCompare(b.id));
}

/** Clock readings differ between two runs (Lookout's own clock is the real one); everything else must not. */
const timeless = (s: string) => s.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?Z?/g, "<time>").replace(/<!date\^\d+\^[^|>]*\|[^>]*>/g, "<time>").replace(/\b\d\d:\d\d(:\d\d)?( UTC)?\b/g, "<time>");

/** What a person sees in Slack: each message as it stands now (edits applied), with its thread under it in the thread's order. */
function slackView(messages: ReceivedSlackMessage[]) {
  const shown = (m: ReceivedSlackMessage) => timeless(JSON.stringify({ channel: m.channel, text: m.text, blocks: m.blocks, attachments: m.attachments, broadcast: m.reply_broadcast ?? false }));
  return messages
    .filter((m) => !m.thread_ts)
    .map((m) => ({ message: shown(m), thread: messages.filter((r) => r.thread_ts === m.ts).map(shown) }))
    .sort((a, b) => a.message.localeCompare(b.message));
}

/**
 * What a person sees by email: each message's addressees, subject and text, and which message it
 * follows in its thread (by In-Reply-To; the Message-IDs themselves differ, SES gives its own).
 */
async function emailView(raws: string[]) {
  const parsed = await Promise.all(raws.map((r) => simpleParser(r)));
  const subjectOf = new Map(parsed.map((p) => [p.messageId, p.subject]));
  return parsed
    .map((p) => timeless(JSON.stringify({ to: p.to && (Array.isArray(p.to) ? p.to : [p.to]).map((a) => a.text), subject: p.subject, text: p.text, follows: p.inReplyTo ? subjectOf.get(p.inReplyTo) ?? "?" : null })))
    .sort();
}

function twinEmails(): string[] {
  const dir = join(twinDir, "outbox");
  return existsSync(dir) ? readdirSync(dir).sort().map((f) => readFileSync(join(dir, f), "utf8")) : [];
}
