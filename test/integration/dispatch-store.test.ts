import { beforeAll, describe, expect, it } from "vitest";
import { GetCommand, DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { freshTable } from "../support/dynamodb.js";
import {
  DynamoDispatchStore,
  decodeDispatchState,
  encodeDispatchState,
  itemSizeBytes,
} from "../../lib/store/dispatch-store.js";
import { type DispatchState, type Watchlist, DISPATCH_POLICY, planTick, watchlist } from "../../lib/ingest/dispatch.js";
import { spend } from "../../lib/ingest/budget.js";
import type { PollResult } from "../../lib/ingest/poll.js";
import { sourceKey } from "../../lib/model/source.js";
import { keys } from "../../lib/model/items.js";
import type { Config } from "../../lib/config/load.js";

const T0 = Date.parse("2026-03-02T10:00:00Z");
const MIN = 60_000;
const uuid = (prefix: string, i: number) => `${prefix}${String(i).padStart(7, "0")}-0000-4000-8000-000000000000`;
const platform: Config["platform"] = { url: "http://x", tokenRef: "env:T", auth: "token", requestsPerHour: 1000, timeoutMs: 10_000 };

/** 500 applications, 50 clusters and 20 webhooks over two organizations. */
const big: Watchlist = watchlist({
  platform,
  watch: [0, 1].map((g) => ({
    organization: uuid("0", g),
    webhooks: Array.from({ length: 10 }, (_, i) => uuid("b", g * 100 + i)),
    clusters: Array.from({ length: 25 }, (_, i) => ({ id: uuid("c", g * 100 + i) })),
    applications: Array.from({ length: 250 }, (_, i) => ({ id: uuid("a", g * 1000 + i) })),
  })),
});

function result(source: string, over: Partial<PollResult> = {}): PollResult {
  return {
    source, ok: true, requests: 1, retries: 0, newRecords: 0, alerts: 0, suppressed: 0, rejected: 0, inProgress: 0,
    hotServices: [], gapSuspected: false, firstSight: false, ...over,
  };
}

/** A busy state: every source polled, many with every field set (the worst case for size). */
function busyState(): DispatchState {
  const now = T0 + 2 * 60 * MIN;
  const sources: DispatchState["sources"] = {};
  for (const [i, ref] of big.sources.entries()) {
    sources[sourceKey(ref)] = {
      last_polled_at: now - 1234 * i - 17,
      last_ok_at: now - 60_000 - 1234 * i - 17,
      last_activity_at: now - 999_999 - i,
      ...(i % 3 === 0 ? { in_progress: 3, hot_until: now + 555_555 } : {}),
      ...(i % 5 === 0 ? { consecutive_failures: 4, next_allowed_at: now + 777_777, last_error: "server_error" } : {}),
    };
  }
  let budget = planTick(undefined, big, T0).state.budget;
  for (let m = 0; m < 61; m++) budget = spend(budget, 15, T0 + m * MIN + 123);
  return { budget, sources };
}

describe("dispatch store on DynamoDB Local", () => {
  let client: DynamoDBClient;
  let tableName: string;
  beforeAll(async () => {
    ({ client, tableName } = await freshTable("lookout-dispatch"));
  });
  const store = () => new DynamoDispatchStore({ client, tableName });

  it("stores 570 sources in one item far below DynamoDB's 400 KB limit, and reads them back as they were", async () => {
    const s = store();
    const state = busyState();
    expect(Object.keys(state.sources)).toHaveLength(570);
    const encoded = encodeDispatchState(state);
    const size = itemSizeBytes({ ...keys.dispatch("size"), item_type: "dispatch", version: 1, ...encoded });
    console.log(`dispatch item, 570 sources, every field set on many: ${size} bytes; plain JSON ${JSON.stringify(state).length} bytes`);
    expect(size).toBeLessThan(60_000);
    expect(decodeDispatchState(JSON.parse(JSON.stringify(encoded)))).toEqual(state);

    await s.update("size", () => state);
    expect(await s.get("size")).toEqual(state);
    // DynamoDB's own measure agrees: a put is billed one write unit per KB of the item.
    const doc = DynamoDBDocumentClient.from(client);
    const put = await doc.send(new PutCommand({
      TableName: tableName, Item: { ...keys.dispatch("size"), item_type: "dispatch", version: 1, ...encoded }, ReturnConsumedCapacity: "TOTAL",
    }));
    expect(Math.abs(put.ConsumedCapacity!.CapacityUnits! - Math.ceil(size / 1024))).toBeLessThanOrEqual(1);
  });

  it("concurrent updates do not lose each other (optimistic locking)", async () => {
    const a = store();
    const b = store();
    const name = "race";
    const first = planTick(undefined, big, T0);
    await a.update(name, () => first.state);
    const polled = first.polls.map((p) => sourceKey(p.source)).slice(0, 16);
    expect(polled.length).toBe(16);
    // Sixteen pollers report failures at once, from two store instances (two Lambda containers).
    const written = await Promise.all(
      polled.map((key, i) =>
        (i % 2 ? a : b).recordPollResult(name, result(key, { ok: false, error: { kind: "timeout", message: "slow" } }), T0 + 5_000, big),
      ),
    );
    expect(written.every(Boolean)).toBe(true);
    const state = (await a.get(name))!;
    for (const key of polled) expect(state.sources[key]).toMatchObject({ consecutive_failures: 1, last_error: "timeout" });
    // …and dispatch's next tick, racing with one more result, keeps it too.
    const late = polled[0]!;
    await Promise.all([
      a.update(name, (cur) => planTick(cur, big, T0 + MIN).state),
      b.recordPollResult(name, result(late, { ok: false, error: { kind: "timeout", message: "slow" } }), T0 + MIN + 1, big),
    ]);
    const after = (await a.get(name))!;
    expect(after.sources[late]?.consecutive_failures).toBe(2);
    expect(Object.values(after.sources).filter((s) => s.last_polled_at === T0 + MIN).length).toBeGreaterThan(0);
  });

  it("a routine poll result writes nothing; one that learned something writes once", async () => {
    const s = store();
    const name = "steady";
    const plan = planTick(undefined, big, T0);
    await s.update(name, () => plan.state);
    const key = sourceKey(plan.polls[0]!.source);
    const before = s.writes.count;
    const routine = result(key, { rateLimit: { limit: 1000, remaining: 950, resetAt: T0 + 30 * MIN } });
    expect(await s.recordPollResult(name, routine, T0 + 2_000, big)).toBe(false);
    expect(s.writes.count).toBe(before);

    expect(await s.recordPollResult(name, result(key, { newRecords: 2 }), T0 + 3_000, big)).toBe(true);
    expect(s.writes.count).toBe(before + 1);
    expect((await s.get(name))!.sources[key]?.last_activity_at).toBe(T0 + 3_000);
    // The same news again is no news.
    expect(await s.recordPollResult(name, result(key), T0 + 4_000, big)).toBe(false);
    expect(s.writes.count).toBe(before + 1);
  });

  it("the change feed marks the named application hot in the stored state", async () => {
    const s = store();
    const name = "hot";
    await s.update(name, () => planTick(undefined, big, T0).state);
    const hook = sourceKey(big.sources.find((r) => r.kind === "webhook")!);
    const app = uuid("a", 1000 + 7); // second organization
    await s.recordPollResult(name, result(hook, { newRecords: 1, hotServices: [app] }), T0 + 2_000, big);
    const appKey = big.byApplication.get(app)!;
    expect((await s.get(name))!.sources[appKey]?.hot_until).toBe(T0 + 2_000 + DISPATCH_POLICY.hotMs);
  });

  it("without a stored state, a poll result that learned something starts one (run --once plans nothing)", async () => {
    const s = store();
    const key = sourceKey(big.sources.find((r) => r.kind === "cluster")!);
    // Not a watched source, nothing else learned: nothing to store.
    expect(await s.recordPollResult("nothing-yet", result("deployment:x/y", { newRecords: 1 }), T0, big)).toBe(false);
    expect(await s.get("nothing-yet")).toBeUndefined();
    const failed = result(key, { ok: false, error: { kind: "not_found", message: "gone" } });
    expect(await s.recordPollResult("nothing-yet", failed, T0, big)).toBe(true);
    expect(await s.recordPollResult("nothing-yet", failed, T0 + MIN, big)).toBe(true);
    expect((await s.get("nothing-yet"))!.sources[key]).toMatchObject({ consecutive_failures: 2, last_error: "not_found" });
  });

  it("keeps a version attribute on the item", async () => {
    const s = store();
    await s.update("versioned", () => planTick(undefined, big, T0).state);
    await s.update("versioned", (cur) => planTick(cur, big, T0 + MIN).state);
    const doc = DynamoDBDocumentClient.from(client);
    const { Item } = await doc.send(new GetCommand({ TableName: tableName, Key: keys.dispatch("versioned") }));
    expect(Item).toMatchObject({ item_type: "dispatch", version: 2 });
  });
});
