/**
 * Acting from the message, end to end on one machine (docs/actions.md): `lookout run --once` against the
 * simulator posts a failed deployment to the local Slack (Web API form) with its buttons; a click on
 * the local Slack, signed as Slack signs it, is answered and acted on through the real Slack sender and
 * DynamoDB Local. The person sees the message say who acknowledged it and a reply in its thread; the
 * same click again, a stale replay and a forged one change nothing; "Mute 1h" mutes the service, and
 * its next failure reaches nobody.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { checkConfig, resolveSecret, type Config } from "../../../lib/config/load.js";
import { runLookout } from "../../../local/runtime/run.js";
import { slackClick, startSlackReceiver, type SlackReceiver } from "../../../local/receivers/slack-receiver.js";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../local/runtime/dynamodb-local.js";
import { answerSlack, slackRequestOf } from "../../../lib/actions/endpoint.js";
import { actOn, type ActionPorts } from "../../../lib/actions/act.js";
import { composeActions } from "../../../lib/app/actions.js";
import { slackSender } from "../../../lib/notify/slack/sender.js";
import { INCIDENT_ACTIONS } from "../../../lib/model/incident-action.js";
import { isChangesMessage } from "../../support/amendment.js";
import { AuditTrail } from "../../../lib/audit/trail.js";
import { DynamoAuditItems } from "../../../lib/store/audit-store.js";
import { startActionsEndpoint } from "../../../local/runtime/actions-endpoint.js";
import { slackSignature } from "../../../lib/actions/slack-request.js";
import { parseAuditQuery } from "../../../lib/audit/parse.js";
import { explanationLines } from "../../../lib/audit/output-formats.js";
import { dynamodbEndpoint } from "../../support/dynamodb.js";

const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const silent = { info() {}, warn() {}, error() {} };
let sim: Simulator;
let slack: SlackReceiver;
let config: Config;
let env: NodeJS.ProcessEnv;
let ports: ActionPorts;
let dynamodb: DynamoDBClient;

beforeAll(async () => {
  [sim, slack] = await Promise.all([startSimulator({ seed: 24, size: { applications: 2, clusters: 1, webhooks: 1 } }), startSlackReceiver()]);
  env = {
    SIM_TOKEN: sim.apiToken, SLACK_BOT_TOKEN: "xoxb-test", SLACK_SIGNING_SECRET: SECRET, LOOKOUT_SLACK_API_URL: slack.apiUrl,
    DYNAMODB_ENDPOINT: dynamodbEndpoint(), LOOKOUT_TABLE: `actions-${randomUUID().slice(0, 8)}`,
  };
  config = checkConfig({
    platform: { url: sim.url, token: "env:SIM_TOKEN" },
    watch: [{ organization: sim.ids.organizationId, applications: [{ id: sim.ids.applicationIds[0], name: "api", environment: "prod" }] }],
    data_dir: mkdtempSync(join(tmpdir(), "lookout-actions-")),
    retention: "3650d",
    routes: [{ name: "deployments", match: { kind: "deployment" }, slack: { channel: "#oncall", token: "env:SLACK_BOT_TOKEN" } }],
    notify: { slack_actions: { signing_secret: "env:SLACK_SIGNING_SECRET" } },
  }, "actions", {});
  dynamodb = new DynamoDBClient({ endpoint: env.DYNAMODB_ENDPOINT, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  ports = composeActions(config, {
    dynamodb, tableName: env.LOOKOUT_TABLE!, log: silent, resolveSecret: (ref) => resolveSecret(ref, env), now: () => sim.clock.now(),
    slack: slackSender({ slackApiUrl: slack.apiUrl }),
  });
});
afterAll(async () => {
  dynamodb?.destroy();
  await sim?.close();
  await slack?.close();
});

const run = () => runLookout({ config, env, once: true, log: silent, print: () => undefined, now: () => sim.clock.now() });
const top = () => slack.messages.filter((m) => !m.thread_ts && !isChangesMessage(JSON.stringify(m.body)));
const shown = (m: { blocks?: unknown[]; attachments?: unknown[] }) => JSON.stringify([m.blocks, m.attachments]);
const ann = { id: "U0ANN", name: "ann" };

/** The endpoint's answer, and the action done after it, as the deployed function does them. */
async function send(click: { headers: Record<string, string>; body: string }, nowMs = Date.now()) {
  const answer = answerSlack(slackRequestOf(click.headers, click.body), SECRET, nowMs);
  return { answer, outcome: answer.act ? await actOn(answer.act, ports) : undefined };
}

