/**
 * End-to-end alert latency on one machine: a deployment enters DEPLOYMENT_ERROR in the simulator; the
 * local pipeline (openLocalPipeline: dispatch, poll, DynamoDB Local, the outbox stream reader, the local
 * bus, routes, the notifier) carries it to a Slack receiver over HTTP. The processing runs at real speed
 * and is timed on the wall clock; only the wait for the next one-minute poll is on the simulator's clock
 * (ticks are not waited out in wall time, which would take an hour for 50 failures).
 */
import pMap from "p-map";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { startSimulator } from "../local/simulator/index.js";
import { openLocalPipeline } from "../local/runtime/pipeline.js";
import { POLL_CONCURRENCY } from "../local/runtime/simulated-run.js";
import { checkConfig } from "../lib/config/load.js";
import { everySource, planPolls } from "../lib/dispatch/tick.js";
import { pollAndRecord } from "../lib/dispatch/poll-batch.js";
import { sourceKey } from "../lib/model/source.js";
import { startSlackReceiver } from "../local/receivers/slack-receiver.js";
import { p50p95, report, rng, section } from "./support.js";

const FAILURES = 50;
const TICK_MS = 60_000;
/** As `lookout run`: the outbox stream is read every second. */
const STREAM_READ_MS = 1_000;
/** Ticks to wait for a failure to be read before counting it missed. */
const MAX_TICKS = 10;
const DELIVERY_TIMEOUT_MS = 30_000;

const silent = { info() {}, warn() {}, error() {} };

interface Timing {
  /** Simulator clock: error state entered, and the poll that read it. */
  errorAt: number;
  polledAt: number;
  /** Wall clock (Date.now, as the receiver stamps requests): poll start, alert written, on the bus, at Slack. */
  pollStart: number;
  written: number;
  onBus: number;
  atSlack: number;
}

