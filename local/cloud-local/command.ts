/**
 * `lookout cloud-local [--config F]` (`npm run cloud-local`): rehearses the deployment on this machine
 * (docs/cloud-local.md). Without a configuration it watches the platform simulator's demo, in real
 * time; with one, the platform that configuration names. It prints what the deployed stack does —
 * invocations, batches, partial failures, Slack messages and emails — until Ctrl-C.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSimulator, type Simulator } from "../simulator/index.js";
import { startDemo } from "../simulator/demo.js";
import { slackAsText } from "../slack-print.js";
import type { SlackMessage } from "../../lib/notify/types.js";
import { reportFailure } from "../commands.js";
import { startCloudLocal, type CloudLocal } from "./run.js";

const time = () => new Date().toISOString().slice(11, 19);

export async function cloudLocalCommand(opts: { configFile?: string }): Promise<number> {
  const controller = new AbortController();
  const stopped = new Promise<void>((r) => controller.signal.addEventListener("abort", () => r()));
  const stop = () => controller.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const print = (line: string) => process.stdout.write(`${line}\n`);
  let sim: Simulator | undefined;
  let stopDemo: (() => void) | undefined;
  let cl: CloudLocal | undefined;
  let mail: NodeJS.Timeout | undefined;
  try {
    const workDir = mkdtempSync(join(tmpdir(), "lookout-cloud-local-"));
    const given = opts.configFile && existsSync(opts.configFile) ? opts.configFile : undefined;
    if (opts.configFile && !given) throw new Error(`${opts.configFile}: no such configuration file`);
    if (!given) {
      // The functions read the real clock: the simulator's runs at real time.
      sim = await startSimulator({ port: 0, startTime: new Date().toISOString(), size: { applications: 3, clusters: 1, webhooks: 1 } });
      const s = sim;
      stopDemo = startDemo(s, { speed: 1, everyMs: 40_000, story: true, onEvent: (line) => print(`${time()} platform: ${line}`) });
    }
    print(`lookout cloud-local: packaging the stack${given ? ` with ${given}` : " for the simulator's demo"} and starting DynamoDB Local and moto_server…`);
    cl = await startCloudLocal({
      workDir,
      ...(given ? { configFile: given } : { simulator: sim! }),
      activity: (line) => print(`${time()} ${line}`),
      onSlack: (m, how) => {
        const message: SlackMessage = { text: m.text ?? "", blocks: m.blocks ?? [], ...(m.attachments ? { attachments: m.attachments.map((x) => ({ color: x.color ?? "", blocks: x.blocks ?? [] })) } : {}), ...(m.thread_ts ? { thread_ts: m.thread_ts } : {}), ...(m.reply_broadcast ? { reply_broadcast: true } : {}) };
        const receiver = `slack ${m.channel ?? m.path ?? ""}`.trim();
        for (const l of slackAsText(message, { receiver, as: how === "updated" ? "update" : m.thread_ts ? "reply" : "message" })) print(l);
      },
    });
    const { report } = cl.stack;
    print(`  resources  ${report.created.length} created from the template, ${report.played.length} played here, ${report.notEmulated.length} not enforced on one machine (${[...new Set(report.notEmulated.map((r) => r.type))].join(", ")})`);
    for (const f of cl.stack.functions.values()) print(`  function   ${f.def.name.padEnd(28)} ${f.def.memoryMb} MB, ${f.def.timeoutSec} s, ${f.def.runtime} (here: Node ${process.versions.node}); log ${f.logFile}`);
    print(`  platform   ${cl.config.platform.url}${sim ? " (the simulator; a deployment every ~40 s, some fail)" : ""}`);
    print(`  email      SES on moto_server, copied to ${join(workDir, "outbox")} (.eml files); Slack is shown here`);
    print("  Dispatch runs every minute, as its schedule says. Ctrl-C stops everything.\n");
    let seen = 0;
    mail = setInterval(() => {
      cl!.emails().then((all) => {
        for (; seen < all.length; seen++) {
          const subject = /^Subject: (.*)$/m.exec(all[seen]!.raw)?.[1] ?? "(no subject)";
          print(`${time()} email → ${all[seen]!.destinations.join(", ")}: ${subject}`);
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
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}
