/**
 * Escalation between the bus and a person (docs/actions.md, "Escalation"), against a model: fast-check
 * commands drive the real pipeline — the platform simulator, DynamoDB Local, `lookout run --once` on the
 * simulated clock, the Slack test receiver in both forms, the SMTP test receiver as the pager, and
 * Acknowledge clicked on the local Slack's message through the endpoint's answer and `actOn` — and a model
 * predicts what each receiver shows. After every step the receivers are read, never the store:
 *  - an incident nobody acknowledged or closed within `after` shows one escalation at each receiver:
 *    a reply in its thread, broadcast, mentioning the group (#oncall), a message showing it (the incoming
 *    webhook), a mail (the pager); none where it was acknowledged or closed before;
 *  - two ticks racing (two notify functions flushing at once) escalate it once;
 *  - a close after the escalation reaches the pager, in reply to the escalation's mail;
 *  - in the end, `lookout explain` says of each incident whether it was escalated (and to whom) or
 *    cancelled, and why.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { modelCommand } from "../../support/model-command.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { DeleteTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { checkConfig, resolveSecret, type Config } from "../../../lib/config/load.js";
import { runLookout } from "../../../local/runtime/run.js";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../local/runtime/dynamodb-local.js";
import { slackClick, startSlackReceiver, type ReceivedSlackMessage, type SlackReceiver } from "../../../local/receivers/slack-receiver.js";
import { startSmtpReceiver, type ReceivedMail, type SmtpReceiver } from "../../support/smtp-receiver.js";
import { composeNotify } from "../../../lib/app/notify.js";
import { composeActions } from "../../../lib/app/actions.js";
import { slackSender } from "../../../lib/notify/slack/sender.js";
import { smtpTransport } from "../../../lib/notify/email/transport.js";
import { flushEscalations } from "../../../lib/notify/notifier.js";
import { answerSlack, slackRequestOf } from "../../../lib/actions/endpoint.js";
import { actOn } from "../../../lib/actions/act.js";
import { INCIDENT_ACTIONS } from "../../../lib/model/incident-action.js";
import { ensureTable } from "../../../lib/store/table.js";
import { AuditTrail } from "../../../lib/audit/trail.js";
import { DynamoAuditItems } from "../../../lib/store/audit-store.js";
import { explanationLines } from "../../../lib/audit/output-formats.js";
import { leaseDatabase } from "../../support/dynamodb.js";

const MIN = 60_000;
const AFTER = 5 * MIN;
const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const QUICK = { queuedMs: 1_000, buildingMs: 1_000, deployingMs: 1_000 };
const APPS = ["api", "web"] as const;
const RUNS = Number(process.env.ESCALATION_MODEL_RUNS ?? 16);
const silent = { info() {}, warn() {}, error() {} };

// ---------------------------------------------------------------------------------------------- model

interface Incident {
  app: number;
  /** The execution of its first failure: what its messages and the escalation show. */
  exec: string;
  /** When the run that read it delivered it (simulated ms). */
  openedAt: number;
  ackedAt?: number;
  closedAt?: number;
  escalatedAt?: number;
  /** Why it was cancelled: closed before it was due, or acknowledged before the tick that found it due. */
  cancelled?: "closed" | "acknowledged";
}

interface Model {
  now: number;
  pending: Array<{ app: number; exec: string; failed: boolean }>;
  open: Array<Incident | undefined>;
  incidents: Incident[];
  log: string[];
  /** What `lookout run` printed. */
  printed: string[];
}

/** What a run reads, as Lookout folds it: a failure opens (or joins) its service's incident, a success closes it. */
function read(m: Model) {
  for (const p of m.pending) {
    const open = m.open[p.app];
    if (p.failed && !open) {
      const incident: Incident = { app: p.app, exec: p.exec, openedAt: m.now };
      m.incidents.push(incident);
      m.open[p.app] = incident;
    } else if (!p.failed && open) {
      open.closedAt = m.now;
      if (open.escalatedAt === undefined) open.cancelled ??= "closed";
      m.open[p.app] = undefined;
    }
  }
  m.pending = [];
}

