/**
 * `lookout cloud-local [--config F]` (`npm run cloud-local`): rehearses the deployment on this machine
 * (docs/cloud-local.md). Without a configuration it watches the platform simulator's demo, in real
 * time; with one, the platform that configuration names. It prints what the deployed stack does —
 * invocations, batches, partial failures, what the functions log as errors, Slack messages and
 * emails — until Ctrl-C.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { startSimulator, type Simulator } from "../simulator/index.js";
import { startDemo } from "../simulator/demo.js";
import { slackAsText } from "../runtime/slack-print.js";
import type { SlackMessage } from "../../lib/notify/types.js";
import { reportFailure } from "./shared.js";
import { PreflightError } from "../runtime/preflight.js";
import { motoAvailable } from "../runtime/moto.js";
import type { ReceivedSlackMessage } from "../receivers/slack-receiver.js";
import { checkRehearsalConfig, startCloudLocal, type CloudLocal } from "../cloud-local/runner.js";

const time = () => new Date().toISOString().slice(11, 19);

/** Where moto_server comes from, said before anything starts. */
export const MOTO_MISSING = "moto_server is not installed: pip install 'moto[server]' (or set MOTO_ENDPOINT to a running one)";

/** The demo's clock: a deployment every ~40 s; the first failures reach Slack within about a minute, recoveries a few minutes later. */
const DEMO_EVERY_MS = 40_000;

export async function cloudLocalCommand(opts: { configFile?: string }): Promise<number> {
  const controller = new AbortController();
  const stopped = new Promise<void>((r) => controller.signal.addEventListener("abort", () => r()));
  const stop = () => controller.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const print = (line: string) => process.stdout.write(`${line}\n`);
  // What the stack does while it is being stopped (containers killed under an event) is not news.
  const news = (line: string) => void (controller.signal.aborted || print(`${time()} ${line}`));
  let sim: Simulator | undefined;
  let stopDemo: (() => void) | undefined;
  let cl: CloudLocal | undefined;
  let mail: NodeJS.Timeout | undefined;
  let workDir: string | undefined;
  let running = false;
  try {
    // Everything that can be said without starting anything, first.
    if (opts.configFile) checkRehearsalConfig(opts.configFile);
    if (!motoAvailable()) throw new PreflightError(MOTO_MISSING);
    workDir = mkdtempSync(join(tmpdir(), "lookout-cloud-local-"));
    if (!opts.configFile) {
      // The functions read the real clock: the simulator's runs at real time.
      sim = await startSimulator({ port: 0, startTime: new Date().toISOString(), size: { applications: 3, clusters: 1, webhooks: 1 } });
      const s = sim;
      stopDemo = startDemo(s, { speed: 1, everyMs: DEMO_EVERY_MS, story: true, onEvent: (line) => news(`platform: ${line}`) });
    }
    print(`lookout cloud-local: packaging the stack${opts.configFile ? ` with ${opts.configFile}` : " for the simulator's demo"}; work dir ${workDir}`);
    cl = await startCloudLocal({
      workDir,
      ...(opts.configFile ? { configFile: opts.configFile } : { simulator: sim! }),
      ...(process.env.DYNAMODB_ENDPOINT ? { dynamodbEndpoint: process.env.DYNAMODB_ENDPOINT } : {}),
      activity: news,
      onSlack: (m, how) => {
        if (controller.signal.aborted) return;
        for (const l of slackAsText(slackMessageOf(m), { receiver: `slack ${m.channel ?? m.path ?? ""}`.trim(), as: how === "updated" ? "update" : m.thread_ts ? "reply" : "message" })) print(l);
      },
    });
    if (controller.signal.aborted) return reportFailure("cloud-local", new Error("stopped"), controller.signal);
    running = true;
    const { report } = cl.stack;
    print(`  resources  ${report.created.length} created from the template, ${report.played.length} played here, ${report.notEmulated.length} not enforced on one machine (${[...new Set(report.notEmulated.map((r) => r.type))].join(", ")})`);
    for (const f of cl.stack.functions.values()) print(`  function   ${f.def.name.padEnd(28)} ${f.def.memoryMb} MB, ${f.def.timeoutSec} s, ${f.def.runtime} (here: Node ${process.versions.node}); log ${f.logFile}`);
    print(`  platform   ${cl.config.platform.url}${sim ? ` (the simulator: a deployment every ~${DEMO_EVERY_MS / 1000} s, some fail; the first failures reach Slack within a minute or two, their recoveries a few minutes later)` : ""}`);
    if (cl.stack.httpApi) print(`  audit API  ${cl.stack.httpApi.url} (GET /events, GET /explain/{id}, GET /report; the audit page at /)`);
    print(`  email      SES on moto_server, copied to ${join(workDir, "outbox")} (.eml files); Slack is shown here`);
    print("  Dispatch runs every minute, as its schedule says; what a function logs as an error is shown here, the rest is in its log. Ctrl-C stops everything.\n");
    let seen = 0;
    mail = setInterval(() => {
      cl!.emails().then(async (all) => {
        for (; seen < all.length; seen++) {
          const parsed = await simpleParser(all[seen]!.raw);
          const to = [parsed.to ?? []].flat().map((a) => a.text).join(", ");
          news(`email → ${to}: ${parsed.subject ?? "(no subject)"}`);
        }
      }, () => undefined);
    }, 2_000);
    await stopped;
    print("\nlookout cloud-local: stopping…");
    return 0;
  } catch (err) {
    return reportFailure("cloud-local", err, controller.signal);
  } finally {
    clearInterval(mail);
    stopDemo?.();
    await cl?.stop();
    await sim?.close();
    // A start that failed or was stopped ran nothing worth keeping.
    if (workDir && running) print(`lookout cloud-local: stopped; the functions' logs and the emails are kept in ${workDir} (delete it when done)`);
    else if (workDir) rmSync(workDir, { recursive: true, force: true });
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}

/** The local Slack's record of a message as the message Lookout sent, for the terminal's rendering. */
function slackMessageOf(m: ReceivedSlackMessage): SlackMessage {
  return {
    text: m.text ?? "",
    blocks: m.blocks ?? [],
    ...(m.attachments ? { attachments: m.attachments.map((x) => ({ color: x.color ?? "", blocks: x.blocks ?? [] })) } : {}),
    ...(m.thread_ts ? { thread_ts: m.thread_ts } : {}),
    ...(m.reply_broadcast ? { reply_broadcast: true } : {}),
  };
}
