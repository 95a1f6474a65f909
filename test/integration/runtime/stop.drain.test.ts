/**
 * Ctrl-C on a watching `lookout run` / `npm start`: what the last polls raised is published and
 * delivered before the process ends, and what it leaves (held, owed) is in its summary — never an
 * alert raised and left unsaid until the next start.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { checkConfig, type Config } from "../../../lib/config/load.js";
import { runLookout } from "../../../local/runtime/run.js";
import { dynamodbEndpoint } from "../../support/dynamodb.js";
import { isChangesMessage } from "../../support/amendment.js";

const silent = { info() {}, warn() {}, error() {} };
const QUICK = { queuedMs: 1_000, buildingMs: 1_000, deployingMs: 1_000 };

describe("stopping a watching run", () => {
  let sim: Simulator;
  let config: Config;
  let dataDir: string;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 11, size: { applications: 1, clusters: 1, webhooks: 1 } });
    dataDir = mkdtempSync(join(tmpdir(), "lookout-stop-"));
    config = checkConfig(
      {
        platform: { url: sim.url, token: "env:SIM_TOKEN" },
        watch: [{ organization: sim.ids.organizationId, applications: [{ id: sim.ids.applicationIds[0], name: "api", environment: "prod" }] }],
        data_dir: dataDir,
        routes: [{ name: "deployments", match: { kind: "deployment" }, email: { to: ["oncall@example.com"] } }],
        notify: { email: { from: "lookout@example.com" } },
      },
      "stop",
      {},
    );
  });
  afterAll(async () => {
    await sim.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("Ctrl-C just after a poll raised a failure: it is published and delivered before the run ends", { timeout: 60_000 }, async () => {
    const app = sim.ids.applicationIds[0]!;
    sim.scenario.deploy(app, { outcome: "DEPLOYMENT_ERROR", durations: QUICK, commit: { git_commit_id: "feedface1234", message: "break it", author_name: "Ann" } });
    sim.clock.advance(10_000); // over, and fresh: within the backfill window, so first sight tells it
    const stop = new AbortController();
    const env = { SIM_TOKEN: sim.apiToken, DYNAMODB_ENDPOINT: dynamodbEndpoint(), LOOKOUT_TABLE: `stop-${randomUUID().slice(0, 8)}` };
    const summary = await runLookout({
      config, env, once: false, log: silent, signal: stop.signal, now: () => sim.clock.now(),
      // Stopped the moment the failure is raised: before the outbox's reader has read it.
      print: (line) => void (/ failed /.test(line) && stop.abort()),
    });
    // The failure (and what changed before it): every alert raised, published and in the mailbox.
    expect(summary.alerts).toBeGreaterThanOrEqual(1);
    expect(summary.published).toBeGreaterThanOrEqual(summary.alerts);
    const outbox = join(dataDir, "outbox");
    const mails = existsSync(outbox) ? readdirSync(outbox).map((f) => readFileSync(join(outbox, f), "utf8")) : [];
    expect(mails.filter((m) => m.includes("feedfac") && !isChangesMessage(m))).toHaveLength(1);
    expect(summary.owed).toBe(0);
    expect(summary.held).toBe(0);
  });
});