export async function benchAlertLatency() {
  section({
    id: "e2e",
    title: "End-to-end alert latency on one machine (platform change → Slack receiver)",
    method:
      `${FAILURES} deployments, one per application, each end in DEPLOYMENT_ERROR in the platform simulator, one after another. Lookout runs as ` +
      "`lookout run` does (openLocalPipeline, with its own DynamoDB Local keeping its data on disk): dispatch plans each one-minute tick within 1000 requests/hour with the change feed (one watched " +
      "webhook) read by the minute tick, not by the 10-second loop (the loop's detection is the detection bench's; here the minute ticks), the planned polls run 4 at a time against the simulator over HTTP and write to DynamoDB Local, the outbox stream reader reads " +
      `the table's stream every ${STREAM_READ_MS / 1000} s and publishes to the local bus (events.ndjson), the routes pick a Slack receiver (Web API ` +
      "form, chat.postMessage) and the notifier posts to a local Slack receiver (local/receivers/slack-receiver.ts) on 127.0.0.1. " +
      "**Processing latency** is wall-clock time from the start of the poll that read the failure to the receiver having the whole request; it " +
      "includes the poll's HTTP calls, the transactional write of state and alert, the wait for the stream reader's next read (up to 1 s, " +
      "on average about half), publishing, routing, the notifier's once-per-receiver claim in DynamoDB, rendering and the HTTP POST. " +
      "**From the platform change** adds the wait for the poll that read it, on the simulator's clock with one-minute ticks (the error instants are " +
      "spread evenly over the minute); ticks are not waited out in wall time. Each failure is measured alone (the next one starts after its " +
      "message arrived and a random pause of up to 1 s, so that the write falls anywhere in the stream reader's cycle), so this is latency without load; the simulator, DynamoDB Local (Java) and Lookout share the machine. In AWS the " +
      "stream trigger, EventBridge and SQS hops replace the 1 s reader and the in-process bus, and are not measured here.",
  });
  const [sim, slack] = await Promise.all([
    startSimulator({ seed: 5, startTime: new Date().toISOString(), size: { applications: FAILURES, clusters: 0, webhooks: 1 } }),
    startSlackReceiver(),
  ]);
  const dataDir = mkdtempSync(join(tmpdir(), "lookout-bench-e2e-"));
  const config = checkConfig(
    {
      platform: { url: sim.url, token: "env:SIM_TOKEN" },
      watch: [{ organization: sim.ids.organizationId, webhooks: [sim.ids.webhookIds[0]!], applications: sim.ids.applicationIds }],
      data_dir: dataDir,
      routes: [{ name: "failures", match: { kind: "deployment", transition: ["failed", "still_failing"] }, slack: [{ channel: "#oncall", token: "env:SLACK_BOT_TOKEN" }] }],
    },
    "bench e2e",
    {},
  );
  const env = {
    SIM_TOKEN: sim.apiToken, SLACK_BOT_TOKEN: "xoxb-bench", LOOKOUT_SLACK_API_URL: slack.apiUrl,
    LOOKOUT_TABLE: `bench-e2e-${randomUUID().slice(0, 8)}`,
    // No DYNAMODB_ENDPOINT: its own DynamoDB Local with data on disk, as `lookout run` has, not the one
    // the other sections have filled (that one made the writes several times slower).
  };
  const onBus = new Map<string, number>();
  const p = await openLocalPipeline(config, { env, log: silent, now: () => sim.clock.now(), onEvent: (e) => onBus.set(e.detail.id, Date.now()) });
  const started = performance.now();
  try {
    // Wall start of each source's poll in the current tick, and each execution's alert when it is written.
    const pollStarts = new Map<string, number>();
    const alerts = new Map<string, { id: string; written: number; pollStart: number; polledAt: number }>();
    p.pollDeps.onAlert = (d, suppression) => {
      const execution = d.deployment?.execution_id;
      if (suppression || !execution || !d.service) return;
      alerts.set(execution, { id: d.id, written: Date.now(), pollStart: pollStarts.get(d.service.id)!, polledAt: Date.parse(d.observed_at) });
    };
    const polled = new Set<string>();
    const poll = (req: Parameters<typeof pollAndRecord>[0]) => {
      pollStarts.set(req.source.id, Date.now());
      polled.add(sourceKey(req.source));
      return pollAndRecord(req, p.pollDeps, p.dispatch, p.watch);
    };
    const tick = async () => {
      const { polls } = await planPolls(p.dispatch, p.watch, sim.clock.nowMs());
      await pMap(polls, poll, { concurrency: POLL_CONCURRENCY });
      sim.clock.advance(TICK_MS);
    };

    // First sight of every source (history stored, its alerts backfill-suppressed), then ticks until
    // dispatch has planned every source once: the measured failures meet a pipeline in steady state.
    p.reader.start(STREAM_READ_MS);
    await pMap(await everySource(p.dispatch, p.watch, sim.clock.nowMs()), poll, { concurrency: POLL_CONCURRENCY });
    polled.clear();
    while (polled.size < p.watch.sources.length) await tick();
    await p.reader.drain();

    const timings: Timing[] = [];
    let missed = 0;
    let undelivered = 0;
    const firstMessage = slack.messages.length;
    const random = rng(5);
    for (const [i, app] of sim.ids.applicationIds.entries()) {
      // Each failure alone would otherwise start right after the previous delivery, always at the same
      // point of the stream reader's 1 s cycle: a random pause makes that wait what it is in a real run.
      await delay(Math.floor(random.next() * STREAM_READ_MS));
      // Errors 45–104 s after the start of the deployment, spread evenly over the polling minute.
      const errorAfter = 45_000 + Math.floor((i * TICK_MS) / FAILURES);
      const errorAt = sim.clock.nowMs() + errorAfter;
      const execution = sim.scenario.deploy(app, { outcome: "DEPLOYMENT_ERROR", durations: { queuedMs: 5_000, buildingMs: 25_000, deployingMs: errorAfter - 30_000 } });
      const before = slack.messages.length;
      for (let t = 0; !alerts.has(execution) && t < MAX_TICKS; t++) await tick();
      const a = alerts.get(execution);
      if (!a) {
        missed++;
        continue;
      }
      const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
      while (slack.messages.length === before && Date.now() < deadline) await delay(2);
      if (slack.messages.length === before) {
        undelivered++;
        continue;
      }
      // The receiver stamps each request as it answers; the post that was accepted is the last one so far.
      timings.push({ errorAt, polledAt: a.polledAt, pollStart: a.pollStart, written: a.written, onBus: onBus.get(a.id)!, atSlack: slack.requests.at(-1)!.at });
    }
    await delay(2 * STREAM_READ_MS); // anything sent twice would arrive by now

    const ms = (f: (t: Timing) => number) => timings.map(f);
    const processing = ms((t) => t.atSlack - t.pollStart);
    const waitS = ms((t) => (t.polledAt - t.errorAt) / 1000);
    const how = `${timings.length} failures, wall clock, Date.now() in Lookout's process and in the receiver (same process)`;
    report({ name: "processing: poll that read the failure → Slack receiver, p50 / p95", value: p50p95(processing), unit: "ms", method: how });
    report({ name: "  poll start → alert written (poll, conditional writes)", value: p50p95(ms((t) => t.written - t.pollStart)), unit: "ms", method: how });
    report({ name: "  alert written → on the local bus (stream reader, 1 s interval)", value: p50p95(ms((t) => t.onBus - t.written)), unit: "ms", method: how });
    report({ name: "  on the bus → Slack receiver (route, notify claim, render, POST)", value: p50p95(ms((t) => t.atSlack - t.onBus)), unit: "ms", method: how });
    report({ name: "wait for the poll that read it (1-minute ticks), p50 / p95", value: p50p95(waitS, 1), unit: "s", method: "simulator clock: the tick's time − the instant the execution entered DEPLOYMENT_ERROR; dispatch decides which tick polls it" });
    report({
      name: "platform change → Slack receiver, 1-minute poll interval, p50 / p95",
      value: p50p95(timings.map((t, i) => waitS[i]! + processing[i]! / 1000), 1),
      unit: "s",
      method: "per failure: the wait above (simulator clock) + its processing latency (wall clock)",
    });
    report({
      name: "failures delivered / Slack messages received",
      value: `${timings.length} of ${FAILURES} / ${slack.messages.length - firstMessage}${missed ? `, ${missed} never read` : ""}${undelivered ? `, ${undelivered} not delivered` : ""}`,
      method: `a failure not read within ${MAX_TICKS} ticks, or not at the receiver within ${DELIVERY_TIMEOUT_MS / 1000} s, is not delivered; every message the receiver accepted is counted`,
    });
    report({ name: "wall time", value: (performance.now() - started) / 1000, unit: "s", method: "warm-up (first sight, a tick per source) included" });
  } finally {
    await p.close();
    await Promise.all([sim.close(), slack.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
