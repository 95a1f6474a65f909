/**
 * New incidents first, proven at the Slack test receiver: a webhook target that keeps failing gets its
 * repeats as replies in its thread, and then nine services fail in one run. Each failure must still
 * get a message of its own, with the route's mention: a thread's replies have a budget of their own
 * (docs/architecture.md, "Receivers' rate"), so they never push a new incident into a digest.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { checkConfig, type Config } from "../../../lib/config/load.js";
import { runLookout } from "../../../local/runtime/run.js";
import { startSlackReceiver, type SlackReceiver } from "../../../local/receivers/slack-receiver.js";
import { isChangesMessage } from "../../support/amendment.js";
import { dynamodbEndpoint } from "../../support/dynamodb.js";
import { startHostilePlatform, type HostilePlatform } from "../../support/hostile-platform.js";
import { delivery, deployment, set, type Json } from "../../support/platform-items.js";

const MIN = 60_000;
const ORG = randomUUID();
const HOOK = randomUUID();
const HOST = "flaky-target.example.com";
const silent = { info() {}, warn() {}, error() {} };
const apps = Array.from({ length: 9 }, (_, i) => ({ id: randomUUID(), name: `svc-${i + 1}` }));

let platform: HostilePlatform;
let slack: SlackReceiver;
let config: Config;
let env: NodeJS.ProcessEnv;
let dataDir: string;
/** The runs' clock: fixed between runs, so no token comes back in between (the burst alone). */
const T = Date.now();
const at = (t: number) => new Date(t).toISOString();

beforeAll(async () => {
  [platform, slack] = await Promise.all([startHostilePlatform(), startSlackReceiver()]);
  dataDir = mkdtempSync(join(tmpdir(), "lookout-storm-priority-"));
  env = {
    PLATFORM_TOKEN: platform.token, SLACK_BOT_TOKEN: "xoxb-test", LOOKOUT_SLACK_API_URL: slack.apiUrl,
    DYNAMODB_ENDPOINT: dynamodbEndpoint(), LOOKOUT_TABLE: `storm-priority-${randomUUID().slice(0, 8)}`,
  };
  config = checkConfig(
    {
      platform: { url: platform.url, token: "env:PLATFORM_TOKEN" },
      watch: [{ organization: ORG, applications: apps.map((a) => ({ ...a, environment: "prod" })), webhooks: [HOOK] }],
      data_dir: dataDir,
      routes: [{ name: "oncall", slack: [{ channel: "#oncall", token: "env:SLACK_BOT_TOKEN" }], mention: ["@here"], mention_on: ["error", "critical"] }],
    },
    "storm-priority",
    {},
  );
});
afterAll(async () => {
  await Promise.all([platform.close(), slack.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

const run = () => runLookout({ config, env, once: true, log: silent, print: () => {}, now: () => new Date(T) });
const appPath = (id: string) => `/application/${id}/deploymentHistoryV2`;
const hookPath = `/organization/${ORG}/webhook/${HOOK}/event`;
const failedDelivery = (i: number): Json => ({ ...set(delivery(`d-${i}-${randomUUID()}`, 503, 0), "target_url_used", `https://${HOST}/in`), created_at: at(T - 50_000 + i) });
function failedDeployment(service: string): Json {
  const d = set(deployment(service, `x-${randomUUID()}`, "DEPLOYMENT_ERROR", 0), "details.commit.message", `MARK-${service}`);
  (d.auditing_data as Json).created_at = at(T - 2 * MIN);
  (d.auditing_data as Json).updated_at = at(T - MIN);
  return d;
}

describe("a storm of new incidents beside a thread's repeats", () => {
  it("every new failure gets a message of its own with the route's mention; the repeats stay in their thread", { timeout: 120_000 }, async () => {
    for (const a of apps) platform.list(appPath(a.id), []);
    platform.list(hookPath, []);
    await run(); // first sight: nothing

    // The target fails: one opening, then five repeats of the same error in its thread.
    const deliveries = [failedDelivery(0)];
    platform.list(hookPath, deliveries);
    await run();
    for (let i = 1; i <= 5; i++) {
      deliveries.unshift(failedDelivery(i));
      platform.list(hookPath, [...deliveries]);
      await run();
    }
    const api = () => slack.messages.filter((m) => m.form === "api" && m.channel === "#oncall");
    const text = (m: ReturnType<typeof api>[number]) => JSON.stringify(m);
    const hookMessages = api().filter((m) => text(m).includes(HOST));
    expect(hookMessages.filter((m) => !m.thread_ts)).toHaveLength(1);
    expect(hookMessages.filter((m) => m.thread_ts)).toHaveLength(5);

    // Nine services fail in the same run: a budget shared with the thread (its opening and five replies,
    // six of the burst of 10) would leave four.
    for (const a of apps) platform.list(appPath(a.id), [failedDeployment(a.id)]);
    await run();
    const roots = api().filter((m) => !m.thread_ts && !isChangesMessage(text(m)));
    for (const a of apps) {
      const own = roots.filter((m) => text(m).includes(`MARK-${a.id}`) && !text(m).includes("Lookout held back"));
      expect(own, a.name).toHaveLength(1);
      // As posted: the notification people got (its "what changed" edit since notifies nobody).
      expect(own[0]!.notified?.startsWith("<!here>"), `${a.name}: ${own[0]!.notified}`).toBe(true);
    }
    expect(roots.filter((m) => text(m).includes("Lookout held back"))).toEqual([]);
  });
});
