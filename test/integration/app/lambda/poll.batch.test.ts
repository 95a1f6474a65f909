/**
 * The poll function's batch (lib/app/lambda/poll.ts) on real parts: the simulator over HTTP, DynamoDB
 * Local. Ten sources in one invocation are polled at once; two floods in one batch are not both held
 * (lib/platform/answer-memory.ts): one is stored, the other deferred with nothing stored, its cursor
 * unmoved and its health untouched, and stored whole by the next invocation; dispatch is told the
 * batch's results in one write.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Context } from "aws-lambda";
import { startSimulator, type Simulator } from "../../../../local/simulator/index.js";
import { checkConfig } from "../../../../lib/config/load.js";
import { watchlist } from "../../../../lib/dispatch/watchlist.js";
import type { Watchlist } from "../../../../lib/model/dispatch.js";
import { DynamoDispatchStore } from "../../../../lib/store/dispatch-store.js";
import { DynamoIngestStore } from "../../../../lib/store/ingest-store.js";
import { createPlatformClient } from "../../../../lib/platform/client.js";
import type { PollDeps } from "../../../../lib/poll/poll.js";
import { createPollHandler } from "../../../../lib/app/lambda/poll.js";
import { DISPATCH_NAME } from "../../../../lib/dispatch/source-state.js";
import { sourceKey, type SourceRef } from "../../../../lib/model/source.js";
import { expandRecords } from "../../../../lib/store/routine-batches.js";
import { freshTable, scanTable, TEST_RETENTION_MS } from "../../../support/dynamodb.js";

const context = { functionName: "test", awsRequestId: "req-1", invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:test" } as unknown as Context;
const MIN = 60_000;
/** About 140 KB an answer: past the small answers' room, shrunk here to 100 KB (1 MB deployed). */
const FLOOD = 400;
const FLOOD_ERRORS = 4;
const SMALL_ANSWER_BYTES = 100 * 1024;

let sim: Simulator;
let watch: Watchlist;
let dispatch: DynamoDispatchStore;
let store: DynamoIngestStore;
let pollDeps: PollDeps;
let tableName: string;
let client: Awaited<ReturnType<typeof freshTable>>["client"];
const info: string[] = [];

beforeAll(async () => {
  sim = await startSimulator({ seed: 11, size: { applications: 6, clusters: 2, webhooks: 2 } });
  const config = checkConfig(
    { platform: { url: sim.url, token: "env:T" }, watch: [{ organization: sim.ids.organizationId, webhooks: sim.ids.webhookIds, clusters: sim.ids.clusterIds, applications: sim.ids.applicationIds }] },
    "test", {},
  );
  watch = watchlist(config);
  const t = await freshTable("poll-batch");
  ({ tableName, client } = t);
  dispatch = new DynamoDispatchStore({ client: t.client, tableName: t.tableName });
  store = new DynamoIngestStore({ client: t.client, tableName: t.tableName, retentionMs: TEST_RETENTION_MS, now: () => sim.clock.now() });
  pollDeps = {
    client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token", sleep: async () => {} }),
    store, now: () => sim.clock.now(), backfillWindowMs: 15 * MIN, bounds: { smallAnswerBytes: SMALL_ANSWER_BYTES },
    log: { info: (m) => void info.push(m), warn() {}, error() {} },
  };
});
afterAll(() => sim?.close());

const event = (sources: SourceRef[]) => ({ lookout: "poll", polls: sources.map((source) => ({ source, previousPollAt: sim.clock.nowIso() })) });

/** The records stored for a cluster, by id. */
async function clusterRecords(clusterId: string): Promise<string[]> {
  const items = expandRecords(await scanTable(client, tableName));
  return items.filter((i) => i.item_type === "record" && (i.record as { cluster_id?: string }).cluster_id === clusterId).map((i) => String((i.record as { id: string }).id));
}

describe("the poll function's batch", () => {
  it("polls ten sources in one invocation and tells dispatch in one write", async () => {
    const sources = watch.sources.slice(0, 10);
    expect(sources).toHaveLength(10);
    const poll = createPollHandler({ pollDeps, store: dispatch, watch });
    const writes = dispatch.writes.count;
    expect(await poll(event(sources), context)).toEqual({ polled: 10, deferred: 0 });
    expect(dispatch.writes.count - writes).toBe(1);
    const state = await dispatch.get(DISPATCH_NAME);
    for (const s of sources) expect(state!.sources[sourceKey(s)], sourceKey(s)).toBeDefined();
  });

  it("holds one flood at a time: the other is deferred, nothing stored, and stored whole by the next invocation", async () => {
    const [a, b] = watch.sources.filter((s) => s.kind === "cluster");
    // What the first test stored of their earlier runs.
    const before = new Map([[a!.id, (await clusterRecords(a!.id)).length], [b!.id, (await clusterRecords(b!.id)).length]]);
    const added = async (c: SourceRef) => (await clusterRecords(c.id)).length - before.get(c.id)!;
    const cursorOf = async (c: SourceRef) => JSON.stringify(await store.getCursor(sourceKey(c)));
    const cursors = new Map([[a!.id, await cursorOf(a!)], [b!.id, await cursorOf(b!)]]);
    for (const c of [a!, b!]) sim.scenario.clusterRun(c.id, { entries: FLOOD, errors: FLOOD_ERRORS });
    sim.clock.advance(MIN);
    const poll = createPollHandler({ pollDeps, store: dispatch, watch });
    expect(await poll(event([a!, b!]), context)).toEqual({ polled: 2, deferred: 1 });

    const stored = [await added(a!), await added(b!)].sort((x, y) => x - y);
    expect(stored).toEqual([0, FLOOD]);
    const deferred = (await added(a!)) === 0 ? a! : b!;
    expect(await cursorOf(deferred)).toBe(cursors.get(deferred.id));
    const state = (await dispatch.get(DISPATCH_NAME))!.sources[sourceKey(deferred)] ?? {};
    // Not the source's fault: no failure counted, no back-off, due again at the next tick.
    expect(state.consecutive_failures).toBeUndefined();
    expect(state.next_allowed_at).toBeUndefined();
    expect(state.last_error).toBeUndefined();
    expect(info).toContain("answer deferred to the next tick; nothing recorded for this source");

    sim.clock.advance(MIN);
    expect(await poll(event([deferred]), context)).toEqual({ polled: 1, deferred: 0 });
    expect(await cursorOf(deferred)).not.toBe(cursors.get(deferred.id));
    const ids = await clusterRecords(deferred.id);
    expect(await added(deferred)).toBe(FLOOD);
    expect(new Set(ids).size).toBe(ids.length);
  }, 90_000);
});
