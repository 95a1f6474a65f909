/**
 * `lookout status` (docs/status.md) on DynamoDB Local after real runs: `lookout run --once` against the
 * simulator, Slack through the Slack test receiver. Healthy first (exit 0); then a source the platform
 * refuses, a Slack receiver whose token was revoked (invalid_auth), a digest held too long and a
 * quarantined record: each shown in the table and in JSON (checked against docs/status.schema.json), exit 1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import * as ajvModule from "ajv/dist/2020.js";
import * as formatsModule from "ajv-formats";
import YAML from "yaml";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { loadConfigFile, type Config } from "../../../lib/config/load.js";
import { runLookout } from "../../../local/runtime/run.js";
import { statusCommand } from "../../../local/cli/status-command.js";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../local/runtime/dynamodb-local.js";
import { DynamoNotifyStore } from "../../../lib/store/notify-store.js";
import { DynamoQuarantine } from "../../../lib/store/quarantine.js";
import { setAside } from "../../../lib/alerts/quarantine.js";
import { allReceivers, receiverId } from "../../../lib/config/receivers.js";
import { sourceKey } from "../../../lib/model/source.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";
import { startSlackReceiver, type SlackReceiver } from "../../../local/receivers/slack-receiver.js";
import type { StatusReport } from "../../../lib/status/operations-report.js";
import { dynamodbEndpoint } from "../../support/dynamodb.js";

const unwrap = <T>(m: unknown): T => ((m as { default?: { default?: T } }).default?.default ?? (m as { default: T }).default) as T;
const Ajv2020 = unwrap<typeof ajvModule.default.default>(ajvModule);
const addFormats = unwrap<typeof formatsModule.default.default>(formatsModule);
const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(readFileSync(new URL("../../../docs/status.schema.json", import.meta.url), "utf8")));

let sim: Simulator;
let slack: SlackReceiver;
let config: Config;
let configFile: string;
let env: NodeJS.ProcessEnv;
const silent = { info() {}, warn() {}, error() {} };
const TEN_YEARS = 3650 * 86_400_000;

beforeAll(async () => {
  [sim, slack] = await Promise.all([startSimulator({ seed: 31, size: { applications: 2, clusters: 1, webhooks: 1 } }), startSlackReceiver()]);
  const dir = mkdtempSync(join(tmpdir(), "lookout-status-"));
  env = {
    SIM_TOKEN: sim.apiToken, SLACK_BOT_TOKEN: "xoxb-revoked", SLACK_WEBHOOK: slack.webhookUrl("T000/B000/XXXX"),
    LOOKOUT_SLACK_API_URL: slack.apiUrl, DYNAMODB_ENDPOINT: dynamodbEndpoint(), LOOKOUT_TABLE: `status-${randomUUID().slice(0, 8)}`,
  };
  configFile = join(dir, "lookout.yaml");
  const file = {
    platform: { url: sim.url, token: "env:SIM_TOKEN" },
    watch: [{ organization: sim.ids.organizationId, applications: [sim.ids.applicationIds[0]], clusters: [sim.ids.clusterIds[0]] }],
    data_dir: join(dir, "data"),
    retention: "3650d",
    health: { failing_after: 1 },
    routes: [{ name: "deployments", match: { kind: "deployment" }, slack: [{ channel: "#oncall", token: "env:SLACK_BOT_TOKEN" }, { webhook_url: "env:SLACK_WEBHOOK" }] }],
    notify: { digest_within: "2m" },
  };
  writeFileSync(configFile, YAML.stringify(file));
  config = loadConfigFile(configFile);
});
afterAll(async () => {
  await sim?.close();
  await slack?.close();
});

const run = () => runLookout({ config, env, once: true, log: silent, print: () => {}, now: () => sim.clock.now() });

async function status(format: "table" | "json") {
  const out: string[] = [];
  const err: string[] = [];
  const code = await statusCommand({ config: configFile, format }, { out: (l) => out.push(l), err: (l) => err.push(l) }, env, () => sim.clock.nowMs());
  return { code, text: out.join("\n"), err: err.join("\n") };
}

describe("lookout status", () => {
  it("exits 0 when everything polls and nothing failed, and 1 with each problem in the table and the JSON", { timeout: 60_000 }, async () => {
    const cluster = sourceKey({ kind: "cluster", organizationId: sim.ids.organizationId, id: sim.ids.clusterIds[0]! });
    const [oncall, webhook] = allReceivers(config.routes, config.notify);

    await run(); // first sight
    sim.clock.advance(60_000);
    const healthy = await status("json");
    expect(healthy.code, healthy.text).toBe(0);
    const h = JSON.parse(healthy.text) as StatusReport;
    expect(validate(h), JSON.stringify(validate.errors)).toBe(true);
    expect(h).toMatchObject({ verdict: "healthy", reasons: [] });
    expect(h.sources).toHaveLength(2);
    // `run --once` records its polls as dispatch records its own: each source polled, a success, requests spent.
    expect(h.sources.every((s) => s.consecutive_failures === 0 && s.problem === null)).toBe(true);
    const firstRunAt = new Date(sim.clock.nowMs() - 60_000).toISOString();
    expect(h.sources.map((s) => [s.last_poll_at, s.last_success_at])).toEqual([[firstRunAt, firstRunAt], [firstRunAt, firstRunAt]]);
    expect(h.sources.every((s) => s.next_poll_by !== null)).toBe(true);
    expect(h.dispatch.last_tick_at).toBe(firstRunAt);
    // Cron runs read the feed themselves: no loop ticks.
    expect(h.feed_loop).toMatchObject({ state: "off", last_tick_at: null });
    expect(h.budget!.used_last_hour).toBeGreaterThanOrEqual(2);
    expect((await status("table")).code).toBe(0);
    // A second run moves both on.
    const secondRunAt = sim.clock.nowIso();
    await run();
    sim.clock.advance(60_000);
    const again = JSON.parse((await status("json")).text) as StatusReport;
    expect(again.sources.every((s) => s.last_success_at === secondRunAt && s.last_poll_at === secondRunAt)).toBe(true);
    expect(again.budget!.used_last_hour).toBeGreaterThan(h.budget!.used_last_hour);
    expect((await status("table")).code).toBe(0);

    // The cluster's logs are refused; the Slack bot token is revoked; a failed deployment goes to both receivers.
    sim.faults.set("listClusterLogs", { status: 404 });
    slack.fail({ form: "api", error: "invalid_auth", times: 100 });
    sim.scenario.deploy(sim.ids.applicationIds[0]!, { outcome: "DEPLOYMENT_ERROR" });
    sim.clock.advance(5 * 60_000);
    await run();

    // A digest held 10 minutes (digest_within is 2m) and a quarantined record, through the stores' ports.
    const client = new DynamoDBClient({ endpoint: env.DYNAMODB_ENDPOINT, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
    const now = () => sim.clock.now();
    const notify = new DynamoNotifyStore({ client, tableName: env.LOOKOUT_TABLE!, retentionMs: TEN_YEARS, now });
    const heldAt = new Date(sim.clock.nowMs() - 10 * 60_000).toISOString();
    await notify.hold({ receiver_id: receiverId(webhook!), held_at: heldAt, detail: EXAMPLE_DETAILS["Deployment Failed"], route: "deployments" });
    const quarantine = new DynamoQuarantine({ client, tableName: env.LOOKOUT_TABLE!, retentionMs: TEN_YEARS, now });
    await setAside(quarantine, {
      stage: "ingest", kind: "webhook_delivery", id: "delivery-too-big", source: "webhook:x/y", organization: sim.ids.organizationId,
      reason: "the item is too large", content: { big: true },
    }, sim.clock.now());
    client.destroy();

    const json = await status("json");
    expect(json.code, json.err).toBe(1);
    const r = JSON.parse(json.text) as StatusReport;
    expect(validate(r), JSON.stringify(validate.errors)).toBe(true);
    expect(r.verdict).toBe("unhealthy");
    const src = r.sources.find((s) => s.source === cluster)!;
    expect(src).toMatchObject({ consecutive_failures: 1, last_error: expect.any(String) });
    expect(src.problem).toContain("1 polls failed in a row");
    expect(src.backoff_until).not.toBeNull();
    const revoked = r.receivers.find((c) => c.id === receiverId(oncall!))!;
    expect(revoked.consecutive_failures).toBeGreaterThan(0);
    expect(revoked.last_error).toContain("invalid_auth");
    expect(revoked.last_delivery_at).toBeNull();
    const hook = r.receivers.find((c) => c.id === receiverId(webhook!))!;
    expect(hook.last_delivery_at).not.toBeNull();
    expect(hook).toMatchObject({ held: 1, oldest_held_at: heldAt, consecutive_failures: 0 });
    expect(hook.problem).toContain("over notify.digest_within");
    expect(hook).toMatchObject({ waiting: 1, waiting_alerts: [{ alert_id: EXAMPLE_DETAILS["Deployment Failed"].id, state: "held", since: heldAt }] });
    expect(r.quarantine).toMatchObject({ count: 1, newest: { id: "delivery-too-big", kind: "webhook_delivery", stage: "ingest" } });
    expect(r.reasons).toHaveLength(4);
    expect(r.budget!.used_last_hour).toBeGreaterThan(again.budget!.used_last_hour);
    expect(r.budget!.allowed_per_hour).toBe(1000);

    const table = await status("table");
    expect(table.code).toBe(1);
    expect(table.text).toContain("UNHEALTHY");
    expect(table.text).toContain(`${cluster}  FAILING: 1 polls failed in a row`);
    expect(table.text).toMatch(/slack #oncall {2}\[slack-[0-9a-f]{10}\] {2}FAILING: \d+ deliveries failed in a row/);
    expect(table.text).toContain("held for a digest: 1, oldest");
    expect(table.text).toContain(`waiting over a minute: 1\n      ${EXAMPLE_DETAILS["Deployment Failed"].id}  held since`);
    expect(table.text).toContain("quarantine (last 24 h): 1; newest");
    expect(table.text).toContain("delivery-too-big");
    expect(table.text).toMatch(/budget: \d+ requests in the last hour of 1000 allowed/);
  });

  it("says what is wrong with its flags and exits 2", async () => {
    const err: string[] = [];
    const code = await statusCommand({ config: configFile, format: "yaml" }, { out: () => {}, err: (l) => err.push(l) }, env);
    expect(code).toBe(2);
    expect(err.join("\n")).toContain('--format: "yaml" is not one of table, json');
  });
});
