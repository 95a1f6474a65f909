/**
 * The change feed is read before the deployments in the same pass (lib/poll/together.ts, `feedFirst`):
 * a `lookout run --once` that reads a production deployment's failure together with the feed's first
 * entries naming its service raises it with its environment, at the severity that environment gives it
 * (critical), so a route on the environment takes it. Polled side by side, the failure was raised
 * before its service was named: no environment, severity error.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { checkConfig, type Config } from "../../../lib/config/load.js";
import { runLookout } from "../../../local/runtime/run.js";
import type { LookoutEventEnvelope } from "../../../lib/model/event.js";
import { dynamodbEndpoint } from "../../support/dynamodb.js";

const silent = { info() {}, warn() {}, error() {} };
let sim: Simulator;
let config: Config;
let env: NodeJS.ProcessEnv;
let dataDir: string;

beforeAll(async () => {
  sim = await startSimulator({ seed: 31, size: { applications: 3, clusters: 1, webhooks: 1 } });
  dataDir = mkdtempSync(join(tmpdir(), "lookout-feed-first-"));
  env = { SIM_TOKEN: sim.apiToken, DYNAMODB_ENDPOINT: dynamodbEndpoint(), LOOKOUT_TABLE: `feed-first-${randomUUID().slice(0, 8)}` };
  // Applications by id only: their project and environment come from the change feed alone.
  config = checkConfig({
    platform: { url: sim.url, token: "env:SIM_TOKEN" },
    watch: [{ organization: sim.ids.organizationId, webhooks: sim.ids.webhookIds, applications: sim.ids.applicationIds }],
    data_dir: dataDir,
    retention: "3650d",
  }, "feed-first", {});
});
afterAll(async () => {
  await sim?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const run = () => runLookout({ config, env, once: true, log: silent, print: () => undefined, now: () => sim.clock.now() });
const events = (): LookoutEventEnvelope[] =>
  readFileSync(join(dataDir, "events.ndjson"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as LookoutEventEnvelope);

describe("the change feed before the deployments", () => {
  it("a production failure read with the feed's first word of its service is raised critical, with its environment", async () => {
    // A production application the feed has not named yet.
    const app = sim.ids.applicationIds.find((id) => {
      const a = sim.model.services.get(id);
      return a && sim.model.environments.get(a.environmentId)?.type === "PRODUCTION";
    })!;
    expect(app).toBeDefined();
    await run(); // first sight
    sim.scenario.deploy(app, { outcome: "DEPLOYMENT_ERROR" });
    sim.clock.advance(5 * 60_000);
    await run();
    const failed = events().map((e) => e.detail).filter((d) => d.kind === "deployment" && d.service?.id === app && d.transition === "failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]!.environment).toMatchObject({ id: sim.model.services.get(app)!.environmentId, type: "PRODUCTION" });
    expect(failed[0]!.severity).toBe("critical");
  }, 60_000);
});
