/**
 * A flood, as people see it: one cluster log answer of 50,000 entries, 5,000 of them errors (a component
 * crash-looping for an afternoon), read by `lookout run --once` runs a minute apart against the
 * simulator, DynamoDB Local, the Slack test receiver in both forms and email as .eml files. Reports what
 * each receiver shows (messages of their own, thread replies, digests, emails), the run time and the
 * process's peak memory. The rates it must stay within: docs/architecture.md, "Receivers' rate".
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { startSimulator } from "../local/simulator/index.js";
import { checkConfig } from "../lib/config/load.js";
import { runLookout } from "../local/runtime/run.js";
import { startSlackReceiver } from "../local/receivers/slack-receiver.js";
import { dynamoEndpoint, report, section } from "./support.js";

const ENTRIES = Number(process.env.FLOOD_ENTRIES ?? 50_000);
const ERRORS = Math.round(ENTRIES / 10);
/** Runs a minute apart until one reads nothing new (a poll may take a bounded chunk of the answer). */
const MAX_RUNS = 60;
const silent = { info() {}, warn() {}, error() {} };

export async function benchFlood(): Promise<void> {
  section({
    id: "flood",
    title: `Flood: one answer of ${ENTRIES.toLocaleString("en")} cluster log entries`,
    method:
      `one cluster run of ${ENTRIES.toLocaleString("en")} entries, ${ERRORS.toLocaleString("en")} of them errors, served in one answer by the simulator; ` +
      "`lookout run --once` every simulated minute until a run reads nothing new (DynamoDB Local, one route to Slack in both forms and email, " +
      "the default budgets: 1/s burst 10, 60 an hour, an incident's follow-ups 5 then 1 per 5 minutes, digests at most one a minute). " +
      "Messages are counted at the receivers; time is wall time of all runs; memory is this process's peak RSS (poll, publish and notify in one process)",
  });
  const [sim, slack] = await Promise.all([startSimulator({ seed: 3, size: { applications: 1, clusters: 1, webhooks: 1 } }), startSlackReceiver()]);
  const dataDir = mkdtempSync(join(tmpdir(), "lookout-flood-"));
  try {
    const env = {
      SIM_TOKEN: sim.apiToken, SLACK_BOT_TOKEN: "xoxb-bench", SLACK_WEBHOOK: slack.webhookUrl("T000/B000/FLOOD"),
      LOOKOUT_SLACK_API_URL: slack.apiUrl, DYNAMODB_ENDPOINT: await dynamoEndpoint(), LOOKOUT_TABLE: `flood-${randomUUID().slice(0, 8)}`,
    };
    const clusterId = sim.ids.clusterIds[0]!;
    const config = checkConfig({
      platform: { url: sim.url, token: "env:SIM_TOKEN" },
      watch: [{ organization: sim.ids.organizationId, applications: [], clusters: [{ id: clusterId, name: "prod-eu" }] }],
      data_dir: dataDir,
      routes: [{
        name: "clusters", match: { kind: "cluster_log" },
        slack: [{ channel: "#ops", token: "env:SLACK_BOT_TOKEN" }, { webhook_url: "env:SLACK_WEBHOOK" }],
        email: { to: ["ops@example.com"] },
      }],
      notify: { email: { from: "lookout@example.com" } },
    }, "flood", {});
    const run = () => runLookout({ config, env, once: true, log: silent, print: () => {}, now: () => sim.clock.now() });
    await run(); // first sight
    sim.clock.advance(60_000);
    sim.scenario.clusterRun(clusterId, { entries: ENTRIES, errors: ERRORS });
    sim.clock.advance(1_000);

    const started = performance.now();
    let runs = 0;
    let records = 0;
    let alerts = 0;
    for (; runs < MAX_RUNS; runs++) {
      const s = await run();
      records += s.newRecords;
      alerts += s.alerts;
      sim.clock.advance(60_000);
      if (!s.newRecords && !s.held && !s.owed && runs > 0) break;
    }
    const seconds = (performance.now() - started) / 1000;
    const api = slack.messages.filter((m) => m.form === "api");
    const isDigest = (m: { text?: string }) => /held back/i.test(m.text ?? "");
    const mails = existsSync(join(dataDir, "outbox")) ? readdirSync(join(dataDir, "outbox")).map((f) => readFileSync(join(dataDir, "outbox", f), "utf8")) : [];
    const simMinutes = runs + 1;
    report({ name: "runs until nothing new (a simulated minute apart)", value: runs + 1, method: "cron: run --once each minute" });
    report({ name: "records stored / alerts raised", value: `${records} / ${alerts}`, method: "summed over the runs" });
    report({ name: "wall time of the runs", value: Math.round(seconds), unit: "s", method: "all runs" });
    report({ name: "peak memory (RSS) of the process", value: Math.round(process.resourceUsage().maxRSS / 1024), unit: "MB", method: "resourceUsage().maxRSS" });
    report({ name: "Slack Web API: channel messages (root + digests)", value: api.filter((m) => !m.thread_ts).length, method: `of which digests ${api.filter((m) => !m.thread_ts && isDigest(m)).length}` });
    report({ name: "Slack Web API: thread replies", value: api.filter((m) => m.thread_ts).length, method: "follow-ups under the root" });
    report({ name: "Slack incoming webhook: messages", value: slack.messages.filter((m) => m.form === "webhook").length, method: `of which digests ${slack.messages.filter((m) => m.form === "webhook" && isDigest(m)).length}` });
    report({ name: "email: messages", value: mails.length, method: `of which digests ${mails.filter((m) => /held back/i.test(m)).length}` });
    report({ name: "simulated minutes the flood was told over", value: simMinutes, method: "the bound per receiver: 60 own messages an hour + one digest a minute + closes" });
  } finally {
    await Promise.all([sim.close(), slack.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
