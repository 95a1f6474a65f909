/**
 * On one machine, end to end (`lookout run --once` against the simulator): a cluster error, which no
 * route matches, reaches the default route's Slack receiver; a burst of them beyond the budget is held,
 * and with nothing else arriving a later run's flush sends one digest of what was held.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { checkConfig, type Config } from "../../../lib/config/load.js";
import { runLookout } from "../../../local/runtime/run.js";
import { startSlackReceiver, type SlackReceiver } from "../../../local/receivers/slack-receiver.js";
import { dynamodbEndpoint } from "../../support/dynamodb.js";

let sim: Simulator;
let slack: SlackReceiver;
let config: Config;
let env: NodeJS.ProcessEnv;
const lines: string[] = [];
const silent = { info() {}, warn() {}, error() {} };

beforeAll(async () => {
  [sim, slack] = await Promise.all([startSimulator({ seed: 7, size: { applications: 1, clusters: 1, webhooks: 0 } }), startSlackReceiver()]);
  env = {
    SIM_TOKEN: sim.apiToken, HOOK_DEPLOYS: slack.webhookUrl("T1/B1/deploys"), HOOK_DEFAULT: slack.webhookUrl("T1/B1/default"),
    DYNAMODB_ENDPOINT: dynamodbEndpoint(), LOOKOUT_TABLE: `default-e2e-${randomUUID().slice(0, 8)}`,
  };
  config = checkConfig(
    {
      platform: { url: sim.url, token: "env:SIM_TOKEN" },
      watch: [{ organization: sim.ids.organizationId, clusters: sim.ids.clusterIds }],
      data_dir: mkdtempSync(join(tmpdir(), "lookout-default-e2e-")),
      retention: "3650d",
      routes: [{ name: "deploys", match: { kind: "deployment" }, slack: { webhook_url: "env:HOOK_DEPLOYS" } }],
      notify: { slack_rate: { per_second: 1, burst: 1 }, digest_within: "2m", default: { slack: { webhook_url: "env:HOOK_DEFAULT" } } },
    },
    "default-e2e",
    {},
  );
});
afterAll(async () => {
  await sim.close();
  await slack.close();
});

const run = () => runLookout({ config, env, once: true, log: silent, print: (l) => lines.push(l), now: () => sim.clock.now() });
const posted = (name: string) => slack.messages.filter((m) => m.path?.endsWith(name));

describe("the default route and digests, on one machine", () => {
  it("a cluster error no route matches reaches the default receiver; a burst is held and flushed as one digest", async () => {
    await run(); // first sight
    sim.scenario.clusterRun(sim.ids.clusterIds[0]!, { entries: 6, errors: 3 });
    sim.clock.advance(60_000);
    const summary = await run();
    expect(summary.alerts).toBe(3);
    expect(posted("deploys")).toEqual([]);
    // The budget (burst 1) let the incident's first through, and its replies' budget (burst 1) one
    // follow-up; the third is held.
    expect(posted("default")).toHaveLength(2);
    expect(lines.filter((l) => l.includes("(route default)") && l.includes("held"))).toHaveLength(1);

    // Nothing else arrives. The next pass, within digest_within, flushes the digest.
    sim.clock.advance(60_000);
    await run();
    expect(posted("default")).toHaveLength(3);
    const digest = JSON.stringify(posted("default")[2]!.blocks);
    expect(digest).toContain("1 alert held back for this channel");
    expect(digest).not.toContain("env:HOOK_DEFAULT"); // an incoming webhook is no name to show people
    expect(digest).toMatch(/\(held 1m 0\ds\)/);
    await run();
    expect(posted("default")).toHaveLength(3); // sent once
  }, 120_000);
});
