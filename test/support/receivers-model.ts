/**
 * What a person sees, as a model (docs/events.md, "Incidents"; docs/architecture.md, "Receivers' rate"):
 * fast-check commands drive the real pipeline — the simulator, DynamoDB Local, the Slack test receiver
 * in both forms, the SMTP receiver and the PagerDuty, webhook and Teams test receivers — and a model of the platform predicts what each receiver must
 * show. After every run the receivers are read, never the bus:
 *  - every genuine deployment failure after first sight is visible at every receiver its routes name
 *    (its execution in a message, a counted repeat under a root that receiver shows, or counted in a
 *    digest) within the stated bound: DUE_MS after the first run that could read it and the first run
 *    after the receiver's last fault; a cluster's or a webhook target's incident is shown there;
 *  - every closed incident shown at a receiver is shown resolved there;
 *  - no alert is shown twice at a receiver (an incoming webhook or SMTP, which cannot be read back, at
 *    most twice after a crash);
 *  - nothing stays held for a digest past HELD_BOUND_MS; no receiver gets more messages of its own
 *    than its budget (burst plus pace, and per hour) besides closes, nor more replies than the same again;
 *  - every "what changed" e-mail replies to one that receiver has.
 * One module for the test (a few dozen sequences and the examples they found) and `npm run bench -- receivers` (10,000).
 */
import fc from "fast-check";
import { modelCommand } from "./model-command.js";
import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DeleteTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { startSimulator, type Simulator } from "../../local/simulator/index.js";
import { checkConfig, type Config } from "../../lib/config/load.js";
import { flushHeld, loopPass, runLookout, type RunOptions, type RunSummary } from "../../local/runtime/run.js";
import { openLocalPipeline, type LocalPipeline } from "../../local/runtime/pipeline.js";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../local/runtime/dynamodb-local.js";
import { ensureTable } from "../../lib/store/table.js";
import { DynamoNotifyStore } from "../../lib/store/notify-store.js";
import { allReceivers, receiverId } from "../../lib/config/receivers.js";
import type { Receiver } from "../../lib/config/route-types.js";
import { startSlackReceiver, type SlackReceiver, type ReceivedSlackMessage } from "../../local/receivers/slack-receiver.js";
import { startSmtpReceiver, type SmtpReceiver, type ReceivedMail } from "./smtp-receiver.js";
import {
  startPagerDutyReceiver, startTeamsReceiver, startWebhookReceiver, type PagerDutyReceiver, type TeamsReceiver, type WebhookReceiver,
} from "../../local/receivers/http-receivers.js";

const MIN = 60_000;
const QUICK = { queuedMs: 1_000, buildingMs: 1_000, deployingMs: 1_000 };
/** A deploy command takes this long on the simulated clock: its run is over before the next starts. */
const DEPLOY_STEP_MS = 4_000;
const BACKFILL_MS = 15 * MIN;
const CLUSTER_QUIET_MS = 30 * MIN;
/** The receivers' budget in the model's configuration: small, so that storms pass it. */
export const RATE = { perSecond: 0.1, burst: 3, perHour: 30 } as const;
/** A held alert goes out in a digest at the first flush a minute after it was held, pace permitting. */
export const HELD_BOUND_MS = 60_000 + 1_000 / RATE.perSecond;
/** The stated bound from a failure's first possible read to being visible: a digest, then its pace. */
export const DUE_MS = HELD_BOUND_MS + 10_000;

export const APP_NAMES = ["api", "web", "worker", "billing"] as const;
const CLUSTER_NAME = "edge-k8s";
export type Recv = "api" | "hook" | "mail" | "team" | "pd" | "whk" | "teams";
const MAIN: Recv[] = ["api", "hook", "mail", "pd", "whk", "teams"];
const ALL: Recv[] = [...MAIN, "team"];
/** Receivers that cannot be read back: after a crash, a send may be repeated there. */
const BLIND = new Set<Recv>(["hook", "mail", "pd", "whk", "teams"]);
const PD_KEY = "M0DELR0UT1NGKEY0123456789abcdefA";
const HOOK_SECRET = "model-signing-secret";
/** The second route: the team that owns `web` gets its failures in a channel of its own. */
const TEAM_APP = 1;

// ---------------------------------------------------------------------------------------------- model

interface Obligation {
  exec: string;
  app: number;
  incident: number;
  repeat: boolean;
  /** When the deployment ended (simulated ms): the first run after could read it. */
  endedAt: number;
  receivers: Set<Recv>;
  /** The run that read it (simulated ms). */
  readAt: number;
  /** Set when a mute for its service came before it was visible: then nobody is owed it. */
  muted?: boolean;
  visible: Set<Recv>;
  /** Where it is counted in a digest rather than shown by its execution. */
  inDigest: Set<Recv>;
  /** Read by a run that was killed. */
  crashRead?: boolean;
  /** It may have been backfilled (read again only after an outage): not owed, counted if shown. */
  maybe?: boolean;
}

interface Incident {
  id: number;
  app: number;
  lastStatus: string;
  execs: string[];
  closedAt?: number;
  /** A close while its service was muted is not owed. */
  closedMuted?: boolean;
}

/** An incident of a cluster or a webhook target opened in sight: each main receiver must show it. */
interface Show {
  what: "cluster" | "webhook";
  at: number;
  hookGone: boolean;
  /** The service whose deployment the failed webhook delivery told of: a mute of it mutes it. */
  app?: number;
  muted?: boolean;
  seen: Set<Recv>;
  crashRead?: boolean;
  maybe?: boolean;
}

interface Pending {
  app: number;
  exec: string;
  outcome: string;
  endedAt: number;
}

