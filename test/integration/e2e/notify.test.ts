/**
 * End to end on one machine (issue 4): `lookout run --once` against the simulator, with a route to a
 * local Slack receiver (Web API form, and an incoming webhook) and email as `.eml` files. A failed
 * deployment reaches each receiver exactly once; the recovery arrives in the same thread.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { checkConfig, type Config } from "../../../lib/config/load.js";
import { runLookout } from "../../../local/runtime/run.js";
import { simpleParser } from "mailparser";
import { startSlackReceiver, type SlackReceiver } from "../../../local/receivers/slack-receiver.js";
import { isChangesMessage } from "../../support/amendment.js";
import { dynamodbEndpoint } from "../../support/dynamodb.js";

let sim: Simulator;
let slack: SlackReceiver;
let config: Config;
let env: NodeJS.ProcessEnv;
const lines: string[] = [];
const silent = { info() {}, warn() {}, error() {} };

beforeAll(async () => {
  [sim, slack] = await Promise.all([startSimulator({ seed: 21, size: { applications: 2, clusters: 1, webhooks: 1 } }), startSlackReceiver()]);
  const dataDir = mkdtempSync(join(tmpdir(), "lookout-e2e-"));
  env = {
    SIM_TOKEN: sim.apiToken, SLACK_BOT_TOKEN: "xoxb-test", SLACK_WEBHOOK: slack.webhookUrl("T000/B000/XXXX"),
    LOOKOUT_SLACK_API_URL: slack.apiUrl, DYNAMODB_ENDPOINT: dynamodbEndpoint(), LOOKOUT_TABLE: `e2e-${randomUUID().slice(0, 8)}`,
  };
  config = checkConfig(
    {
      platform: { url: sim.url, token: "env:SIM_TOKEN" },
      watch: [{ organization: sim.ids.organizationId, applications: [{ id: sim.ids.applicationIds[0], name: "api", environment: "prod" }] }],
      data_dir: dataDir,
      retention: "3650d",
      routes: [
        {
          name: "deployments",
          match: { kind: "deployment" },
          slack: [{ channel: "#oncall", token: "env:SLACK_BOT_TOKEN" }, { webhook_url: "env:SLACK_WEBHOOK" }],
          email: { to: ["oncall@example.com"] },
        },
      ],
      notify: { email: { from: "lookout@example.com" } },
    },
    "e2e",
    {},
  );
});
afterAll(async () => {
  await sim.close();
  await slack.close();
});

const run = () => runLookout({ config, env, once: true, log: silent, print: (l) => lines.push(l), now: () => sim.clock.now() });
// The failure's own messages: its amendment listing what changed (Deployment Changes Listed) is another alert.
const amendment = isChangesMessage;
const emails = () => {
  const dir = join(config.dataDir, "outbox");
  return existsSync(dir) ? readdirSync(dir).sort().map((f) => readFileSync(join(dir, f), "utf8")).filter((m) => !amendment(m)) : [];
};

describe("a failing deployment, end to end", () => {
  it("reaches Slack once per receiver and email once; the recovery lands in the same thread", async () => {
    const app = sim.ids.applicationIds[0]!;
    await run(); // first sight

    sim.scenario.deploy(app, { outcome: "DEPLOYMENT_ERROR", commit: { git_commit_id: "feedface1234", message: "<!channel> *oops*", author_name: "Ann" } });
    sim.clock.advance(5 * 60_000);
    await run();
    const sent = () => slack.messages.filter((m) => !amendment(JSON.stringify(m.body)));
    const api = () => sent().filter((m) => m.form === "api");
    const hook = () => sent().filter((m) => m.form === "webhook");
    expect(api()).toHaveLength(1);
    expect(hook()).toHaveLength(1);
    expect(emails()).toHaveLength(1);
    const first = api()[0]!;
    expect(first.channel).toBe("#oncall");
    expect(first.text).toContain("api");
    expect(JSON.stringify(first.blocks)).not.toContain("<!channel>");
    const mail = await simpleParser(emails()[0]!);
    expect(mail.subject).toMatch(/^\[Lookout\] incident: api in [^ ]*prod — deployment, opened \d{4}-\d\d-\d\d \d\d:\d\d UTC$/); // the incident's, without its state
    expect(mail.headers.get("x-lookout-state")).toBe("FAILED");
    expect(mail.text).toContain("feedface");
    expect(mail.html).not.toContain("<!channel>");

    // What changed came after, as an amendment: the Web API message edited in place, the webhook form quoted.
    expect(slack.updates.some((u) => u.ts === first.ts)).toBe(true);
    expect(slack.messages.filter((m) => m.form === "webhook")).toHaveLength(2);

    await run(); // nothing new: nothing sent again
    expect(sent()).toHaveLength(2);

    sim.scenario.deploy(app, { outcome: "DEPLOYED" });
    sim.clock.advance(5 * 60_000);
    await run();
    expect(api()).toHaveLength(2);
    expect(api()[1]!.thread_ts).toBe(first.ts);
    expect(hook()).toHaveLength(2);
    expect(hook()[1]!.thread_ts).toBeUndefined(); // incoming webhooks cannot thread: a quoting message
    expect(emails()).toHaveLength(2);
    const followUp = await simpleParser(emails()[1]!);
    expect(followUp.inReplyTo).toBe(mail.messageId);
    expect(followUp.subject).toBe(mail.subject);
    expect(lines.some((l) => l.includes("notify") && l.includes("sent"))).toBe(true);
  });
});
