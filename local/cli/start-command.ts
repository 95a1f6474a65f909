/**
 * `npm start` / `lookout start`: Lookout on its embedded default. Without a platform to watch it starts
 * the platform simulator with a demo that deploys, fails and recovers, points the whole pipeline at it
 * (DynamoDB Local, dispatch, polls, outbox, local bus) and shows what happens live. With
 * PLATFORM_API_URL and a configuration file, the same command watches the real platform.
 */
import { FEED_LOOP } from "../../lib/dispatch/feed-loop.js";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import YAML from "yaml";
import { checkConfig, loadConfigFile, type Config } from "../../lib/config/load.js";
import { startSimulator, type Simulator } from "../simulator/index.js";
import { startDemo } from "../simulator/demo.js";
import { runLookout } from "../runtime/run.js";
import { reportFailure } from "./shared.js";
import { runSummaryText } from "./run-command.js";
import { terminalLog } from "../runtime/view.js";
import { redactUrl } from "../../lib/platform/redact.js";
import { randomBytes } from "node:crypto";
import { demoClicks } from "./demo-clicks.js";
import { writeDataClock } from "../runtime/data-clock.js";

/** The demo's simulated clock runs five times faster than the wall clock: a polling minute every 12 s. */
const DEMO_SPEED = 5;

export async function startCommand(opts: { configFile: string }): Promise<number> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  let sim: Simulator | undefined;
  let stopDemo: (() => void) | undefined;
  let clicks: ReturnType<typeof demoClicks> | undefined;
  let demoConfigFile: string | undefined;
  let clockKept: NodeJS.Timeout | undefined;
  try {
    let config: Config;
    let now: (() => Date) | undefined;
    if (process.env.PLATFORM_API_URL || existsSync(opts.configFile)) {
      config = loadConfigFile(opts.configFile);
      process.stdout.write(`lookout: watching ${redactUrl(config.platform.url)} as configured in ${opts.configFile}; Ctrl-C stops\n`);
    } else {
      sim = await startSimulator({ port: 0, startTime: new Date().toISOString(), size: { applications: 5, clusters: 1, webhooks: 1 } });
      const s = sim;
      stopDemo = startDemo(s, { speed: DEMO_SPEED, everyMs: 40_000, story: true, onEvent: (line) => process.stdout.write(`${s.clock.now().toISOString().slice(11, 19)} platform: ${line}\n`) });
      now = () => s.clock.now();
      const dataDir = mkdtempSync(join(tmpdir(), "lookout-demo-"));
      // Its data is dated on the simulator's clock: the commands that read the folder afterwards read it
      // on that clock. Written every few seconds at the wall clock's pace, so that however the demo ends
      // (a kill too), the folder's clock goes on from where it was.
      const keepClock = () => writeDataClock(dataDir, { at: s.clock.now(), speed: 1 });
      keepClock();
      clockKept = setInterval(keepClock, 5_000);
      clockKept.unref();
      const demo = {
          platform: { url: s.url, token: "env:LOOKOUT_DEMO_TOKEN" },
          // Names from the configuration show in alerts instead of uuids.
          watch: [{
            organization: s.ids.organizationId,
            ...(s.model.organizations.get(s.ids.organizationId)?.name ? { name: s.model.organizations.get(s.ids.organizationId)!.name } : {}),
            webhooks: s.ids.webhookIds,
            clusters: s.ids.clusterIds.map((id) => ({ id, ...(s.model.clusters.get(id)?.name ? { name: s.model.clusters.get(id)!.name } : {}) })),
            applications: s.ids.applicationIds,
          }],
          data_dir: dataDir,
          poll_interval: `${Math.round(60_000 / DEMO_SPEED)}ms`,
          // Every failure by email (.eml files in <data_dir>/outbox); Slack is shown in the terminal.
          routes: [{ name: "demo-email", match: { kind: ["deployment", "webhook_delivery", "cluster_log"] }, email: { to: ["oncall@example.com"] } }],
          // Buttons on the preview's incident messages; the demo presses two (local/cli/demo-clicks.ts).
          notify: { email: { from: "lookout@example.com" }, slack_actions: { signing_secret: "env:LOOKOUT_DEMO_SIGNING_SECRET" } },
        };
      config = checkConfig(demo, "embedded default", {});
      // Kept with the data, so that `lookout status`, `audit` and `explain` can read the demo's folder afterwards.
      demoConfigFile = join(dataDir, "lookout.yaml");
      writeFileSync(demoConfigFile, YAML.stringify(demo));
      process.env.LOOKOUT_DEMO_TOKEN = s.apiToken;
      process.env.LOOKOUT_DEMO_SIGNING_SECRET = randomBytes(16).toString("hex");
      clicks = demoClicks({ signingSecret: process.env.LOOKOUT_DEMO_SIGNING_SECRET, say: (line) => process.stdout.write(`${line}\n`) });
      process.stdout.write(
        [
          "lookout: no configuration found, so this is the embedded demo:",
          `  platform   the simulator at ${s.url} (${s.ids.applicationIds.length} applications, a webhook, a cluster), its clock ${DEMO_SPEED}× real time`,
          "             (the times below, and in the data, are its clock's)",
          `  store      DynamoDB Local, in ${dataDir} (with its configuration: lookout status --config ${demoConfigFile})`,
          `  events     ${join(dataDir, "events.ndjson")}`,
          `  email      ${join(dataDir, "outbox")} (.eml files); Slack messages are shown here`,
          "  Deployments start every few seconds; some fail. Watch them get caught. In the first minute and a half a",
          "  service, a webhook target and a cluster each fail and recover: see the Slack threads, edits and resolutions.",
          "  The demo presses two buttons for you: Acknowledge on the first incident, Mute until resolved on the second.",
          "  Ctrl-C stops everything.",
          "  To watch a real platform: PLATFORM_API_URL=… PLATFORM_API_TOKEN=… npm start -- --config lookout.yaml",
          "",
        ].join("\n"),
      );
    }
    const summary = await runLookout({
      config,
      once: false,
      log: terminalLog(process.stderr),
      print: (line) => process.stdout.write(`${line}\n`),
      signal: controller.signal,
      ...(now ? { now } : {}),
      // The demo's clock runs DEMO_SPEED times faster: the change feed's loop ticks every 10 s of it.
      ...(sim ? { feedEveryMs: FEED_LOOP.everyMs / DEMO_SPEED } : {}),
      ...(clicks ? { onPreviewPost: clicks.onPosted, onActionsEndpoint: clicks.endpoint } : {}),
    });
    process.stdout.write(`\nlookout: stopped after ${runSummaryText(summary)}\n`);
    if (demoConfigFile) {
      process.stdout.write(`lookout: the demo's data stays in ${dirname(demoConfigFile)}: lookout status --config ${demoConfigFile} (or audit, explain)\n`);
    }
    return 0;
  } catch (err) {
    return reportFailure("start", err, controller.signal);
  } finally {
    clearInterval(clockKept);
    if (sim && demoConfigFile) writeDataClock(dirname(demoConfigFile), { at: sim.clock.now(), speed: 1 });
    stopDemo?.();
    clicks?.stop();
    await sim?.close();
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}