export interface Model {
  mode: "cron" | "loop";
  now: number;
  runs: number[];
  lastReadAt: number;
  pending: Pending[];
  open: Array<Incident | undefined>;
  incidents: Incident[];
  obligations: Obligation[];
  mutes: Array<{ app: number; until: number; at: number }>;
  team: boolean;
  hookGone: boolean;
  /** Faults set for the next run, by receiver. */
  faults: Map<Recv, string>;
  lastFaultAt: Map<Recv, number>;
  crashed: boolean;
  /** The last run of the sequence: what must hold in the end is checked. */
  settled?: boolean;
  /** From being read to being visible, per failure and receiver (simulated ms). */
  delays: number[];
  /** The same, where the receiver had no fault, no run was killed, and runs came at most 90 s apart since the read. */
  steadyDelays: number[];
  webhook: { failing: boolean; openFailures: number; owed: boolean; pendingDeliveries: Array<{ ok: boolean; at: number; app: number }> };
  cluster: { open: boolean; lastErrorAt: number; pendingErrorsAt?: number; pendingClean?: number };
  /** Incidents of a cluster or a webhook target opened in sight: each main receiver must show one. */
  shows: Show[];
  log: string[];
}

// ---------------------------------------------------------------------------------------------- world

export interface Parts {
  dynamodbEndpoint: string;
}

export interface World {
  parts: Parts;
  mode: "cron" | "loop";
  sim: Simulator;
  slack: SlackReceiver;
  smtp: SmtpReceiver;
  pd: PagerDutyReceiver;
  whk: WebhookReceiver;
  teams: TeamsReceiver;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  raw: Record<string, unknown>;
  config: Config;
  pipeline?: LocalPipeline;
  store: DynamoNotifyStore;
  client: DynamoDBClient;
  apps: string[];
  /** What each receiver had after each run, and when: for the rate checks. */
  arrivals: Array<{ at: number; counts: Record<Recv, { all: number; closes: number; digests: number; replies: number }> }>;
  seen: Record<Recv, number>;
  tableName: string;
}

const silent = { info() {}, warn() {}, error() {} };

function rawConfig(w: Pick<World, "sim" | "dataDir" | "apps">, team: boolean): Record<string, unknown> {
  const routes: unknown[] = [
    {
      name: "oncall",
      match: {},
      slack: [{ channel: "#oncall", token: "env:SLACK_BOT_TOKEN" }, { webhook_url: "env:SLACK_WEBHOOK" }],
      email: { to: ["oncall@example.com"] },
      pagerduty: { routing_key: "env:PD_KEY" },
      webhook: { url: "env:HOOK_URL", signing_secret: "env:HOOK_SECRET" },
      teams: { url: "env:TEAMS_URL" },
    },
  ];
  if (team) routes.push({ name: "team-web", match: { kind: "deployment", service: [APP_NAMES[TEAM_APP]] }, slack: [{ channel: "#team-web", token: "env:SLACK_BOT_TOKEN" }] });
  return {
    platform: { url: w.sim.url, token: "env:SIM_TOKEN" },
    retention: "3650d", // simulated clocks are in the past; DynamoDB Local enforces TTL
    poll_interval: "1m",
    watch: [{
      organization: w.sim.ids.organizationId,
      applications: w.apps.map((id, i) => ({ id, name: APP_NAMES[i], environment: "prod" })),
      clusters: [{ id: w.sim.ids.clusterIds[0], name: CLUSTER_NAME }],
      webhooks: [w.sim.ids.webhookIds[0]],
    }],
    data_dir: w.dataDir,
    routes,
    notify: {
      email: { from: "lookout@example.com", smtp_url: "env:SMTP_URL" },
      slack_rate: { per_second: RATE.perSecond, burst: RATE.burst, per_hour: RATE.perHour },
    },
  };
}