/** A tick's flush, after what the run delivered: what is due, not acknowledged and not closed is escalated. */
function flush(m: Model) {
  for (const i of m.incidents) {
    if (i.escalatedAt !== undefined || i.cancelled || m.now < i.openedAt + AFTER) continue;
    if (i.ackedAt !== undefined) i.cancelled = "acknowledged";
    else i.escalatedAt = m.now;
  }
}

// ---------------------------------------------------------------------------------------------- world

interface World {
  sim: Simulator;
  slack: SlackReceiver;
  smtp: SmtpReceiver;
  config: Config;
  env: NodeJS.ProcessEnv;
  dataDir: string;
  client: DynamoDBClient;
  tableName: string;
  apps: string[];
}

async function openWorld(seed: number): Promise<{ world: World; model: Model }> {
  const sim = await startSimulator({ seed, size: { applications: APPS.length, clusters: 1, webhooks: 1, pastDeployments: 0 } });
  const [slack, smtp] = await Promise.all([startSlackReceiver({ now: () => sim.clock.nowMs() }), startSmtpReceiver()]);
  const dataDir = mkdtempSync(join(tmpdir(), "lookout-escalation-"));
  const tableName = `escalation-${randomUUID().slice(0, 8)}`;
  // A database per sequence: DynamoDB Local slows with every table a database had (test/support/dynamodb-pool.ts).
  const endpoint = await leaseDatabase();
  const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  await ensureTable(client, tableName);
  const apps = sim.ids.applicationIds.slice(0, APPS.length);
  const env = {
    SIM_TOKEN: sim.apiToken, SLACK_BOT_TOKEN: "xoxb-model", SLACK_WEBHOOK: slack.webhookUrl("T000/B000/MAIN"), SMTP_URL: smtp.url,
    SLACK_SIGNING_SECRET: SECRET, LOOKOUT_SLACK_API_URL: slack.apiUrl, DYNAMODB_ENDPOINT: endpoint, LOOKOUT_TABLE: tableName,
  };
  const config = checkConfig({
    platform: { url: sim.url, token: "env:SIM_TOKEN" },
    retention: "3650d", // simulated clocks are in the past; DynamoDB Local enforces TTL
    watch: [{ organization: sim.ids.organizationId, applications: apps.map((id, i) => ({ id, name: APPS[i], environment: "prod" })) }],
    data_dir: dataDir,
    routes: [{
      name: "oncall", match: { kind: "deployment" }, severity: "critical",
      slack: [{ channel: "#oncall", token: "env:SLACK_BOT_TOKEN" }, { webhook_url: "env:SLACK_WEBHOOK" }],
      escalate: { after: "5m", mention: "S0ESCALATE", to: { email: { to: "pager@example.com" } } },
    }],
    notify: { email: { from: "lookout@example.com", smtp_url: "env:SMTP_URL" }, slack_actions: { signing_secret: "env:SLACK_SIGNING_SECRET" } },
  }, "escalation-model", {});
  const world: World = { sim, slack, smtp, config, env, dataDir, client, tableName, apps };
  const model: Model = { now: sim.clock.nowMs(), pending: [], open: APPS.map(() => undefined), incidents: [], log: [], printed: [] };
  advance(world, model, 60 * MIN);
  await run(world, model); // first sight
  return { world, model };
}

async function closeWorld(w: World) {
  await w.client.send(new DeleteTableCommand({ TableName: w.tableName })).catch(() => undefined);
  w.client.destroy();
  await Promise.all([w.sim.close(), w.slack.close(), w.smtp.close()]);
  rmSync(w.dataDir, { recursive: true, force: true });
}

function advance(w: World, m: Model, ms: number) {
  w.sim.clock.advance(ms);
  m.now = w.sim.clock.nowMs();
}

const run = (w: World, m: Model) => runLookout({ config: w.config, env: w.env, once: true, log: silent, print: (line) => m.printed.push(line), now: () => w.sim.clock.now() });

