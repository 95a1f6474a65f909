/**
 * What a person sees on the day Lookout is first deployed: a service already failing when Lookout
 * first looks at it (its old failure is backfill: no alert), then failing again. The new failure is a
 * follow-up of an incident no receiver was shown, so it is each receiver's opening, at the run that
 * read it, with what changed; the recovery resolves that message. Cron runs (`lookout run --once`)
 * one minute and a few seconds apart, against the simulator, DynamoDB Local, the Slack test receiver
 * in both forms and email as .eml files (docs/events.md, "Incidents").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { simpleParser } from "mailparser";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { checkConfig, type Config } from "../../../lib/config/load.js";
import { runLookout } from "../../../local/runtime/run.js";
import { startSlackReceiver, type SlackReceiver } from "../../../local/receivers/slack-receiver.js";
import { isChangesMessage } from "../../support/amendment.js";
import { dynamodbEndpoint } from "../../support/dynamodb.js";

const silent = { info() {}, warn() {}, error() {} };
/** A deployment over in three seconds, so that a run seconds later reads how it ended. */
const QUICK = { queuedMs: 1_000, buildingMs: 1_000, deployingMs: 1_000 };

describe.each([
  ["one minute apart", 60_000],
  ["seconds apart", 5_000],
])("first sight of a failing service, then a new failure, runs %s", (_name, apart) => {
  let sim: Simulator;
  let slack: SlackReceiver;
  let config: Config;
  let env: NodeJS.ProcessEnv;
  let dataDir: string;
  const lines: string[] = [];

  beforeAll(async () => {
    [sim, slack] = await Promise.all([startSimulator({ seed: 7, size: { applications: 1, clusters: 1, webhooks: 1 } }), startSlackReceiver()]);
    dataDir = mkdtempSync(join(tmpdir(), "lookout-first-sight-"));
    env = {
      SIM_TOKEN: sim.apiToken, SLACK_BOT_TOKEN: "xoxb-test", SLACK_WEBHOOK: slack.webhookUrl("T000/B000/XXXX"),
      LOOKOUT_SLACK_API_URL: slack.apiUrl, DYNAMODB_ENDPOINT: dynamodbEndpoint(), LOOKOUT_TABLE: `first-sight-${randomUUID().slice(0, 8)}`,
    };
    config = checkConfig(
      {
        platform: { url: sim.url, token: "env:SIM_TOKEN" },
        watch: [{ organization: sim.ids.organizationId, applications: [{ id: sim.ids.applicationIds[0], name: "api", environment: "prod" }] }],
        data_dir: dataDir,
        routes: [{
          name: "deployments",
          match: { kind: "deployment" },
          slack: [{ channel: "#oncall", token: "env:SLACK_BOT_TOKEN" }, { webhook_url: "env:SLACK_WEBHOOK" }],
          email: { to: ["oncall@example.com"] },
        }],
        notify: { email: { from: "lookout@example.com" } },
      },
      "first-sight",
      {},
    );
  });
  afterAll(async () => {
    await Promise.all([sim.close(), slack.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const run = () => runLookout({ config, env, once: true, log: silent, print: (l) => { lines.push(l); if (process.env.DEBUG_E2E) console.log(new Date().toISOString().slice(14, 23), l); }, now: () => sim.clock.now() });
  const emails = () => {
    const dir = join(config.dataDir, "outbox");
    return existsSync(dir) ? readdirSync(dir).sort().map((f) => readFileSync(join(dir, f), "utf8")) : [];
  };
  const failures = (raw: string[]) => raw.filter((m) => !isChangesMessage(m));

  it("shows the new failure at every receiver at the run that read it, with what changed; the recovery resolves it", { timeout: 60_000 }, async () => {
    const app = sim.ids.applicationIds[0]!;
    sim.scenario.deploy(app, { outcome: "DEPLOYMENT_ERROR", commit: { git_commit_id: "0ld0ld0ld0ld", message: "old", author_name: "Old" } });
    sim.clock.advance(60 * 60_000); // an hour before Lookout's first look: past the backfill window
    await run(); // first sight: the old failure is kept quiet
    expect(slack.messages).toHaveLength(0);
    expect(emails()).toHaveLength(0);

    sim.scenario.deploy(app, { outcome: "DEPLOYMENT_ERROR", durations: QUICK, commit: { git_commit_id: "feedface1234", message: "break it", author_name: "Ann" } });
    sim.clock.advance(apart);
    await run();

    // Web API: one channel message of its own (not a reply to a thread nobody sees), naming the commit, and
    // edited in place with what changed.
    const api = slack.messages.filter((m) => m.form === "api");
    expect(api.filter((m) => !m.thread_ts)).toHaveLength(1);
    const root = api[0]!;
    expect(root.thread_ts).toBeUndefined();
    expect(JSON.stringify(root.blocks) + JSON.stringify(root.attachments)).toContain("feedfac");
    expect(slack.updates.some((u) => u.ts === root.ts)).toBe(true);
    expect(JSON.stringify(root.attachments)).toContain("What changed");
    // Incoming webhook: the failure, then what changed.
    const hook = slack.messages.filter((m) => m.form === "webhook");
    expect(failures(hook.map((m) => JSON.stringify(m)))).toHaveLength(1);
    expect(hook.map((m) => JSON.stringify(m)).filter(isChangesMessage)).toHaveLength(1);
    // Email: the failure, then what changed in the same conversation.
    expect(failures(emails())).toHaveLength(1);
    expect(emails().filter(isChangesMessage)).toHaveLength(1);
    const opened = await simpleParser(failures(emails())[0]!);
    expect(opened.text).toContain("feedfac");
    // Nothing waits for another run.
    expect(existsSync(join(dataDir, "notify-retries.json")) ? JSON.parse(readFileSync(join(dataDir, "notify-retries.json"), "utf8")) : {}).toEqual({});

    sim.scenario.deploy(app, { outcome: "DEPLOYED", durations: QUICK });
    sim.clock.advance(apart);
    await run();
    const reply = slack.messages.filter((m) => m.form === "api" && m.thread_ts === root.ts);
    expect(reply).toHaveLength(1);
    expect(slack.messages.find((m) => m.ts === root.ts)!.text).toContain("Resolved after");
    expect(failures(emails())).toHaveLength(2);
    const closed = await simpleParser(failures(emails())[1]!);
    expect(closed.inReplyTo).toBe(opened.messageId);
    expect(closed.subject).toBe(opened.subject);
  });
});