export async function openWorld(parts: Parts, mode: "cron" | "loop", seed: number, oldFailures: number[]): Promise<{ world: World; model: Model }> {
  const sim = await startSimulator({ seed, size: { applications: APP_NAMES.length, clusters: 1, webhooks: 1, pastDeployments: 0 } });
  const [slack, smtp, pd, whk, teams] = await Promise.all([
    startSlackReceiver({ now: () => sim.clock.nowMs() }), startSmtpReceiver(), startPagerDutyReceiver(), startWebhookReceiver({ secret: HOOK_SECRET }), startTeamsReceiver(),
  ]);
  const dataDir = mkdtempSync(join(tmpdir(), "lookout-receivers-"));
  const client = new DynamoDBClient({ endpoint: parts.dynamodbEndpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const tableName = `receivers-${seed}-${Math.random().toString(36).slice(2, 8)}`;
  await ensureTable(client, tableName);
  const apps = sim.ids.applicationIds.slice(0, APP_NAMES.length);
  const env = {
    SIM_TOKEN: sim.apiToken, SLACK_BOT_TOKEN: "xoxb-model", SLACK_WEBHOOK: slack.webhookUrl("T000/B000/MAIN"), SMTP_URL: smtp.url,
    LOOKOUT_SLACK_API_URL: slack.apiUrl, PD_KEY, LOOKOUT_PAGERDUTY_URL: pd.url, HOOK_URL: whk.hookUrl(), HOOK_SECRET, TEAMS_URL: teams.workflowUrl(),
    DYNAMODB_ENDPOINT: parts.dynamodbEndpoint, LOOKOUT_TABLE: tableName,
  };
  const partial = { sim, dataDir, apps };
  const raw = rawConfig(partial, false);
  const world: World = {
    parts, mode, sim, slack, smtp, pd, whk, teams, dataDir, env, raw, config: checkConfig(raw, "receivers-model", {}), client, apps, tableName,
    store: new DynamoNotifyStore({ client, tableName, retentionMs: 3650 * 86_400_000 }),
    arrivals: [], seen: { api: 0, hook: 0, mail: 0, team: 0, pd: 0, whk: 0, teams: 0 },
  };
  const model: Model = {
    mode, now: sim.clock.nowMs(), runs: [], lastReadAt: 0, pending: [], open: APP_NAMES.map(() => undefined), incidents: [], obligations: [],
    mutes: [], team: false, hookGone: false, faults: new Map(), lastFaultAt: new Map(), crashed: false, delays: [], steadyDelays: [],
    webhook: { failing: false, openFailures: 0, owed: false, pendingDeliveries: [] },
    cluster: { open: false, lastErrorAt: 0 }, shows: [], log: [],
  };
  // Lookout's first sight: what failed an hour before stays quiet (backfill), its incident open unseen.
  for (const app of oldFailures) deploy(world, model, app, "DEPLOYMENT_ERROR");
  await advance(world, model, 60 * MIN);
  await run(world, model, "first sight");
  return { world, model };
}

export async function closeWorld(w: World): Promise<void> {
  await w.pipeline?.close();
  // DynamoDB Local slows as tables pile up: a sequence leaves none behind.
  await w.client.send(new DeleteTableCommand({ TableName: w.tableName })).catch(() => undefined);
  await Promise.all([w.sim.close(), w.slack.close(), w.smtp.close(), w.pd.close(), w.whk.close(), w.teams.close()]);
  w.client.destroy();
  rmSync(w.dataDir, { recursive: true, force: true });
}

async function advance(w: World, m: Model, ms: number) {
  w.sim.clock.advance(ms);
  m.now = w.sim.clock.nowMs();
}

// ---------------------------------------------------------------------------------------------- platform

const FAILED = new Set(["DEPLOYMENT_ERROR", "BUILD_ERROR"]);

function deploy(w: World, m: Model, app: number, outcome: string) {
  const exec = w.sim.scenario.deploy(w.apps[app]!, { outcome, durations: QUICK });
  m.pending.push({ app, exec, outcome, endedAt: m.now + 3_000 });
  // The platform tells the webhook of the deployment's start and end: both answered as the target answers now.
  m.webhook.pendingDeliveries.push({ ok: !m.webhook.failing, at: m.now, app }, { ok: !m.webhook.failing, at: m.now + 3_000, app });
  w.sim.clock.advance(DEPLOY_STEP_MS);
  m.now = w.sim.clock.nowMs();
}

const mutedAt = (m: Model, app: number, at: number) => m.mutes.some((x) => x.app === app && x.at <= at && x.until > at);

/** What a run at `m.now` reads, folded as Lookout folds it (docs/events.md, "Incidents"). */
function read(m: Model, crash = false) {
  const at = m.now;
  const outage = at - m.lastReadAt > BACKFILL_MS;
  const quiet = (t: number) => m.lastReadAt === 0 || (outage && at - t > BACKFILL_MS);
  // What a killed run read may not be stored: the loop, trusting its poll, may read it again only after
  // an outage, and then it is backfill. Owed only if shown by then, or if no such outage came.
  if (outage) {
    for (const o of m.obligations) if (o.crashRead && o.visible.size === 0 && at - o.endedAt > BACKFILL_MS) o.maybe = true;
    for (const x of m.shows) if (x.crashRead && x.seen.size === 0 && at - x.at > BACKFILL_MS) x.maybe = true;
  }
  const shows = m.shows.length;
  for (const p of m.pending.sort((a, b) => a.endedAt - b.endedAt)) {
    const open = m.open[p.app];
    if (FAILED.has(p.outcome)) {
      const incident = open ?? { id: m.incidents.length, app: p.app, lastStatus: p.outcome, execs: [] };
      if (!open) {
        m.incidents.push(incident);
        m.open[p.app] = incident;
      }
      const repeat = !!open && open.lastStatus === p.outcome;
      incident.lastStatus = p.outcome;
      incident.execs.push(p.exec);
      if (!quiet(p.endedAt) && !mutedAt(m, p.app, at)) {
        const receivers = new Set<Recv>(MAIN.filter((r) => r !== "hook" || !m.hookGone));
        if (m.team && p.app === TEAM_APP) receivers.add("team");
        m.obligations.push({ exec: p.exec, app: p.app, incident: incident.id, repeat, endedAt: p.endedAt, readAt: at, receivers, visible: new Set(), inDigest: new Set(), ...(crash ? { crashRead: true } : {}) });
      }
    } else if (p.outcome === "DEPLOYED" && open) {
      open.closedAt = at;
      open.closedMuted = mutedAt(m, p.app, at);
      m.open[p.app] = undefined;
    }
  }
  m.pending = [];
  // Webhook deliveries: a failure opens (or joins) the target's incident; the next 2xx closes it. A
  // delivery names the deployment's service, so a mute of it mutes the delivery's failure too: the
  // incident is then owed at its first failure nobody muted.
  for (const d of m.webhook.pendingDeliveries) {
    if (!d.ok) {
      if (!quiet(d.at) && !mutedAt(m, d.app, at) && !m.webhook.owed) {
        m.shows.push({ what: "webhook", at, hookGone: m.hookGone, app: d.app, seen: new Set() });
        m.webhook.owed = true;
      }
      m.webhook.openFailures++;
    } else {
      m.webhook.openFailures = 0;
      m.webhook.owed = false;
    }
  }
  m.webhook.pendingDeliveries = [];
  // The cluster: errors open (or join) its incident; a clean step, or the quiet period, closes it.
  if (m.cluster.pendingErrorsAt !== undefined) {
    if (!m.cluster.open && !quiet(m.cluster.pendingErrorsAt)) m.shows.push({ what: "cluster", at, hookGone: m.hookGone, seen: new Set() });
    m.cluster.open = true;
    m.cluster.lastErrorAt = m.cluster.pendingErrorsAt;
    m.cluster.pendingErrorsAt = undefined;
  }
  if (m.cluster.open && (m.cluster.pendingClean !== undefined || at - m.cluster.lastErrorAt >= CLUSTER_QUIET_MS)) {
    m.cluster.open = false;
  }
  m.cluster.pendingClean = undefined;
  m.lastReadAt = at;
  if (crash) for (const x of m.shows.slice(shows)) x.crashRead = true;
}

// ---------------------------------------------------------------------------------------------- runs

/** Slack's retries within a run keep their shape, in milliseconds instead of seconds: the clock is simulated. */
const SLACK_RETRY = { baseDelayMs: 5, maxDelayMs: 20, maxWaitMs: 2_000, maxTotalWaitMs: 100 };
/** A follow-up's wait for its opening, in a hundredth of the time: one process, nothing else in flight. */
const SLEEP = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms / 100));
const runOptions = (w: World): RunOptions => ({ config: w.config, env: w.env, once: true, log: silent, print: () => {}, now: () => w.sim.clock.now(), slackRetry: SLACK_RETRY, sleep: SLEEP });