/** A notify function of each kind flushing on its own (its own store client, Slack sender and SMTP transport). */
async function notifyFunctionTick(w: World) {
  const transport = smtpTransport(w.env.SMTP_URL!);
  try {
    const notify = composeNotify(w.config, {
      dynamodb: w.client, tableName: w.tableName, log: silent, now: () => w.sim.clock.now(), resolveSecret: (ref) => resolveSecret(ref, w.env),
      slack: slackSender({ slackApiUrl: w.slack.apiUrl }), emailTransport: transport,
    });
    return await flushEscalations(["slack", "email"], notify.notifier);
  } finally {
    transport.close();
  }
}

// ---------------------------------------------------------------------------------------------- receivers

const shown = (m: ReceivedSlackMessage) => JSON.stringify([m.text, m.blocks, m.attachments]);
const isEscalation = (text: string) => /Escalated: not acknowledged within 5m/.test(text);
const header = (mail: ReceivedMail, name: string) => String(mail.parsed.headers.get(name.toLowerCase()) ?? "");
const mailText = (mail: ReceivedMail) => `${mail.parsed.subject}\n${mail.parsed.text}`;

/** The incident's root message in #oncall: the top-level message that shows its first execution. */
const rootOf = (w: World, i: Incident) => w.slack.messages.find((m) => m.form === "api" && !m.thread_ts && !isEscalation(shown(m)) && shown(m).includes(i.exec));

class ModelViolation extends Error {}
const fail = (m: Model, what: string): never => {
  throw new ModelViolation(`${what}\n  steps: ${m.log.join(" → ")}`);
};

function check(w: World, m: Model) {
  const pagerMails = w.smtp.messages.filter((x) => x.to.includes("pager@example.com"));
  for (const i of m.incidents) {
    const name = `the incident of ${APPS[i.app]} (${i.exec})`;
    const want = i.escalatedAt === undefined ? 0 : 1;
    const root = rootOf(w, i);
    if (!root) fail(m, `#oncall never showed ${name}`);
    const api = w.slack.messages.filter((x) => x.form === "api" && x.thread_ts === root!.ts && isEscalation(shown(x)));
    const hook = w.slack.messages.filter((x) => x.form === "webhook" && isEscalation(shown(x)) && shown(x).includes(i.exec));
    const mail = pagerMails.filter((x) => header(x, "X-Lookout-State") === "ESCALATED" && mailText(x).includes(i.exec));
    for (const [where, got] of [["#oncall", api.length], ["the webhook", hook.length], ["the pager", mail.length]] as const) {
      if (got !== want) fail(m, `${where} shows ${got} escalation(s) of ${name}, the model ${want}`);
    }
    if (want && (!api[0]!.reply_broadcast || !shown(api[0]!).includes("<!subteam^S0ESCALATE>"))) fail(m, `#oncall's escalation of ${name} is not broadcast with the mention`);
    // Whoever was paged sees it resolve: the close replies to the escalation's mail.
    const closes = pagerMails.filter((x) => /^RECOVERED/.test(header(x, "X-Lookout-State")) && header(x, "In-Reply-To") === header(mail[0] ?? x, "Message-ID"));
    const owed = want && i.closedAt !== undefined ? 1 : 0;
    if ((mail.length ? closes.length : 0) !== owed) fail(m, `the pager got ${closes.length} close(s) of ${name} in reply to its escalation, the model ${owed}`);
  }
  // Nothing else reaches the pager: escalations of the model's incidents, and closes in reply to them.
  const escalations = new Set(pagerMails.filter((x) => header(x, "X-Lookout-State") === "ESCALATED" && m.incidents.some((i) => mailText(x).includes(i.exec))).map((x) => header(x, "Message-ID")));
  const stray = pagerMails.filter((x) => !escalations.has(header(x, "Message-ID")) && !escalations.has(header(x, "In-Reply-To")));
  if (stray.length) fail(m, `the pager got ${stray.length} mail(s) of no escalation: ${stray.map((x) => header(x, "X-Lookout-State")).join(", ")}`);
}

