/**
 * PagerDuty, a generic webhook and Teams in the deployed stack, run from its packaged artifacts
 * (docs/cloud-local.md): a route naming the three sends to the HTTP inbox, the pipe moves each message to
 * the HTTP queue with its incident as group, and the packaged notify-http function delivers to the local
 * stand-ins (local/receivers/http-receivers.ts) with the secrets it reads from SSM. A deployment failure reaches
 * each once; its recovery resolves PagerDuty's alert and is told to the webhook and Teams.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { type CloudLocal, demoCloudConfig, startCloudLocal } from "../../../local/cloud-local/runner.js";
import { MOTO_ABSENT, motoAvailable } from "../../../local/runtime/moto.js";
import { aMinuteLater } from "../../support/cloud-local-clock.js";

const available = motoAvailable();
if (!available) console.warn(MOTO_ABSENT);

const MINUTE = 60_000;
const T0 = Date.now() - 30 * MINUTE;

let sim: Simulator;
let cl: CloudLocal;
let workDir: string;
let doc: DynamoDBDocumentClient;
let tableName: string;

/** The demo's platform and secrets, its one route to the three HTTP receivers instead of Slack and email. */
function httpConfig(s: Simulator): Record<string, unknown> {
  const demo = demoCloudConfig(s) as Record<string, unknown> & { notify: Record<string, unknown> };
  return {
    ...demo,
    routes: [{
      name: "pages",
      match: { kind: "deployment" },
      pagerduty: { routing_key: "ssm:/lookout/cloud-local/pagerduty" },
      webhook: { url: "ssm:/lookout/cloud-local/hook-url", signing_secret: "ssm:/lookout/cloud-local/hook-secret" },
      teams: { url: "ssm:/lookout/cloud-local/teams-url" },
    }],
    notify: { digest_within: "1m" },
  };
}

beforeAll(async () => {
  if (!available) return;
  sim = await startSimulator({ seed: 31, startTime: new Date(T0).toISOString(), size: { applications: 1, clusters: 0, webhooks: 0 } });
  workDir = mkdtempSync(join(tmpdir(), "lookout-cloud-local-http-"));
  cl = await startCloudLocal({ workDir, simulator: sim, demoConfig: httpConfig, continuous: false, asyncRetryDelaysMs: [300, 600] });
  tableName = cl.stack.functions.get("lookout-local-dispatch")!.def.environment.TABLE_NAME!;
  doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: cl.stack.emulators.dynamodb, region: "us-east-1", credentials: { accessKeyId: "test", secretAccessKey: "test" } }));
}, 180_000);

afterAll(async () => {
  doc?.destroy();
  await cl?.stop();
  await sim?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

async function pass(): Promise<void> {
  await aMinuteLater(doc, tableName);
  cl.stack.fireSchedules();
  await cl.stack.settle();
}

describe.skipIf(!available)("PagerDuty, webhook and Teams in the packaged stack", () => {
  it("a deployment failure reaches each once; its recovery resolves PagerDuty's alert", async () => {
    sim.clock.set(new Date(T0 + 2 * MINUTE));
    await pass(); // first sight: nothing delivered
    const { pagerduty, webhook, teams } = cl.http!;
    expect([pagerduty.events.length, webhook.deliveries.length, teams.posts.length]).toEqual([0, 0, 0]);

    sim.scenario.deploy(sim.ids.applicationIds[0]!, { outcome: "DEPLOYMENT_ERROR" });
    sim.clock.advance(5 * MINUTE);
    await pass();
    expect(pagerduty.alerts).toHaveLength(1);
    expect(pagerduty.alerts[0]!.status).toBe("triggered");
    expect(webhook.refused).toEqual([]);
    expect(webhook.deliveries.filter((d) => d.body["detail-type"] === "Deployment Failed")).toHaveLength(1);
    expect(teams.posts.filter((p) => /FAILED — Deployment failed/.test(p.text))).toHaveLength(1);
    expect(cl.stack.functions.get("lookout-local-notify-http")!.counts.errors).toBe(0);

    sim.scenario.deploy(sim.ids.applicationIds[0]!, { outcome: "DEPLOYED" });
    sim.clock.advance(5 * MINUTE);
    await pass();
    expect(pagerduty.alerts.map((a) => a.status)).toEqual(["resolved"]);
    expect(webhook.deliveries.filter((d) => (d.body.incident as { role?: string } | undefined)?.role === "close")).toHaveLength(1);
    expect(teams.posts.filter((p) => /✅ Resolved/.test(p.text))).toHaveLength(1);
    // Nothing reached Slack or email: the route names neither.
    expect(cl.slack.messages).toEqual([]);
  }, 180_000);
});