/** A cron run (`lookout run --once`), or one pass of the watching loop with its pipeline kept open. */
async function pipelineRun(w: World): Promise<RunSummary> {
  if (w.mode === "cron") return runLookout(runOptions(w));
  w.pipeline ??= await openLocalPipeline(w.config, { env: w.env, log: silent, now: () => w.sim.clock.now(), slackRetry: SLACK_RETRY, sleep: SLEEP });
  const summary: RunSummary = { polls: 0, requests: 0, newRecords: 0, alerts: 0, published: 0, failedPolls: 0 };
  await loopPass(w.pipeline, runOptions(w), summary);
  // The loop publishes within a second and flushes digests between passes: here, before the checks.
  await w.pipeline.reader.drain();
  await w.pipeline.notifyRetries.retry();
  await flushHeld(w.pipeline);
  return summary;
}

function applyFaults(w: World, m: Model) {
  for (const [r, kind] of m.faults) {
    if (r === "mail") w.smtp.fail({ phase: "rcpt", code: 451, message: "try again later", times: 10 });
    else if (r === "pd" || r === "whk" || r === "teams") w[r].fail({ status: kind === "429" ? 429 : 503, retryAfterSec: 0, times: 1_000 });
    else if (r === "hook") w.slack.fail({ form: "webhook", status: kind === "429" ? 429 : 500, error: kind === "429" ? "rate_limited" : "rollup_error", retryAfterSec: 0, times: 1_000 });
    else w.slack.fail({ form: "api", status: kind === "429" ? 429 : 503, retryAfterSec: 0, times: 1_000 });
    m.lastFaultAt.set(r, m.now);
  }
}

function clearFaults(w: World, m: Model) {
  w.slack.clearFaults();
  w.smtp.clearFaults();
  for (const r of [w.pd, w.whk, w.teams]) r.clearFaults();
  m.faults.clear();
  if (m.hookGone) w.slack.fail({ form: "webhook", error: "no_service", times: 1_000_000 });
}

export async function run(w: World, m: Model, why: string): Promise<void> {
  applyFaults(w, m);
  read(m);
  m.runs.push(m.now);
  m.log.push(`${why} @${(m.now / 1000) % 100_000}`);
  const t0 = performance.now();
  await pipelineRun(w);
  const t1 = performance.now();
  clearFaults(w, m);
  await check(w, m);
  if (process.env.RECEIVERS_MODEL_TIMES) appendFileSync(process.env.RECEIVERS_MODEL_TIMES, "\n" + `${w.mode} ${why}: run ${Math.round(t1 - t0)} ms, check ${Math.round(performance.now() - t1)} ms${t1 - t0 > 3_000 ? ` SLOW: ${m.log.join(" → ")}` : ""}`);
}

