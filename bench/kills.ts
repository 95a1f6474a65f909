/**
 * Crash safety end to end: `lookout run --once` (the real CLI, a child process) killed with SIGKILL at a
 * random moment, again and again, each try after fresh failures on the platform simulator; then two
 * clean runs. Counts what reached each receiver (a Slack Web API test receiver, `.eml` files) and the
 * local bus file: every failure once, none lost, none twice.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startSimulator } from "../local/simulator/index.js";
import { startSlackReceiver } from "../local/receivers/slack-receiver.js";
import { dynamoEndpoint, report, rng, section } from "./support.js";

const ROOT = resolve(import.meta.dirname, "..");
const KILLS = Number(process.env.BENCH_KILLS ?? 50);

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
  stderr: string;
}

function runOnce(config: string, env: NodeJS.ProcessEnv, killAfterMs?: number): Promise<Exit> {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(process.execPath, ["bin/lookout.mjs", "run", "--once", "--config", config], { cwd: ROOT, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    child.on("error", fail);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, ms: performance.now() - started, stderr });
    });
  });
}

export async function benchKills(): Promise<void> {
  section({
    id: "kills",
    title: `Crash safety: lookout run --once killed ${KILLS} times`,
    method:
      `The real CLI (\`lookout run --once\`, a child process) against the platform simulator (8 applications, a webhook whose target ` +
      `answers 503, a cluster) and one DynamoDB Local, routing every event to a Slack Web API test receiver and to \`.eml\` files. ` +
      `${KILLS} tries: each adds 1–3 failed deployments (and so failed webhook deliveries) and sometimes a cluster run with an error, ` +
      "then starts a run and kills it with SIGKILL after a random 0–120% of a clean run's time. Then two clean runs. A failure is " +
      "lost if no Slack message or email names its execution; duplicated if a receiver got it twice.",
  });
  const r = rng(11);
  const sim = await startSimulator({ port: 0, seed: 11, startTime: new Date().toISOString(), size: { applications: 8, clusters: 1, webhooks: 1 } });
  const slack = await startSlackReceiver();
  const follow = setInterval(() => sim.clock.set(new Date()), 200);
  try {
    const dataDir = mkdtempSync(join(tmpdir(), "lookout-kills-"));
    const config = join(dataDir, "lookout.json");
    writeFileSync(config, JSON.stringify({
      platform: { url: sim.url, token: "env:PLATFORM_API_TOKEN" },
      watch: [{ organization: sim.ids.organizationId, webhooks: sim.ids.webhookIds, clusters: sim.ids.clusterIds, applications: sim.ids.applicationIds }],
      data_dir: join(dataDir, "data"),
      routes: [{ name: "everything", match: {}, slack: { channel: "#oncall", token: "env:SLACK_BOT_TOKEN" }, email: { to: ["oncall@example.com"] } }],
      notify: { email: { from: "lookout@example.com" }, slack_rate: { per_second: 50, burst: 500 } },
    }));
    const env = {
      ...process.env, PLATFORM_API_TOKEN: sim.apiToken, SLACK_BOT_TOKEN: "xoxb-bench", LOOKOUT_SLACK_API_URL: slack.apiUrl,
      DYNAMODB_ENDPOINT: await dynamoEndpoint(), LOOKOUT_TABLE: `kills-${Date.now()}`,
    };
    for (const id of sim.ids.webhookIds) sim.scenario.setWebhookTarget(id, { status: 503 });

    const first = await runOnce(config, env);
    if (first.code !== 0) throw new Error(`first run failed: ${first.stderr.slice(0, 500)}`);
    const cleanMs = first.ms;
    const failed: string[] = [];
    let killed = 0;
    for (let i = 0; i < KILLS; i++) {
      const now = Date.now();
      for (let n = 1 + Math.floor(r.next() * 3); n > 0; n--) {
        const app = r.pick(sim.ids.applicationIds);
        // Started a minute ago with short phases: terminal by now, on the wall clock the CLI reads.
        failed.push(sim.scenario.deploy(app, { outcome: r.pick(["DEPLOYMENT_ERROR", "BUILD_ERROR"]), at: new Date(now - 60_000), durations: { queuedMs: 1_000, buildingMs: 5_000, deployingMs: 5_000 } }));
      }
      if (r.next() < 0.3) sim.scenario.clusterRun(sim.ids.clusterIds[0]!, { entries: 5, errors: 1 });
      sim.clock.set(new Date());
      const exit = await runOnce(config, env, Math.floor(r.next() * 1.2 * cleanMs));
      if (exit.signal === "SIGKILL") killed++;
      else if (exit.code !== 0) throw new Error(`run ${i} failed: ${exit.stderr.slice(0, 500)}`);
    }
    for (const _ of [1, 2]) {
      const exit = await runOnce(config, env);
      if (exit.code !== 0) throw new Error(`clean run failed: ${exit.stderr.slice(0, 500)}`);
    }

    const named = (texts: string[], id: string) => texts.filter((t) => t.includes(id)).length;
    const slackTexts = slack.messages.map((m) => JSON.stringify(m.body));
    const outbox = join(dataDir, "data", "outbox");
    const emails = readdirSync(outbox).filter((f) => f.endsWith(".eml")).map((f) => readFileSync(join(outbox, f), "utf8"));
    const events = readFileSync(join(dataDir, "data", "events.ndjson"), "utf8").split("\n").filter(Boolean).map((l) => (JSON.parse(l) as { detail: { id: string } }).detail.id);
    const lost = failed.filter((id) => !named(slackTexts, id) && !named(emails, id));
    // A failed execution's own alert names it once; a still_failing reply names the first alert too, so
    // count alert ids (Slack metadata, the email header) rather than texts for duplicates.
    const slackIds = slack.messages.map((m) => String(m.metadata?.event_payload?.alert_id ?? ""));
    const emailIds = emails.map((e) => /^X-Lookout-Alert-Id: *(\S+)/im.exec(e)?.[1] ?? "");
    const dups = (ids: string[]) => ids.length - new Set(ids).size;
    const method = `${KILLS} tries, then two clean runs`;
    report({ name: "runs killed by SIGKILL (the rest ended first)", value: `${killed} of ${KILLS}`, method });
    report({ name: "failed deployments added", value: failed.length, method });
    report({ name: "failures lost (no Slack message, no email)", value: lost.length, method });
    report({ name: "Slack messages / duplicated alert ids", value: `${slackIds.length} / ${dups(slackIds)}`, method });
    report({ name: "emails / duplicated alert ids", value: `${emailIds.length} / ${dups(emailIds)}`, method });
    report({ name: "events.ndjson lines / duplicated detail ids", value: `${events.length} / ${dups(events)}`, method });
    report({ name: "a clean run's wall time", value: cleanMs / 1000, unit: "s", method: "the first run (first sight of every source)" });
    const problems = [
      lost.length ? `${lost.length} failures lost` : "",
      dups(slackIds) ? `${dups(slackIds)} Slack duplicates` : "",
      dups(events) ? `${dups(events)} events.ndjson duplicates` : "",
    ].filter(Boolean);
    if (problems.length) throw new Error(`crash safety broken: ${problems.join(", ")}`);
  } finally {
    clearInterval(follow);
    await slack.close();
    await sim.close();
  }
}
