/**
 * The one-machine runner end to end: simulator → poll → DynamoDB Local → stream → local bus
 * (events.ndjson), and what survives a crash between writing an alert and publishing it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, readFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { checkConfig, ConfigError, type Config } from "../../../lib/config/load.js";
import { runLookout } from "../../../local/runtime/run.js";
import { PreflightError } from "../../../local/runtime/preflight.js";
import { openLocalPipeline } from "../../../local/runtime/pipeline.js";
import { terminalSlack } from "../../../local/runtime/terminal-slack.js";
import { AuditTrail } from "../../../lib/audit/trail.js";
import { DynamoAuditItems } from "../../../lib/store/audit-store.js";
import { pollSource } from "../../../lib/poll/poll.js";
import type { LookoutEventEnvelope } from "../../../lib/model/event.js";
import { dynamodbEndpoint } from "../../support/dynamodb.js";

let sim: Simulator;
const silent = { info() {}, warn() {}, error() {} };

beforeAll(async () => {
  sim = await startSimulator({ seed: 11, size: { applications: 2, clusters: 1, webhooks: 1 } });
});
afterAll(() => sim.close());

function setup(): { config: Config; env: NodeJS.ProcessEnv } {
  const dataDir = mkdtempSync(join(tmpdir(), "lookout-run-"));
  const config = checkConfig(
    {
      platform: { url: sim.url, token: "env:SIM_TOKEN" },
      watch: [{ organization: sim.ids.organizationId, webhooks: sim.ids.webhookIds, clusters: sim.ids.clusterIds, applications: sim.ids.applicationIds }],
      data_dir: dataDir,
      retention: "3650d", // the simulated clock is in the past; DynamoDB Local enforces TTL
    },
    "test",
    {},
  );
  const env = { SIM_TOKEN: sim.apiToken, DYNAMODB_ENDPOINT: dynamodbEndpoint(), LOOKOUT_TABLE: `run-${randomUUID().slice(0, 8)}` };
  return { config, env };
}

const events = (dataDir: string): LookoutEventEnvelope[] => {
  const file = join(dataDir, "events.ndjson");
  return existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
};

describe("lookout run --once", () => {
  it("polls every source, publishes each failure once to the local bus, and says what it did", async () => {
    const { config, env } = setup();
    const lines: string[] = [];
    const run = () => runLookout({ config, env, once: true, log: silent, print: (l) => lines.push(l), now: () => sim.clock.now() });

    const first = await run(); // first sight
    expect(first.polls).toBe(4);
    expect(first.failedPolls).toBe(0);

    sim.scenario.deploy(sim.ids.applicationIds[0]!, { outcome: "DEPLOYMENT_ERROR", commit: { git_commit_id: "0123456789ab", message: "<!channel> *boom*", author_name: "Ann" } });
    sim.scenario.clusterRun(sim.ids.clusterIds[0]!, { entries: 5, errors: 1 });
    sim.clock.advance(5 * 60_000);
    const second = await run();
    // The failure, its amendment listing the commits since the last success, the cluster error.
    expect(second.alerts).toBe(3);
    expect(second.published).toBe(3);

    const published = events(config.dataDir);
    expect(published.map((e) => e["detail-type"]).sort()).toEqual(["Cluster Error", "Deployment Changes Listed", "Deployment Failed"]);
    const failed = published.find((e) => e["detail-type"] === "Deployment Failed")!;
    expect(failed).toMatchObject({ version: "0", source: "lookout", detail: { transition: "failed", deployment: { commit: { short_id: "0123456" } } } });
    expect(typeof failed.id).toBe("string");
    expect(Number.isNaN(Date.parse(failed.time))).toBe(false);
    expect(lines.some((l) => l.includes("deployment failed"))).toBe(true);
    // No receiver configured, yet no terminal preview of Slack: a --once run's output is cron's log.
    expect(lines.some((l) => l.includes("shown here"))).toBe(false);

    const third = await run();
    expect(third.alerts).toBe(0);
    expect(events(config.dataDir)).toHaveLength(3);
  });
});

describe("email on one machine, as .eml files", () => {
  it("are named and dated by the run's clock (the demo's runs faster than the wall's), as its events are", async () => {
    // A simulator of its own: the failure below must not reach the other tests' world.
    const own = await startSimulator({ seed: 12, size: { applications: 2, clusters: 1, webhooks: 1 } });
    const dataDir = mkdtempSync(join(tmpdir(), "lookout-run-mail-"));
    try {
      const config = checkConfig(
        {
          platform: { url: own.url, token: "env:SIM_TOKEN" },
          watch: [{ organization: own.ids.organizationId, applications: own.ids.applicationIds }],
          data_dir: dataDir,
          retention: "3650d",
          routes: [{ name: "mail", match: { kind: "deployment" }, email: { to: ["oncall@example.com"] } }],
          notify: { email: { from: "lookout@example.com" } },
        },
        "test",
        {},
      );
      const env = { SIM_TOKEN: own.apiToken, DYNAMODB_ENDPOINT: dynamodbEndpoint(), LOOKOUT_TABLE: `run-mail-${randomUUID().slice(0, 8)}` };
      const run = () => runLookout({ config, env, once: true, log: silent, print: () => {}, now: () => own.clock.now() });
      await run(); // first sight
      own.scenario.deploy(own.ids.applicationIds[1]!, { outcome: "DEPLOYMENT_ERROR" });
      own.clock.advance(5 * 60_000);
      const at = own.clock.now();
      expect(Math.abs(at.getTime() - Date.now())).toBeGreaterThan(60 * 60_000); // the simulator's clock is not the wall's
      await run();
      const outbox = join(dataDir, "outbox");
      const mails = readdirSync(outbox).filter((f) => f.endsWith(".eml"));
      expect(mails.length).toBeGreaterThan(0);
      for (const name of mails) {
        expect(name.slice(0, 10)).toBe(at.toISOString().slice(0, 10));
        const date = /^Date: (.+)\r$/m.exec(readFileSync(join(outbox, name), "utf8"))?.[1];
        expect(Math.abs(Date.parse(date!) - at.getTime())).toBeLessThan(60 * 60_000);
      }
    } finally {
      await own.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("start-up problems are one line that says what to do", () => {
  it("a rejected token, an unreachable platform", async () => {
    const { config, env } = setup();
    const run = (c: Config, e: NodeJS.ProcessEnv) => runLookout({ config: c, env: e, once: true, log: silent, print: () => {} });
    await expect(run(config, { ...env, SIM_TOKEN: "revoked" })).rejects.toThrow(PreflightError);
    await expect(run(config, { ...env, SIM_TOKEN: "revoked" })).rejects.toThrow(/rejected the token \(401\): check the token that platform.token names \(env:SIM_TOKEN\)/);
    const unreachable = { ...config, platform: { ...config.platform, url: "http://127.0.0.1:59999" } };
    await expect(run(unreachable, env)).rejects.toThrow(/cannot reach the platform at http:\/\/127.0.0.1:59999 \(ECONNREFUSED\)/);
    const otherOrg = { ...config, watch: [{ ...config.watch[0]!, organization: sim.ids.outsiderOrganizationId }] };
    await expect(run(otherOrg, env)).rejects.toThrow(/may not read organization/);
  });

  it("a route that takes the terminal preview's name: the configuration's error, naming the route, before anything starts", async () => {
    const { config, env } = setup();
    const routes = checkConfig({ routes: [{ name: "terminal-preview", slack: { webhook_url: "env:HOOK" } }], platform: { url: sim.url, token: "env:SIM_TOKEN" }, watch: [{ organization: sim.ids.organizationId }] }, "test", {}).routes;
    const run = runLookout({ config: { ...config, routes }, env: { ...env, HOOK: "http://127.0.0.1:1/hook" }, once: true, log: silent, print: () => {} });
    await expect(run).rejects.toThrow(ConfigError);
    await expect(run).rejects.toThrow(/^test: routes\[0\]\.name: must not be terminal-preview: on one machine the terminal's Slack preview names its deliveries so$/);
    expect(existsSync(join(config.dataDir, "events.ndjson"))).toBe(false);
    rmSync(config.dataDir, { recursive: true, force: true });
  });

  it("in a cron of --once runs, a refused token or an unreachable platform is every source's failed poll, raised as health", async () => {
    const { config, env } = setup();
    const lines: string[] = [];
    const run = (c: Config, e: NodeJS.ProcessEnv) => runLookout({ config: c, env: e, once: true, log: silent, print: (l) => lines.push(l), now: () => sim.clock.now() });
    await expect(run(config, { ...env, SIM_TOKEN: "revoked" })).rejects.toThrow(PreflightError);
    const health = () => events(config.dataDir).filter((e) => e["detail-type"] === "Lookout Health").map((e) => e.detail.transition);
    expect(health()).toEqual(["token_rejected"]);
    await expect(run(config, { ...env, SIM_TOKEN: "revoked" })).rejects.toThrow(PreflightError);
    expect(health()).toEqual(["token_rejected"]); // one episode, raised once

    const unreachable = { ...config, platform: { ...config.platform, url: "http://127.0.0.1:59999" } };
    for (let i = 0; i < 3; i++) {
      sim.clock.advance(60_000);
      await expect(run(unreachable, env)).rejects.toThrow(/cannot reach the platform/);
    }
    expect(health().filter((t) => t === "source_failing").length).toBeGreaterThan(0);
    // Without a receiver, a --once run shows no terminal preview of Slack.
    expect(lines.some((l) => l.includes("shown here"))).toBe(false);
  });
});

describe("the terminal's Slack preview", () => {
  it("is an onlooker: its deliveries are stored so, and the audit says the alert was shown and nobody told", async () => {
    const { config, env } = setup();
    const printed: string[] = [];
    const p = await openLocalPipeline(config, { env, log: silent, now: () => sim.clock.now(), preview: terminalSlack((l) => printed.push(l), () => sim.clock.now()) });
    try {
      const source = { kind: "deployment" as const, organizationId: sim.ids.organizationId, id: sim.ids.applicationIds[0]! };
      await pollSource({ source }, p.pollDeps);
      sim.scenario.deploy(source.id, { outcome: "BUILD_ERROR" });
      sim.clock.advance(5 * 60_000);
      await pollSource({ source }, p.pollDeps);
      await p.reader.drain();
      const failed = events(config.dataDir).find((e) => e.detail.transition === "failed")!.detail;
      await expect.poll(() => p.notifyStore.deliveriesOf(failed.id)).toEqual([expect.objectContaining({ route: "terminal-preview", receiver_label: "slack #preview", state: "sent", onlooker: true })]);
      expect(printed.join("\n")).toContain("slack #preview");
      const explained = await new AuditTrail(new DynamoAuditItems({ client: p.dynamodb, tableName: p.tableName })).explain(failed.id);
      expect(explained!.alerts.find((a) => a.id === failed.id)!.verdict).toBe("nobody was told: shown in slack #preview (preview; nobody told)");
    } finally {
      await p.close();
      rmSync(config.dataDir, { recursive: true, force: true });
    }
  });
});

describe("a crash between writing an alert and publishing it", () => {
  it("loses nothing: the next start publishes it", async () => {
    const { config, env } = setup();
    const open = () => openLocalPipeline(config, { env, log: silent, now: () => sim.clock.now() });
    const source = { kind: "deployment" as const, organizationId: sim.ids.organizationId, id: sim.ids.applicationIds[1]! };

    const before = await open();
    await pollSource({ source }, before.pollDeps);
    sim.scenario.deploy(source.id, { outcome: "BUILD_ERROR" });
    sim.clock.advance(5 * 60_000);
    const r = await pollSource({ source }, before.pollDeps);
    expect(r.alerts).toBe(2); // the failure and its amendment (what changed)
    await before.close(); // the process dies here: the alert is in the table, nothing was published

    expect(events(config.dataDir)).toHaveLength(0);
    const after = await open();
    try {
      await after.reader.drain();
    } finally {
      await after.close();
    }
    const published = events(config.dataDir);
    expect(published).toHaveLength(2);
    expect(published.map((e) => e.detail.transition).sort()).toEqual(["changes_listed", "failed"]);
    expect(published.find((e) => e.detail.transition === "failed")!.detail).toMatchObject({ status: "BUILD_ERROR" });
  });
});