/** `lookout explain <service>:<execution>` says what became of each incident's escalation, as the model does. */
async function checkExplained(w: World, m: Model) {
  const audit = new AuditTrail(new DynamoAuditItems({ client: w.client, tableName: w.tableName }));
  for (const i of m.incidents) {
    const e = await audit.explain(`${w.apps[i.app]}:${i.exec}`);
    const opening = e?.alerts.find((a) => a.transition === "failed");
    const escalation = opening?.escalations?.find((x) => x.route === "oncall");
    const want = i.escalatedAt !== undefined ? "escalated" : i.cancelled ? "cancelled" : "pending";
    if (escalation?.state !== want) fail(m, `explain says the escalation of ${APPS[i.app]}'s incident (${i.exec}) is ${escalation?.state ?? "absent"}, the model ${want}`);
    const reason = i.cancelled === "acknowledged" ? /^acknowledged by ann/ : i.cancelled === "closed" ? /^closed by alert/ : undefined;
    if (reason && !reason.test(escalation!.reason ?? "")) fail(m, `explain gives the cancellation of ${APPS[i.app]}'s escalation as "${escalation!.reason}"`);
    const paged = opening!.deliveries.filter((d) => d.escalation === "oncall" && d.state === "sent").map((d) => d.receiver).sort();
    const wantPaged = i.escalatedAt !== undefined ? ["email pager@example.com", "slack #oncall", "slack webhook env:SLACK_WEBHOOK"] : [];
    if (JSON.stringify(paged) !== JSON.stringify(wantPaged)) fail(m, `explain lists the escalation of ${APPS[i.app]}'s incident as sent to ${paged.join(", ") || "nobody"}`);
    if (!explanationLines(e!).some((l) => l.includes("escalation by route oncall"))) fail(m, "explain's text does not say what became of the escalation");
  }
}

// ---------------------------------------------------------------------------------------------- commands

type Cmd = fc.AsyncCommand<Model, World>;
const cmd = (name: string, body: (m: Model, w: World) => Promise<void> | void, pre?: (m: Model) => boolean): Cmd => modelCommand(name, body, pre);

const commands = {
  deploy: (app: number, failed: boolean) =>
    cmd(`deploy ${APPS[app]} ${failed ? "DEPLOYMENT_ERROR" : "DEPLOYED"}`, (m, w) => {
      const exec = w.sim.scenario.deploy(w.apps[app]!, { outcome: failed ? "DEPLOYMENT_ERROR" : "DEPLOYED", durations: QUICK });
      m.pending.push({ app, exec, failed });
      advance(w, m, 4_000);
    }),
  run: (gap: number) =>
    cmd(`run +${gap / 1000}s`, async (m, w) => {
      advance(w, m, gap);
      read(m);
      await run(w, m);
      flush(m);
      check(w, m);
    }),
  /** Two notify functions flushing at the same tick, as dispatch's invocations may overlap. */
  racingTicks: (gap: number) =>
    cmd(`two ticks racing +${gap / 1000}s`, async (m, w) => {
      advance(w, m, gap);
      await Promise.all([notifyFunctionTick(w), notifyFunctionTick(w)]);
      flush(m);
      check(w, m);
    }),
  acknowledge: (app: number) =>
    cmd(`acknowledge ${APPS[app]}`, async (m, w) => {
      const i = m.open[app]!;
      const root = rootOf(w, i);
      if (!root) fail(m, `no message of the incident of ${APPS[app]} to acknowledge`);
      const click = slackClick(root!, INCIDENT_ACTIONS.acknowledge, { id: "U0ANN", name: "ann" }, SECRET, m.now);
      const answer = answerSlack(slackRequestOf(click.headers, click.body), SECRET, m.now);
      const ports = composeActions(w.config, {
        dynamodb: w.client, tableName: w.tableName, log: silent, resolveSecret: (ref) => resolveSecret(ref, w.env), now: () => w.sim.clock.now(),
        slack: slackSender({ slackApiUrl: w.slack.apiUrl }),
      });
      const outcome = answer.act ? await actOn(answer.act, ports) : undefined;
      if (!outcome || !/acknowledged/.test(outcome.outcome)) fail(m, `the click on ${APPS[app]}'s message did not acknowledge it: ${JSON.stringify(outcome ?? answer)}`);
      i.ackedAt = m.now;
    }, (m) => m.open[app] !== undefined && m.open[app]!.ackedAt === undefined),
};

