/**
 * The deployed stack end to end, run from its packaged artifacts (docs/cloud-local.md): the zips and the
 * CloudFormation template that `serverless package` makes, on DynamoDB Local and moto_server. A
 * deployment failure, a webhook target failing and a cluster error travel from the simulator through
 * dispatch → poll → table → stream → publish → bus → rules → inboxes → pipes → queues → the notify
 * functions, to the local Slack and to SES; each reaches a person once, a second pass delivers nothing,
 * a recovery turns the Slack message green, the audit API answers for them, and a poll function killed
 * mid-poll loses and repeats nothing.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { simpleParser } from "mailparser";
import { startSimulator, type Simulator } from "../../local/simulator/index.js";
import { type CloudLocal, startCloudLocal } from "../../local/cloud-local/run.js";
import { MOTO_ABSENT, motoAvailable } from "../../local/moto.js";
import type { ReceivedSlackMessage } from "../../local/slack-receiver.js";
import { DISPATCH_NAME } from "../../lib/ingest/cycle.js";
import { keys } from "../../lib/model/items.js";
import { decodeDispatchState, encodeDispatchState } from "../../lib/store/dispatch-store.js";
import { SEVERITY_COLOR } from "../../lib/notify/slack/render.js";

const available = motoAvailable();
if (!available) console.warn(MOTO_ABSENT);

const MINUTE = 60_000;
/** The functions read the real clock: the simulator's runs behind it, and its story ends before now. */
const T0 = Date.now() - 40 * MINUTE;

let sim: Simulator;
let cl: CloudLocal;
let workDir: string;
let doc: DynamoDBDocumentClient;
let tableName: string;
const activity: string[] = [];

beforeAll(async () => {
  if (!available) return;
  sim = await startSimulator({ seed: 23, startTime: new Date(T0).toISOString(), size: { applications: 2, clusters: 1, webhooks: 1 } });
  workDir = mkdtempSync(join(tmpdir(), "lookout-cloud-local-test-"));
  cl = await startCloudLocal({ workDir, simulator: sim, continuous: false, asyncRetryDelaysMs: [300, 600], activity: (l) => activity.push(l) });
  tableName = cl.stack.functions.get("lookout-local-dispatch")!.def.environment.TABLE_NAME!;
  doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: cl.stack.emulators.dynamodb, region: "us-east-1", credentials: { accessKeyId: "test", secretAccessKey: "test" } }));
}, 180_000);

afterAll(async () => {
  doc?.destroy();
  await cl?.stop();
  await sim?.close();
  if (workDir && !process.env.KEEP_CLOUD_LOCAL) rmSync(workDir, { recursive: true, force: true });
});

/**
 * A dispatch tick a minute later, as far as dispatch can tell: its sources' last polls are moved a
 * minute back in its state (the functions read the real clock, and a test does not wait out the
 * minute), then the schedule fires and everything it sets moving is let settle.
 */
async function pass(): Promise<void> {
  const key = keys.dispatch(DISPATCH_NAME);
  const { Item } = await doc.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  if (Item) {
    // Through the store's own codec (its sources are kept gzipped).
    const state = decodeDispatchState(Item as Parameters<typeof decodeDispatchState>[0]);
    const back = (v: number | undefined) => (v === undefined ? v : v - MINUTE);
    for (const st of Object.values(state.sources)) {
      st.last_polled_at = back(st.last_polled_at);
      if (st.next_allowed_at) st.next_allowed_at = back(st.next_allowed_at);
    }
    state.last_tick_at = back(state.last_tick_at);
    state.budget = { ...state.budget, at: state.budget.at - MINUTE, minutes: state.budget.minutes.map(([m, n]) => [m - 1, n]) };
    await doc.send(new PutCommand({ TableName: tableName, Item: { ...Item, ...encodeDispatchState(state) } }));
  }
  cl.stack.fireSchedules();
  await cl.stack.settle();
}

const topLevel = () => cl.slack.messages.filter((m) => !m.thread_ts);
const colorOf = (m: ReceivedSlackMessage) => m.attachments?.[0]?.color;
const subjects = async () => Promise.all((await cl.emails()).map(async (e) => (await simpleParser(e.raw)).subject ?? ""));

