/**
 * A flood in one answer, the ingest half (the whole way to the receivers: bench/flood.ts): a cluster's
 * log list of 50,000 entries (5,000 errors, a crash-looping component) and a webhook's 10,000 failed
 * deliveries, polled into DynamoDB Local by a poller process of its own (bench/flood-ingest-poller.ts)
 * until each is stored: run time, peak memory, requests, writes.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { startSimulator } from "../local/simulator/index.js";
import { createPlatformClient } from "../lib/platform/client.js";
import { DynamoIngestStore } from "../lib/store/ingest-store.js";
import { pollSource } from "../lib/poll/poll.js";
import type { SourceRef } from "../lib/model/source.js";
import { CHUNK_RECORDS, POLL_WORK_MS } from "../lib/poll/readers/list.js";
import type { FloodPollerInput, FloodPollerOutput } from "./flood-ingest-poller.js";
import { dynamo, dynamoEndpoint, report, section } from "./support.js";

const ROOT = resolve(import.meta.dirname, "..");
const CLUSTER_ENTRIES = 50_000;
const CLUSTER_ERRORS = 5_000;
const FAILED_DELIVERIES = 10_000;
const MB = 1024 * 1024;
/** The poller's heap as a 512 MB poll function bounds it (90 %): the garbage collector works as it would there. */
const POLLER_OLD_SPACE_MB = 460;

function runPoller(input: FloodPollerInput): Promise<FloodPollerOutput> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [`--max-old-space-size=${POLLER_OLD_SPACE_MB}`, "bin/run-ts.mjs", "bench/flood-ingest-poller.ts"], {
      cwd: ROOT, env: { ...process.env, FLOOD_POLLER: JSON.stringify(input) }, stdio: ["ignore", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.on("error", fail);
    child.on("exit", (code) => (code === 0 ? done(JSON.parse(stdout.trim().split("\n").at(-1)!) as FloodPollerOutput) : fail(new Error(`flood poller exited ${code}`))));
  });
}