const sequences = fc.record({
  seed: fc.integer({ min: 1, max: 1_000_000 }),
  commands: fc.commands([
    fc.tuple(fc.integer({ min: 0, max: 1 }), fc.boolean()).map(([a, failed]) => commands.deploy(a, failed)),
    fc.tuple(fc.integer({ min: 0, max: 1 }), fc.constant(true)).map(([a]) => commands.deploy(a, true)),
    fc.constantFrom(MIN, 3 * MIN, 6 * MIN).map(commands.run),
    fc.constantFrom(MIN, 3 * MIN, 6 * MIN).map(commands.run),
    fc.constantFrom(2 * MIN, 6 * MIN).map(commands.racingTicks),
    fc.integer({ min: 0, max: 1 }).map(commands.acknowledge),
  ], { maxCommands: 8 }),
});

async function runSequence(input: { seed: number; commands: Iterable<Cmd> }): Promise<Model> {
  const { world, model } = await openWorld(input.seed);
  try {
    await fc.asyncModelRun(() => ({ model, real: world }), input.commands);
    // Settled: everything due has gone out, and the close of what went out reached the pager.
    for (const [a, i] of model.open.entries()) if (i) await commands.deploy(a, false).run(model, world);
    await commands.run(6 * MIN).run(model, world);
    await checkExplained(world, model);
    return model;
  } finally {
    await closeWorld(world);
  }
}

describe("escalation at the receivers, against a model", () => {
  const counted = { escalated: 0, quiet: 0 };

  it(`${RUNS} sequences: escalated once where nobody acknowledged or closed in time, never elsewhere, the close reaching the pager`, { timeout: 600_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(sequences, async (input) => {
        const m = await runSequence(input);
        for (const i of m.incidents) counted[i.escalatedAt === undefined ? "quiet" : "escalated"]++;
      }),
      { numRuns: RUNS, endOnFailure: true, seed: Number(process.env.ESCALATION_MODEL_SEED ?? 4242) },
    );
    // The draws exercised both outcomes.
    expect(counted.escalated).toBeGreaterThan(0);
    expect(counted.quiet).toBeGreaterThan(0);
  });

  describe("examples", () => {
    const c = commands;
    const example = (name: string, cmds: Cmd[], expectEscalated: number) =>
      it(name, { timeout: 120_000 }, async () => {
        const m = await runSequence({ seed: 7, commands: cmds });
        expect(m.incidents.filter((i) => i.escalatedAt !== undefined)).toHaveLength(expectEscalated);
        // `lookout run` prints one line per receiver escalated to (the racing ticks are not lookout run's).
        const said = m.printed.filter((l) => / escalate +sent +.* \(route oncall\)/.test(l));
        if (!cmds.some((x) => x.toString().startsWith("two ticks"))) expect(said).toHaveLength(3 * expectEscalated);
      });
    example("nobody acknowledged it: escalated once, and its close reaches the pager", [c.deploy(0, true), c.run(MIN), c.run(3 * MIN), c.run(3 * MIN), c.run(MIN)], 1);
    example("acknowledged in time: never escalated", [c.deploy(0, true), c.run(MIN), c.acknowledge(0), c.run(6 * MIN)], 0);
    example("closed in time: never escalated", [c.deploy(0, true), c.run(MIN), c.deploy(0, false), c.run(3 * MIN), c.run(6 * MIN)], 0);
    example("two ticks racing: escalated once", [c.deploy(1, true), c.run(MIN), c.racingTicks(6 * MIN), c.racingTicks(MIN)], 1);
    example("closed after it was escalated: the pager sees it resolve", [c.deploy(0, true), c.run(MIN), c.run(6 * MIN), c.deploy(0, false), c.run(MIN)], 1);
  });
});