describe.skipIf(!available)("the packaged stack on one machine", () => {
  it("first sight: what the platform already holds is read, and nothing is delivered", async () => {
    sim.clock.set(new Date(T0 + 2 * MINUTE));
    await pass();
    const poll = cl.stack.functions.get("lookout-local-poll")!;
    expect(poll.counts).toMatchObject({ invocations: 1, errors: 0, coldStarts: 1 });
    // Its log as CloudWatch would hold it: Powertools' lines (a cold start, as Lambda's variables tell it) and a REPORT line.
    const log = readFileSync(poll.logFile, "utf8");
    expect(log).toContain('"cold_start":true');
    expect(log).toMatch(/^REPORT RequestId: \S+ Duration: \d+ ms Init Duration: \d+ ms$/m);
    expect(cl.slack.messages).toEqual([]);
    expect(await cl.emails()).toEqual([]);
  });

  it("a deployment failure, a webhook target failing and a cluster error reach Slack and email once each", async () => {
    const [app] = sim.ids.applicationIds;
    sim.scenario.setWebhookTarget(sim.ids.webhookIds[0]!, { status: 503 });
    sim.scenario.deploy(app!, { outcome: "DEPLOYMENT_ERROR", commit: { git_commit_id: "0123456789ab", message: "<!channel> *boom*", author_name: "Ann" } });
    sim.clock.advance(5 * MINUTE);
    sim.scenario.clusterRun(sim.ids.clusterIds[0]!, { entries: 5, errors: 1 });
    sim.clock.advance(MINUTE);
    await pass();

    const titles = topLevel().map((m) => m.text ?? "");
    expect(titles).toHaveLength(3);
    expect(titles.filter((t) => t.startsWith("api-gateway deployment failed — DEPLOYMENT_ERROR — commit 0123456 by Ann"))).toHaveLength(1);
    // Text from the platform is escaped before it reaches Slack.
    expect(titles.join("\n")).toContain("&lt;!channel&gt;");
    expect(titles.filter((t) => t.includes("answered HTTP 503"))).toHaveLength(1);
    expect(titles.filter((t) => t.startsWith(`Cluster ${sim.ids.clusterIds[0]}`))).toHaveLength(1);
    // One email thread per incident; the deployment's list of what changed follows its failure there.
    const subjectsNow = await subjects();
    expect(new Set(subjectsNow).size).toBe(3);
    expect(subjectsNow.filter((x) => x.includes("api-gateway — deployment"))).toHaveLength(2);
    expect(cl.stack.functions.get("lookout-local-publish")!.counts.errors).toBe(0);
  }, 60_000);

  it("a second pass reads the platform again and delivers nothing", async () => {
    const before = { slack: cl.slack.messages.length, updates: cl.slack.updates.length, email: (await cl.emails()).length, polls: cl.stack.functions.get("lookout-local-poll")!.counts.invocations };
    sim.clock.advance(MINUTE);
    await pass();
    expect(cl.stack.functions.get("lookout-local-poll")!.counts.invocations).toBeGreaterThan(before.polls);
    expect({ slack: cl.slack.messages.length, updates: cl.slack.updates.length, email: (await cl.emails()).length }).toEqual({ slack: before.slack, updates: before.updates, email: before.email });
  }, 60_000);

  it("a recovery turns the deployment's Slack message green", async () => {
    const failed = topLevel().find((m) => m.text?.startsWith("api-gateway deployment failed"))!;
    expect(colorOf(failed)).not.toBe(SEVERITY_COLOR.info);
    sim.scenario.deploy(sim.ids.applicationIds[0]!, { outcome: "DEPLOYED" });
    sim.clock.advance(5 * MINUTE);
    await pass();
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
    const app = sim.ids.applicationIds[1]!;
    sim.scenario.deploy(app, { outcome: "BUILD_ERROR" });
    sim.clock.advance(5 * MINUTE);
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
    await passed;
    expect(activity.some((l) => l.includes("lookout-local-poll ← async event: Runtime.ExitError"))).toBe(true);
    const added = topLevel().slice(before).map((m) => m.text ?? "");
    expect(added.filter((t) => t.includes("deployment failed — BUILD_ERROR"))).toHaveLength(1);
    expect(added).toHaveLength(1);
  }, 60_000);
});