export async function benchFloodIngest(): Promise<void> {
  section({
    id: "flood-ingest",
    title: `Flood: one answer of ${CLUSTER_ENTRIES.toLocaleString("en")} cluster log entries, polled within the poll function's memory and time`,
    method:
      `The platform simulator serves one cluster whose log list holds ${CLUSTER_ENTRIES.toLocaleString("en")} entries, the last ` +
      `${CLUSTER_ERRORS.toLocaleString("en")} of them errors (a crash-looping component), and one webhook with ` +
      `${FAILED_DELIVERIES.toLocaleString("en")} deliveries its target answered 500 (${FAILED_DELIVERIES / 2} failed deployments), each source ` +
      "read once before (not a first sight: every failure is alerted). A poller process of its own (bench/flood-ingest-poller.ts, a warm poll " +
      "function's container) polls the cluster, then the webhook, on a fresh DynamoDB Local table, again at once while a poll leaves records " +
      `for the next, as dispatch does at each tick: chunks of ${CHUNK_RECORDS} records, no chunk started after ${POLL_WORK_MS / 1000} s of a poll. ` +
      `The poller's V8 old space is capped at ${POLLER_OLD_SPACE_MB} MB (--max-old-space-size, 90 % of the poll function's 512 MB), so that ` +
      "its garbage collector works as in the function rather than on this machine's 24 GiB. Its peak memory is the process's maximum " +
      "resident set (process.resourceUsage().maxRSS), Node, tsx and the AWS SDK included, and per flood the peak sampled every 20 ms; requests are " +
      "those sent to the platform; items written are DynamoIngestStore's write count (records, alerts, cursor, seen parts, incident).",
  });
  const sim = await startSimulator({ startTime: new Date().toISOString(), size: { applications: 50, clusters: 2, webhooks: 2, pastDeployments: 0 } });
  try {
    const { client, tableName } = await dynamo();
    const org = sim.ids.organizationId;
    const cluster: SourceRef = { kind: "cluster", organizationId: org, id: sim.ids.clusterIds[0]! };
    const webhook: SourceRef = { kind: "webhook", organizationId: org, id: sim.ids.webhookIds[0]! };
    const cluster2: SourceRef = { kind: "cluster", organizationId: org, id: sim.ids.clusterIds[1]! };
    const webhook2: SourceRef = { kind: "webhook", organizationId: org, id: sim.ids.webhookIds[1]! };
    // Seen once, before the flood.
    const store = new DynamoIngestStore({ client, tableName, retentionMs: 400 * 86_400_000 });
    const primeDeps = { client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token" }), store, now: () => new Date(), backfillWindowMs: 15 * 60_000, log: { info() {}, warn() {}, error() {} } };
    for (const s of [cluster, webhook, cluster2, webhook2]) await pollSource({ source: s }, primeDeps);

    sim.clock.set(new Date());
    sim.scenario.clusterRun(cluster.id, { entries: CLUSTER_ENTRIES, errors: CLUSTER_ERRORS });
    sim.scenario.setWebhookTarget(webhook.id, { status: 500 });
    sim.scenario.setWebhookTarget(webhook2.id, { status: 500 });
    const from = sim.clock.nowMs() - 10 * 60_000;
    for (let i = 0; i < FAILED_DELIVERIES / 2; i++) {
      sim.scenario.deploy(sim.ids.applicationIds[i % sim.ids.applicationIds.length]!, { at: new Date(from + i * 100), outcome: "DEPLOYMENT_ERROR", durations: { queuedMs: 0, buildingMs: 0, deployingMs: 0 } });
    }
    const listed = sim.model.webhooks.get(webhook.id)!.deliveries.length;
    if (listed !== FAILED_DELIVERIES) throw new Error(`the webhook lists ${listed} deliveries, not ${FAILED_DELIVERIES}`);

    const started = performance.now();
    const out = await runPoller({ platformUrl: sim.url, token: sim.apiToken, dynamodbEndpoint: await dynamoEndpoint(), tableName, sources: [cluster, webhook] });
    const ms = performance.now() - started;
    const [c, w] = out.sources as [FloodPollerOutput["sources"][number], FloodPollerOutput["sources"][number]];
    for (const [what, r, records, failures] of [["cluster, 50,000 entries", c, CLUSTER_ENTRIES, CLUSTER_ERRORS], ["webhook, 10,000 failed deliveries", w, FAILED_DELIVERIES, FAILED_DELIVERIES]] as const) {
      if (!r.ok || r.newRecords < records || r.alerts !== failures) throw new Error(`${what}: ${r.newRecords} records stored, ${r.alerts} alerts, ok ${r.ok}`);
      report({ name: `${what}: polls until stored`, value: r.polls, method: "each poll reads the whole answer (1 request) and stores what it has time for" });
      report({ name: `${what}: run time`, value: r.ms / 1000, unit: "s", method: "from the first poll to the last, in the poller process" });
      report({ name: `${what}: longest poll`, value: r.longestPollMs / 1000, unit: "s", method: "the poll function's timeout is 60 s" });
      report({ name: `${what}: requests to the platform`, value: r.requests, method: "one a poll" });
      report({ name: `${what}: records stored / alerts raised`, value: `${r.newRecords} / ${r.alerts}`, method: "each error or failed delivery alerted once" });
      report({ name: `${what}: items written`, value: r.writes, method: "DynamoIngestStore's write count: records, alerts (one with each failure), cursor, seen parts, incident" });
      report({ name: `${what}: peak resident memory`, value: r.peakRss / MB, unit: "MB", method: "process.memoryUsage().rss sampled every 20 ms while it was polled" });
    }
    report({ name: "poller: resident memory before the first poll", value: out.rssBefore / MB, unit: "MB", method: "process.memoryUsage().rss: Node, tsx, the AWS SDK, Lookout's modules" });
    report({ name: "poller: peak resident memory", value: out.maxRss / MB, unit: "MB", method: "process.resourceUsage().maxRSS of the poller process over both floods; the poll function has 512 MB" });
    report({ name: "both floods: run time", value: ms / 1000, unit: "s", method: "the poller process from start to exit" });

    // The same two floods on a second cluster and webhook, in one batch of ten with eight quiet
    // applications, as the poll function takes them: at once, one large answer held at a time.
    sim.scenario.clusterRun(cluster2.id, { entries: CLUSTER_ENTRIES, errors: CLUSTER_ERRORS });
    const batch = [cluster2, webhook2, ...sim.ids.applicationIds.slice(0, 8).map((id): SourceRef => ({ kind: "deployment", organizationId: org, id }))];
    const together = await runPoller({ platformUrl: sim.url, token: sim.apiToken, dynamodbEndpoint: await dynamoEndpoint(), tableName, sources: batch, together: true });
    if (!together.sources[0]!.ok) throw new Error("the batch left sources unstored after 200 batches");
    report({ name: "batch of ten (both floods, eight quiet applications): batches until stored", value: together.batches!, method: "the poll function's batch: polled at once, what is left (a backlog, a deferred answer) at the next tick" });
    report({ name: "batch of ten: answers deferred", value: together.deferred!, method: "a large answer while the other flood's poll held one (lib/platform/answer-memory.ts)" });
    report({ name: "batch of ten: peak resident memory", value: together.maxRss / MB, unit: "MB", method: "process.resourceUsage().maxRSS of a poller process of its own; the poll function has 512 MB" });
  } finally {
    await sim.close();
  }
}
