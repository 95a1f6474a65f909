/**
 * The poller of the flood bench (bench/flood-ingest.ts), a process of its own so that its memory is the
 * poller's alone, as a poll function's container would be: polls each source given until it has
 * nothing left for a later poll, then prints what it did as one line of JSON.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { createPlatformClient } from "../lib/platform/client.js";
import { DynamoIngestStore } from "../lib/store/ingest-store.js";
import { pollSource } from "../lib/poll/poll.js";
import { pollDepsOf } from "../lib/app/ingest.js";
import { checkConfig } from "../lib/config/load.js";
import { AnswerRoom } from "../lib/platform/answer-memory.js";
import type { SourceRef } from "../lib/model/source.js";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../local/runtime/dynamodb-local.js";

export interface FloodPollerInput {
  platformUrl: string;
  token: string;
  dynamodbEndpoint: string;
  tableName: string;
  sources: SourceRef[];
  /** Poll the sources as one batch of the poll function (at once, one room for their answers), again while any is left. */
  together?: boolean;
}

export interface FloodPollerOutput {
  sources: Array<{ source: string; polls: number; ms: number; longestPollMs: number; requests: number; newRecords: number; alerts: number; writes: number; ok: boolean; peakRss: number; peakHeap: number }>;
  /** Together: the batches polled until every source was stored, and the polls deferred among them. */
  batches?: number;
  deferred?: number;
  /** Resident set before the first poll and at its peak (bytes). */
  rssBefore: number;
  maxRss: number;
}

const input = JSON.parse(process.env.FLOOD_POLLER ?? "{}") as FloodPollerInput;
const store = new DynamoIngestStore({
  client: new DynamoDBClient({ endpoint: input.dynamodbEndpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS }),
  tableName: input.tableName,
  retentionMs: 400 * 86_400_000,
});
// The configuration's defaults (a 15-minute backfill window) for the sources' organization.
const config = checkConfig({ platform: { url: input.platformUrl, token: "env:T" }, watch: [{ organization: input.sources[0]!.organizationId }] }, "flood poller", {});
const deps = pollDepsOf(config, {
  client: createPlatformClient({ baseUrl: input.platformUrl, token: input.token, auth: "token" }),
  store, now: () => new Date(), log: { info() {}, warn() {}, error: (m, extra) => console.error(m, extra) },
});
const out: FloodPollerOutput = { sources: [], rssBefore: process.memoryUsage().rss, maxRss: 0 };
if (input.together) {
  // As the poll function takes a batch: every source at once, one room for their answers; the sources
  // left (a backlog, a deferred answer) again at the next tick, at most 200 batches.
  out.batches = 0;
  out.deferred = 0;
  let left = input.sources;
  const started = performance.now();
  while (left.length && out.batches < 200) {
    out.batches++;
    const room = new AnswerRoom();
    const results = await Promise.all(left.map((source) => room.run(() => pollSource({ source, previousPollAt: new Date().toISOString() }, deps))));
    out.deferred += room.deferred;
    left = left.filter((_, i) => !results[i]!.ok || results[i]!.backlog);
    if (results.some((r) => !r.ok && r.error?.kind !== "deferred")) throw new Error(`a poll failed: ${JSON.stringify(results.find((r) => !r.ok)?.error)}`);
  }
  out.sources.push({ source: "batch", polls: out.batches, ms: performance.now() - started, longestPollMs: 0, requests: 0, newRecords: 0, alerts: 0, writes: store.writes.count, ok: !left.length, peakRss: 0, peakHeap: 0 });
}
for (const source of input.together ? [] : input.sources) {
  const row = { source: `${source.kind}`, polls: 0, ms: 0, longestPollMs: 0, requests: 0, newRecords: 0, alerts: 0, writes: 0, ok: true, peakRss: 0, peakHeap: 0 };
  // Sampled while it polls: the peak of this source's polls (maxRSS is the process's, over all).
  const sample = () => {
    const m = process.memoryUsage();
    row.peakRss = Math.max(row.peakRss, m.rss);
    row.peakHeap = Math.max(row.peakHeap, m.heapUsed + m.external + m.arrayBuffers);
  };
  const sampler = setInterval(sample, 20);
  const writes = store.writes.count;
  const started = performance.now();
  // A poll at each tick while it leaves records for the next (dispatch's tier 0), at most 200.
  for (let backlog = 1; backlog && row.polls < 200; row.polls++) {
    const t = performance.now();
    const r = await pollSource({ source, previousPollAt: new Date().toISOString() }, deps);
    row.longestPollMs = Math.max(row.longestPollMs, performance.now() - t);
    row.requests += r.requests;
    row.newRecords += r.newRecords;
    row.alerts += r.alerts;
    row.ok &&= r.ok;
    backlog = r.ok ? (r.backlog ?? 0) : 0;
  }
  clearInterval(sampler);
  sample();
  row.ms = performance.now() - started;
  row.writes = store.writes.count - writes;
  out.sources.push(row);
}
out.maxRss = process.resourceUsage().maxRSS * 1024;
console.log(JSON.stringify(out));