/** A run killed with SIGKILL after its `after`-th DynamoDB call; a normal run then starts 15 s later. */
export async function crashRun(w: World, m: Model, after: number): Promise<void> {
  await w.pipeline?.close();
  w.pipeline = undefined;
  applyFaults(w, m);
  const started = performance.now();
  const out = await new Promise<{ code: number | null; signal: string | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ["bin/run-ts.mjs", "test/support/crash-run.ts"], {
      env: { ...process.env, ...w.env, CRASH_CONFIG: JSON.stringify(w.raw), CRASH_DEBUG: process.env.RECEIVERS_MODEL_TIMES ?? "", CRASH_AFTER: String(after), NOW: w.sim.clock.now().toISOString() },
      stdio: ["ignore", process.env.RECEIVERS_MODEL_TIMES ? "inherit" : "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("exit", (code, signal) => resolve({ code, signal, stderr }));
  });
  if (process.env.RECEIVERS_MODEL_TIMES) appendFileSync(process.env.RECEIVERS_MODEL_TIMES, "\n" + `crash run: ${out.signal ?? out.code} in ${Math.round(performance.now() - started)} ms`);
  if (out.signal !== "SIGKILL" && out.code !== 0) throw new Error(`the crashing run failed on its own (${out.code}): ${out.stderr.slice(0, 2000)}`);
  m.crashed = true;
  // What it read may or may not be stored: the model folds it at the crash, due only after the next run.
  read(m, true);
  m.runs.push(m.now);
  m.log.push(`crash after ${after} calls (${out.signal ?? "ended"})`);
  for (const r of ALL) m.lastFaultAt.set(r, m.now);
  clearFaults(w, m);
  await advance(w, m, 15_000);
  await run(w, m, "after the crash");
}

/** Reconfigures: a second route and its receiver, as a restarted Lookout reads them. */
export async function addTeamRoute(w: World, m: Model): Promise<void> {
  await w.pipeline?.close();
  w.pipeline = undefined;
  w.raw = rawConfig(w, true);
  w.config = checkConfig(w.raw, "receivers-model", {});
  m.team = true;
}

// ---------------------------------------------------------------------------------------------- receivers

interface Shown {
  /** All it shows now (text, blocks, attachments; a mail's text and headers). */
  text: string;
  alertId?: string;
  close: boolean;
  digest: number;
  /**
   * A follow-up under a root the receiver shows (threaded, replying, quoting the incident's first alert,
   * or to a PagerDuty alert already triggered): these have a budget of their own besides the receiver's.
   */
  reply?: boolean;
  threadOf?: string;
  ts?: string;
  mail?: ReceivedMail;
  /** Sent as part of one delivery with others (PagerDuty's digest: an event per incident): one arrival. */
  batch?: string;
  /** PagerDuty: the alert it went to, and whether that alert is resolved now. */
  pd?: { dedupKey: string; resolved: boolean };
}

const ALERT_IN_CONTEXT = /"alert ([A-Za-z0-9_-]{20,24})"/;
/** What a follow-up says where the receiver has no threads: it quotes its incident. */
const FOLLOW_UP = /Follow-up of/;
const DIGEST_COUNT = /(\d+) alerts? held back|held back (\d+) alerts?/;
const digestCount = (text: string) => { const d = DIGEST_COUNT.exec(text); return Number(d?.[1] ?? d?.[2] ?? 0); };

function slackShown(msg: ReceivedSlackMessage): Shown {
  const text = JSON.stringify([msg.text, msg.blocks, msg.attachments]);
  const alertId = (msg.metadata?.event_payload?.alert_id as string | undefined) ?? ALERT_IN_CONTEXT.exec(text)?.[1];
  return {
    text, close: /✅ Resolved after/.test(text) && !msg.thread_ts ? false : /✅ Resolved after|recovered — now/.test(text), digest: digestCount(text),
    reply: !!msg.thread_ts || FOLLOW_UP.test(text),
    ...(alertId ? { alertId } : {}), ...(msg.thread_ts ? { threadOf: msg.thread_ts } : {}), ...(msg.ts ? { ts: msg.ts } : {}),
  };
}

function mailShown(mail: ReceivedMail): Shown {
  const header = (k: string) => String(mail.parsed.headers.get(k.toLowerCase()) ?? "");
  const text = `${mail.parsed.subject}\n${mail.parsed.text}`;
  return {
    text, alertId: header("X-Lookout-Alert-ID"), close: /^(RECOVERED|RESOLVED|TARGET RECOVERED|CLUSTER RECOVERED)/.test(header("X-Lookout-State")) || /^✅/.test(mail.parsed.text ?? ""),
    digest: digestCount(text), mail, reply: !!mail.parsed.inReplyTo || FOLLOW_UP.test(mail.parsed.text ?? ""),
  };
}

/** PagerDuty's accepted events, each in the alert it went to (its log). */
function pagerDutyShown(w: World): Shown[] {
  const triggered = new Set<string>();
  return w.pd.events.map((e) => {
    const payload = e.payload as { custom_details?: Record<string, unknown> } | undefined;
    const details = payload?.custom_details ?? {};
    const key = String(e.dedup_key);
    const alert = [...w.pd.alerts].reverse().find((a) => a.dedupKey === key);
    const held = Number(details.held_in_digest ?? 0);
    return {
      text: JSON.stringify(payload ?? {}),
      close: e.event_action === "resolve",
      // A trigger to an alert already triggered: a follow-up of its incident.
      reply: triggered.has(key) || !triggered.add(key),
      // The event shows its own execution; the others of its key the storm held are counted.
      digest: Math.max(0, held - 1),
      ...(typeof details.alert_id === "string" ? { alertId: details.alert_id } : {}),
      ...(typeof details.digest_id === "string" ? { batch: details.digest_id } : {}),
      pd: { dedupKey: key, resolved: alert?.status === "resolved" },
    };
  });
}

function webhookShown(w: World): Shown[] {
  return w.whk.deliveries.map((d) => {
    const b = d.body as { type: string; id: string; incident?: { role: string }; held?: unknown[]; omitted?: unknown[] };
    const digest = b.type === "lookout.digest";
    return {
      text: JSON.stringify(b), close: b.incident?.role === "close", digest: digest ? (b.held?.length ?? 0) + (b.omitted?.length ?? 0) : 0,
      reply: !!b.incident && b.incident.role !== "opening",
      ...(digest ? {} : { alertId: b.id }),
    };
  });
}

function teamsShown(w: World): Shown[] {
  return w.teams.posts.map((p) => {
    const alertId = /^Alert: (\S+)$/m.exec(p.text)?.[1];
    return { text: p.text, close: /✅ Resolved/.test(p.text), digest: digestCount(p.text), reply: FOLLOW_UP.test(p.text), ...(alertId ? { alertId } : {}) };
  });
}

export function shownAt(w: World, r: Recv): Shown[] {
  if (r === "pd") return pagerDutyShown(w);
  if (r === "whk") return webhookShown(w);
  if (r === "teams") return teamsShown(w);
  if (r === "mail") return w.smtp.messages.filter((x) => x.to.includes("oncall@example.com")).map(mailShown);
  const of = (x: ReceivedSlackMessage) => (r === "hook" ? x.form === "webhook" : x.form === "api" && x.channel === (r === "api" ? "#oncall" : "#team-web"));
  return w.slack.messages.filter(of).map(slackShown);
}

/** The model's name for a configured receiver. */
const recvOf = (r: Receiver): Recv =>
  r.type === "email" ? "mail" : r.type === "slack" ? (r.form === "webhook" ? "hook" : r.channel === "#oncall" ? "api" : "team") : r.type === "pagerduty" ? "pd" : r.type === "webhook" ? "whk" : "teams";

// ---------------------------------------------------------------------------------------------- checks

export class ModelViolation extends Error {}

function fail(m: Model, what: string): never {
  throw new ModelViolation(`${what}\n  steps: ${m.log.join(" → ")}`);
}

/**
 * Whether what could first be read at `at` must be visible at a receiver now: a run could read it (the
 * loop polls a source once a poll interval), the bound has passed since, and since the receiver's last
 * fault, and the receiver answers now.
 */
function due(m: Model, at: number, r: Recv): boolean {
  const from = Math.max(at + (m.mode === "loop" ? MIN : 0), m.lastFaultAt.get(r) ?? 0);
  const firstRun = m.runs.find((t) => t >= from);
  return firstRun !== undefined && m.now >= firstRun + DUE_MS && !m.faults.has(r);
}

async function check(w: World, m: Model): Promise<void> {
  const receivers: Recv[] = m.team ? [...MAIN, "team"] : MAIN;
  // Arrivals of this run, for the rate checks.
  const counts = {} as World["arrivals"][number]["counts"];
  for (const r of ALL) {
    const all = shownAt(w, r);
    const fresh = all.slice(w.seen[r]);
    w.seen[r] = all.length;
    // What one delivery sent as several (a PagerDuty digest) arrives as one digest.
    const batches = new Set(fresh.flatMap((s) => (s.batch ? [s.batch] : [])));
    const single = fresh.filter((s) => !s.batch);
    counts[r] = {
      all: single.length + batches.size, closes: single.filter((s) => s.close).length, digests: single.filter((s) => s.digest > 0).length + batches.size,
      replies: single.filter((s) => s.reply && !s.close && !s.digest).length,
    };
  }
  w.arrivals.push({ at: m.now, counts });

  for (const r of receivers) {
    const shown = shownAt(w, r);
    const gone = r === "hook" && m.hookGone;
    // Nothing shown twice.
    const times = new Map<string, number>();
    for (const s of shown) if (s.alertId) times.set(s.alertId, (times.get(s.alertId) ?? 0) + 1);
    const most = m.crashed && BLIND.has(r) ? 2 : 1;
    for (const [id, n] of times) if (n > most) fail(m, `${r} shows alert ${id} ${n} times`);

    // Every failure owed: its execution shown, a counted repeat under a root shown there, or in a digest.
    const visible = (exec: string) => shown.some((s) => s.text.includes(exec));
    let inDigests = shown.reduce((n, s) => n + s.digest, 0) - m.obligations.filter((o) => o.inDigest.has(r)).length;
    const seen = (o: Obligation, how: "message" | "digest") => {
      o.visible.add(r);
      if (how === "digest") o.inDigest.add(r);
      m.delays.push(m.now - o.readAt);
      // Steady: the receiver answered and runs came at most 90 s apart since the read (cron each minute, or the loop).
      const since = m.runs.filter((t) => t >= o.readAt);
      const steady = since.every((t, i) => i === 0 || t - since[i - 1]! <= 90_000);
      if ((m.lastFaultAt.get(r) ?? 0) < o.readAt && steady) m.steadyDelays.push(m.now - o.readAt);
    };
    for (const o of m.obligations) {
      if (!o.receivers.has(r) || o.visible.has(r)) continue;
      if (m.mutes.some((x) => x.app === o.app && x.at >= o.endedAt && x.until > x.at)) o.muted = true;
      if (o.muted) continue;
      const incident = m.incidents[o.incident]!;
      if (visible(o.exec) || (o.repeat && incident.execs.some((e) => e !== o.exec && visible(e)))) seen(o, "message");
    }
    for (const o of m.obligations) {
      if (!o.receivers.has(r) || o.visible.has(r) || o.muted || o.maybe || gone) continue;
      if (inDigests > 0) {
        inDigests--;
        seen(o, "digest");
        continue;
      }
      if (due(m, o.endedAt, r)) fail(m, `${r} does not show the failure of ${APP_NAMES[o.app]} (execution ${o.exec}, ended ${new Date(o.endedAt).toISOString()}) at ${new Date(m.now).toISOString()}`);
    }

    // Every closed incident shown there is shown resolved there: the Web API's root turns green; the
    // other forms get a message saying it recovered.
    if (!gone && (m.lastFaultAt.get(r) ?? 0) + DUE_MS <= m.now) {
      const closed = m.incidents.filter((i) => i.closedAt !== undefined && !i.closedMuted && m.now >= i.closedAt + DUE_MS && i.execs.some(visible));
      for (const i of closed) {
        if (r === "api" || r === "team") {
          const roots = shown.filter((s) => !s.threadOf && i.execs.some((e) => s.text.includes(e)));
          if (!roots.some((s) => /✅ Resolved after/.test(s.text))) fail(m, `${r} shows the incident of ${APP_NAMES[i.app]} (${i.execs.join(", ")}) but never resolved`);
        }
      }
      if (r === "pd") {
        // PagerDuty: the alert an incident's executions went to is resolved.
        for (const i of closed) {
          const alerts = shown.filter((s) => i.execs.some((e) => s.text.includes(e)));
          if (alerts.some((s) => !s.pd!.resolved)) fail(m, `pd shows the incident of ${APP_NAMES[i.app]} (${i.execs.join(", ")}) but its alert ${alerts.find((s) => !s.pd!.resolved)!.pd!.dedupKey} was never resolved`);
        }
      }
      if (r === "hook" || r === "mail" || r === "whk" || r === "teams") {
        for (const [a, name] of APP_NAMES.entries()) {
          const owed = closed.filter((i) => i.app === a).length;
          const said = shown.filter((s) => new RegExp(`${name} \\([^)]*\\) recovered`).test(s.text)).length;
          if (said < owed) fail(m, `${r} says ${name} recovered ${said} times for ${owed} closed incidents it showed`);
        }
      }
    }

    // A cluster's or a webhook target's incident opened in sight is shown where the route names it.
    if (r !== "team" && !gone) {
      for (const x of m.shows) {
        if ((r === "hook" && x.hookGone) || x.muted || x.maybe || x.seen.has(r)) continue;
        const needle = x.what === "cluster" ? /cluster error/i : /hooks\.example\.test/;
        if (shown.some((s) => needle.test(s.text) || s.digest > 0)) x.seen.add(r);
        else if (due(m, x.at, r) && !shown.some((s) => needle.test(s.text) || s.digest > 0)) fail(m, `${r} shows nothing of the ${x.what}'s incident opened at ${new Date(x.at).toISOString()}`);
      }
    }

    // Every "what changed" mail replies to a mail that receiver has — once settled: after a run killed
    // between claiming a failure's send and sending it, its amendment may go first (the failure follows
    // when the claim's lease ends).
    if (r === "mail" && m.settled) {
      // A mail client threads by Message-ID and by a parent shared with mails it has (the opening a
      // receiver never got still groups the incident's mails under it).
      const ids = new Set(shown.flatMap((s) => (s.mail!.parsed.headers.get("x-lookout-state")?.toString().startsWith("CHANGES") ? [s.mail!.parsed.messageId] : [s.mail!.parsed.messageId, s.mail!.parsed.inReplyTo])));
      for (const s of shown) {
        const state = String(s.mail!.parsed.headers.get("x-lookout-state") ?? "");
        if (state.startsWith("CHANGES") && s.mail!.parsed.inReplyTo && !ids.has(s.mail!.parsed.inReplyTo)) fail(m, `a "what changed" mail replies to ${s.mail!.parsed.inReplyTo}, which the receiver never got`);
      }
    }
  }

  // Held for a digest no longer than its bound.
  for (const r of allReceivers(w.config.routes, w.config.notify)) {
    const name = recvOf(r);
    if (m.faults.has(name) || (name === "hook" && m.hookGone) || (m.lastFaultAt.get(name) ?? 0) + DUE_MS > m.now) continue;
    for (const h of await w.store.heldFor(receiverId(r))) {
      if (Date.parse(h.held_at) + HELD_BOUND_MS <= m.now && m.runs.some((t) => t >= Date.parse(h.held_at) + HELD_BOUND_MS - 1_000 && t < m.now)) {
        fail(m, `${name} holds alert ${h.detail.id} since ${h.held_at}, past ${HELD_BOUND_MS / 1000}s`);
      }
    }
  }

  // The rate: besides closes, no more than the burst plus the pace over any stretch of runs, and the
  // hourly cap, for the receiver's own messages (digests too); its replies have the same of their own.
  // What looks like a reply here (a mail's In-Reply-To names the incident's first alert even where it
  // was never shown) may be one of the receiver's own, so replies are bounded with them: twice the budget.
  for (const r of receivers) {
    const a = w.arrivals;
    for (let j = a.length - 1, own = 0, all = 0, hour = 0, allHour = 0, i = j; i >= 0; i--) {
      const c = a[i]!.counts[r];
      own += c.all - c.closes - c.replies;
      all += c.all - c.closes;
      hour += c.all - c.closes - c.digests - c.replies;
      allHour += c.all - c.closes - c.digests;
      const span = a[j]!.at - a[i]!.at;
      const budget = RATE.burst + Math.floor((span / 1000) * RATE.perSecond) + 1;
      if (own > budget) fail(m, `${r} got ${own} messages of its own in ${span / 1000}s, over its budget`);
      if (all > 2 * budget) fail(m, `${r} got ${all} messages and replies in ${span / 1000}s, over their budgets`);
      if (span < 3_600_000 && hour > RATE.perHour + 1) fail(m, `${r} got ${hour} messages of its own within an hour, over ${RATE.perHour}`);
      if (span < 3_600_000 && allHour > 2 * (RATE.perHour + 1)) fail(m, `${r} got ${allHour} messages and replies within an hour, over twice ${RATE.perHour}`);
    }
  }
}

/** The end of a sequence: faults gone, the clock moves on in steps, and everything owed must be shown. */
export async function settle(w: World, m: Model): Promise<void> {
  m.faults.clear();
  // A run a digest can go out at (what the last command's run held), then one past a cluster's quiet period.
  for (const step of [90_000, 31 * MIN]) {
    await advance(w, m, step);
    m.settled = step === 31 * MIN;
    await run(w, m, `settle +${step / 1000}s`);
  }
  for (const o of m.obligations) {
    for (const r of o.receivers) {
      if (!o.visible.has(r) && !o.muted && !o.maybe && !(r === "hook" && m.hookGone)) fail(m, `${r} never showed the failure of ${APP_NAMES[o.app]} (execution ${o.exec})`);
    }
  }
}

// ---------------------------------------------------------------------------------------------- commands

type Cmd = fc.AsyncCommand<Model, World>;

const cmd = (name: string, body: (m: Model, w: World) => Promise<void> | void, pre?: (m: Model) => boolean): Cmd => modelCommand(name, body, pre);

/** The commands, by name: the arbitraries draw them, and the kept examples name them. */
export const commands = {
  deploy: (a: number, outcome: string) => cmd(`deploy ${APP_NAMES[a]} ${outcome}`, (m, w) => deploy(w, m, a, outcome)),
  run: (gap: number) =>
    cmd(`run +${gap / 1000}s`, async (m, w) => {
      // The loop polls each source once a poll interval: runs seconds apart are cron's.
      await advance(w, m, m.mode === "loop" ? Math.max(gap, MIN) : gap);
      await run(w, m, "run");
    }),
  storm: () => cmd("storm: every service fails at once", (m, w) => APP_NAMES.forEach((_, a) => deploy(w, m, a, "DEPLOYMENT_ERROR"))),
  clusterErrors: (k: number) =>
    cmd(`cluster logs ${k} errors`, (m, w) => {
      // A run replaces the cluster's log list: a clean step not yet read is gone.
      w.sim.scenario.clusterRun(w.sim.ids.clusterIds[0]!, { entries: k + 3, errors: k });
      m.cluster.pendingErrorsAt = m.now;
      m.cluster.pendingClean = undefined;
    }),
  clusterClean: () =>
    cmd("cluster: a clean step", (m, w) => {
      // Errors not yet read are gone with the list they were in.
      w.sim.scenario.clusterRun(w.sim.ids.clusterIds[0]!, { entries: 3, errors: 0 });
      m.cluster.pendingClean = m.now;
      m.cluster.pendingErrorsAt = undefined;
    }),
  webhookTarget: (ok: boolean) =>
    cmd(`webhook target answers ${ok ? 200 : 500}`, (m, w) => {
      w.sim.scenario.setWebhookTarget(w.sim.ids.webhookIds[0]!, { status: ok ? 200 : 500 });
      m.webhook.failing = !ok;
    }),
  mute: (a: number, ms: number) =>
    cmd(`mute ${APP_NAMES[a]} for ${ms / MIN}m`, async (m, w) => {
      await w.store.putMute({ id: `mute-${m.mutes.length}`, scope: { service: w.apps[a]! }, until: new Date(m.now + ms).toISOString(), reason: "model", created_by: "model", created_at: new Date(m.now).toISOString() });
      m.mutes.push({ app: a, until: m.now + ms, at: m.now });
      // What was owed of its service and not yet shown is muted now.
      for (const x of m.shows) if (x.app === a) x.muted = true;
    }),
  addRoute: () => cmd("a second route and receiver", (m, w) => addTeamRoute(w, m), (m) => !m.team),
  fault: (r: Recv, kind: "429" | "5xx") => cmd(`${r} answers ${kind} at the next run`, (m) => void m.faults.set(r, kind), (m) => !(r === "hook" && m.hookGone)),
  hookGone: () =>
    cmd("the incoming webhook answers no_service from now on", (m, w) => {
      m.hookGone = true;
      w.slack.fail({ form: "webhook", error: "no_service", times: 1_000_000 });
    }, (m) => !m.hookGone),
  crash: (after: number) => cmd(`a run killed after ${after} DynamoDB calls`, (m, w) => crashRun(w, m, after)),
};

export function commandArbitraries(opts: { crashes: boolean }): fc.Arbitrary<Cmd>[] {
  const app = fc.integer({ min: 0, max: APP_NAMES.length - 1 });
  const deployCmd = fc.tuple(app, fc.constantFrom("DEPLOYMENT_ERROR", "BUILD_ERROR", "DEPLOYED", "CANCELED")).map(([a, outcome]) => commands.deploy(a, outcome));
  const runCmd = fc.constantFrom(5_000, 60_000, 6 * MIN, 2 * 60 * MIN).map(commands.run);
  const list: fc.Arbitrary<Cmd>[] = [
    deployCmd, deployCmd, deployCmd, runCmd, runCmd, runCmd,
    fc.constant(null).map(commands.storm),
    fc.integer({ min: 1, max: 4 }).map(commands.clusterErrors),
    fc.constant(null).map(commands.clusterClean),
    fc.boolean().map(commands.webhookTarget),
    fc.tuple(app, fc.constantFrom(10 * MIN, 2 * 60 * MIN)).map(([a, ms]) => commands.mute(a, ms)),
    fc.constant(null).map(commands.addRoute),
    fc.tuple(fc.constantFrom<Recv>("api", "hook", "mail", "pd", "whk", "teams"), fc.constantFrom<"429" | "5xx">("429", "5xx")).map(([r, kind]) => commands.fault(r, kind)),
    fc.constant(null).map(commands.hookGone),
  ];
  if (opts.crashes) list.push(fc.integer({ min: 1, max: 80 }).map(commands.crash));
  return list;
}

/** What each receiver shows and holds, for a person reading a counterexample. */
async function describeWorld(w: World): Promise<string> {
  const lines: string[] = [];
  for (const r of ALL) {
    lines.push(`${r}:`);
    for (const s of shownAt(w, r)) lines.push(`  ${s.threadOf ? "  ↳ " : ""}${s.alertId ?? "-"} ${s.close ? "[close] " : ""}${s.digest ? `[digest ${s.digest}] ` : ""}${s.text.replace(/\s+/g, " ").slice(0, 160)}`);
  }
  for (const r of allReceivers(w.config.routes, w.config.notify)) {
    for (const h of await w.store.heldFor(receiverId(r))) lines.push(`held for ${receiverId(r)} since ${h.held_at}: ${h.detail.id} ${h.detail.transition}`);
  }
  return lines.join("\n");
}

/** One sequence, from first sight to settled; throws ModelViolation with its steps. */
export async function runSequence(parts: Parts, input: { seed: number; mode: "cron" | "loop"; old: number[]; commands: Iterable<Cmd> }): Promise<Model> {
  const t0 = performance.now();
  const { world, model } = await openWorld(parts, input.mode, input.seed, input.old);
  if (process.env.RECEIVERS_MODEL_TIMES) appendFileSync(process.env.RECEIVERS_MODEL_TIMES, "\n" + `open world ${Math.round(performance.now() - t0)} ms`);
  try {
    await fc.asyncModelRun(() => ({ model, real: world }), input.commands);
    await settle(world, model);
    return model;
  } catch (err) {
    if (err instanceof ModelViolation && process.env.RECEIVERS_MODEL_DEBUG) err.message += `\n${await describeWorld(world)}`;
    throw err;
  } finally {
    await closeWorld(world);
  }
}

/** The sequences fast-check draws: a seed, a mode, old failures at first sight, commands. */
export const sequenceArbitrary = (opts: { crashes: boolean; maxCommands: number }) =>
  fc.record({
    seed: fc.integer({ min: 1, max: 1_000_000 }),
    mode: fc.constantFrom<"cron" | "loop">("cron", "loop"),
    old: fc.subarray([0, 1, 2, 3]),
    commands: fc.commands(commandArbitraries(opts), { maxCommands: opts.maxCommands }),
  });
