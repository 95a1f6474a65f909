/**
 * A child process for the crash tests (test/integration/e2e/faults-crash.test.ts): one pass of the local
 * pipeline (poll one application's deployments, drain the outbox stream to the local bus, notify Slack)
 * against a simulator and a shared DynamoDB Local, killing itself with SIGKILL at the step named by
 * CRASH_AT. The hook points are wrappers around the store, bus and notify store of this process only.
 * A pass that kills nothing (the first sight a test starts from) also runs in the test's own process
 * (`onePass`): a child process costs a second of CPU to start.
 *
 *   CRASH_AT: after-read | after-state-write | after-publish | after-slack-send | (empty: no crash)
 *   SIM_URL, SIM_TOKEN, ORG_ID, APP_ID, NOW (simulated ISO time), DATA_DIR,
 *   DYNAMODB_ENDPOINT, LOOKOUT_TABLE, LOOKOUT_SLACK_API_URL,
 *   SLACK_WEBHOOK_URL (set: the incoming-webhook form instead of the Web API's #oncall)
 */
import { checkConfig } from "../../lib/config/load.js";
import { openLocalPipeline } from "../../local/runtime/pipeline.js";
import { pollSource } from "../../lib/poll/poll.js";
import { pathToFileURL } from "node:url";

export interface PassOutcome {
  ok: boolean;
  alerts: number;
}

/** One pass with the worker's environment (above); `crashAt` kills this process at that step, so only a child passes one. */
export async function onePass(env: NodeJS.ProcessEnv, crashAt = ""): Promise<PassOutcome> {
  const die = (step: string) => {
    if (crashAt === step) process.kill(process.pid, "SIGKILL");
  };
  const now = () => new Date(env.NOW!);
  const log = { info() {}, warn() {}, error: (m: string, e?: Record<string, unknown>) => console.error(m, JSON.stringify(e)) };

  const config = checkConfig(
    {
      platform: { url: env.SIM_URL, token: "env:SIM_TOKEN" },
      watch: [{ organization: env.ORG_ID, applications: [{ id: env.APP_ID, name: "api", environment: "prod" }] }],
      data_dir: env.DATA_DIR,
      retention: "3650d", // simulated clocks are in the past; DynamoDB Local enforces TTL
      routes: [{
        name: "deployments", match: { kind: "deployment" },
        slack: [env.SLACK_WEBHOOK_URL ? { webhook_url: "env:SLACK_WEBHOOK_URL" } : { channel: "#oncall", token: "env:SLACK_BOT_TOKEN" }],
      }],
    },
    "crash-worker",
    {},
  );

  const p = await openLocalPipeline(config, { env: { ...env, SLACK_BOT_TOKEN: "xoxb-crash" }, log, now });

  // after reading: the platform's answer is in hand, nothing written.
  const list = p.client.list.bind(p.client) as (...args: unknown[]) => Promise<unknown>;
  p.client.list = (async (...args: unknown[]) => {
    const res = await list(...args);
    die("after-read");
    return res;
  }) as unknown as typeof p.client.list;

  // after the state write: the execution's new state and its alert are in the table (one transaction).
  const observe = p.store.observeExecution.bind(p.store);
  p.store.observeExecution = (async (...args: Parameters<typeof observe>) => {
    const res = await observe(...args);
    if (res.outcome) die("after-state-write");
    return res;
  }) as typeof p.store.observeExecution;

  // after publishing: the bus has it (and its subscribers ran), the stream checkpoint is not saved.
  const put = p.bus.putEvents.bind(p.bus);
  p.bus.putEvents = async (entries) => {
    const res = await put(entries);
    die("after-publish");
    return res;
  };

  // after sending to Slack, before recording the delivery as sent.
  const settle = p.notifyStore.settle.bind(p.notifyStore);
  p.notifyStore.settle = async (held, outcome) => {
    if (outcome.state === "sent") die("after-slack-send");
    return settle(held, outcome);
  };

  try {
    const res = await pollSource({ source: { kind: "deployment", organizationId: env.ORG_ID!, id: env.APP_ID! } }, p.pollDeps);
    if (!res.ok) console.error("poll failed", JSON.stringify(res.error));
    await p.reader.drain();
    await p.notifyRetries.retry(); // as `lookout run` does after each pass
    return { ok: res.ok, alerts: res.alerts };
  } finally {
    await p.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = await onePass(process.env, process.env.CRASH_AT ?? "");
  console.log(JSON.stringify(out));
  process.exit(out.ok ? 0 : 3); // no lingering sockets keep the worker alive
}