describe("acting from the message", () => {
  it("a failure's message carries the buttons; Acknowledge says who is looking, once, and refuses what Slack did not sign", async () => {
    const app = sim.ids.applicationIds[0]!;
    await run(); // first sight
    sim.scenario.deploy(app, { outcome: "DEPLOYMENT_ERROR" });
    sim.clock.advance(5 * 60_000);
    await run();
    expect(top()).toHaveLength(1);
    const message = top()[0]!;
    expect(shown(message)).toContain(INCIDENT_ACTIONS.acknowledge);

    const click = slackClick(message, INCIDENT_ACTIONS.acknowledge, ann, SECRET);
    expect(await send(click)).toMatchObject({ answer: { status: 200 }, outcome: { outcome: "acknowledged", by: "U0ANN" } });
    // What the person sees: the message edited in place, and a reply in its thread.
    expect(shown(message)).toContain("Acknowledged by <@U0ANN>");
    expect(shown(message)).not.toContain(INCIDENT_ACTIONS.acknowledge);
    const replies = () => slack.messages.filter((m) => m.thread_ts === message.ts);
    expect(replies().map((m) => m.text)).toEqual(["👀 Acknowledged by <@U0ANN>: they are looking at it."]);

    // The same click again (Slack's retry), a replay past five minutes, a forgery: nothing more is shown.
    expect((await send(click)).outcome).toEqual({ outcome: "duplicate" });
    expect((await send(click, Date.now() + 6 * 60_000)).answer).toMatchObject({ status: 401, why: expect.stringContaining("stale") });
    expect((await send({ ...click, body: click.body.replace("U0ANN", "U0EVE") })).answer).toMatchObject({ status: 401, why: expect.stringContaining("forged") });
    expect(replies()).toHaveLength(1);
  });

  it("Mute 1h mutes the service: said in the thread, and its next failure reaches nobody", async () => {
    const message = top()[0]!;
    const before = slack.messages.length;
    sim.clock.advance(60_000); // a minute after the acknowledgement
    expect((await send(slackClick(message, INCIDENT_ACTIONS.mute_1h, ann, SECRET))).outcome).toMatchObject({ outcome: "muted" });
    const said = slack.messages.slice(before);
    expect(said.map((m) => [m.thread_ts, m.text?.slice(0, 9)])).toEqual([[message.ts, "🔕 Muted "]]);

    sim.scenario.deploy(sim.ids.applicationIds[0]!, { outcome: "BUILD_ERROR" });
    sim.clock.advance(5 * 60_000);
    await run();
    expect(slack.messages.length).toBe(before + 1);
  });

  it("every click is an audit row of its service, and `explain` of the alert says who did what from its message", async () => {
    const reader = new AuditTrail(new DynamoAuditItems({ client: dynamodb, tableName: env.LOOKOUT_TABLE! }));
    // The alert the buttons stand for, from the value of one of them.
    const value = shown(top()[0]!).match(/"action_id":"lookout_mute_1h","value":"((?:[^"\\]|\\.)*)"/)![1]!;
    const alertId = (JSON.parse(JSON.parse(`"${value}"`) as string) as { a: string }).a;
    expect(alertId).toBeTruthy();
    const rows = (await reader.query(parseAuditQuery({ type: "action", since: "3650d" }, sim.clock.now()))).rows;
    // Newest first: the mute, then the acknowledgement (a retry, a replay and a forgery added none).
    expect(rows.map((r) => [r.type, r.id, r.actor, r.service?.id, r.summary.split(" in Slack")[0]])).toEqual([
      ["action", alertId, "slack:ann", sim.ids.applicationIds[0], "Muted for an hour by ann"],
      ["action", alertId, "slack:ann", sim.ids.applicationIds[0], "Acknowledged by ann"],
    ]);
    // Found by who clicked, too.
    expect((await reader.query(parseAuditQuery({ actor: "slack:ann", since: "3650d" }, sim.clock.now()))).rows).toHaveLength(2);

    const explained = (await reader.explain(alertId))!.alerts.find((a) => a.id === alertId)!;
    expect(explained.actions?.map((x) => [x.kind, x.by, x.channel])).toEqual([["acknowledge", ann, expect.any(String)], ["mute_1h", ann, expect.any(String)]]);
    const lines = explanationLines((await reader.explain(alertId))!).join("\n");
    expect(lines).toContain("Acknowledged by ann (Slack U0ANN)");
    expect(lines).toContain("Muted for an hour by ann (Slack U0ANN)");
  });

  it("the local endpoint (lookout start/run) answers as the deployed function does and acts after: 413 for a hostile body, 401 unsigned, 404 elsewhere", async () => {
    const acted: string[] = [];
    const warned: string[] = [];
    const endpoint = await startActionsEndpoint({
      signingSecret: SECRET, ports, log: { ...silent, warn: (m, x) => warned.push(`${m} ${JSON.stringify(x)}`) }, onActed: (e, o) => acted.push(`${e.request.kind}:${o.outcome}`),
    });
    const message = top()[0]!;
    try {
      const post = (body: string, headers: Record<string, string>) => fetch(endpoint.url, { method: "POST", headers, body });
      // A signed click: answered 200 with nothing in the body, then acted on (its retry is the same click).
      const click = slackClick(message, INCIDENT_ACTIONS.mute_until_resolved, { id: "U0BOB", name: "bob" }, SECRET);
      const res = await post(click.body, click.headers);
      expect([res.status, await res.text()]).toEqual([200, ""]);
      await endpoint.close(); // waits for the click being acted on
      expect(acted).toEqual(["mute_until_resolved:muted"]);
      expect(slack.messages.at(-1)).toMatchObject({ thread_ts: message.ts, text: expect.stringContaining("until the incident resolves, by <@U0BOB>") });
    } finally {
      await endpoint.close();
    }
    const again = await startActionsEndpoint({ signingSecret: SECRET, ports, log: { ...silent, warn: (m, x) => warned.push(`${m} ${JSON.stringify(x)}`) } });
    try {
      const form = { "content-type": "application/x-www-form-urlencoded" };
      const signed = (body: string) => {
        const ts = String(Math.floor(Date.now() / 1000));
        return { ...form, "x-slack-request-timestamp": ts, "x-slack-signature": slackSignature(SECRET, ts, body) };
      };
      // Hostile shapes, signed: a 300,000-character user name and a payload nested 10,000 deep are not
      // Slack's: 400 naming what is wrong, quickly, nothing acted on.
      const huge = JSON.parse(new URLSearchParams(slackClick(message, INCIDENT_ACTIONS.mute_1h, ann, SECRET).body).get("payload")!) as { user: { name: string } };
      huge.user.name = "n".repeat(300_000);
      const deep = `{"type":"block_actions","user":{"id":"U1","name":${"[".repeat(10_000)}${"]".repeat(10_000)}}}`;
      for (const payload of [JSON.stringify(huge), deep]) {
        const body = new URLSearchParams({ payload }).toString();
        const res = await fetch(again.url, { method: "POST", headers: signed(body), body });
        expect(res.status).toBe(400);
        expect((await res.text()).length).toBeLessThan(500);
      }
      // Past 1 MB: refused before it is read or verified.
      const big = await fetch(again.url, { method: "POST", headers: form, body: `payload=${"x".repeat(2_000_000)}` });
      expect(big.status).toBe(413);
      expect(acted).toHaveLength(1);
      // Within the limit but unsigned: 401, said on the terminal without the body.
      const unsigned = await fetch(again.url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "payload=%7B%7D" });
      expect([unsigned.status, await unsigned.text()]).toEqual([401, expect.stringContaining("unsigned")]);
      expect(warned.join("\n")).toContain("refused");
      expect(warned.join("\n")).not.toContain("payload=");
      expect((await fetch(again.url.replace("/slack/actions", "/other"), { method: "POST", body: "" })).status).toBe(404);
      expect((await fetch(again.url, { method: "GET" })).status).toBe(404);
    } finally {
      await again.close();
    }
  });
});
