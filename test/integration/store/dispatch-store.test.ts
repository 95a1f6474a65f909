import { gunzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { GetCommand, DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { freshTable } from "../../support/dynamodb.js";
import { DynamoDispatchStore, decodeDispatchState, encodeDispatchState, itemSizeBytes } from "../../../lib/store/dispatch-store.js";
import { planTick } from "../../../lib/dispatch/plan.js";
import { keys } from "../../../lib/model/items.js";
import { T0, big, busyState, dispatchStoreContract } from "../../support/dispatch-store-contract.js";

const MIN = 60_000;

let client: DynamoDBClient;
let tableName: string;
beforeAll(async () => {
  ({ client, tableName } = await freshTable("lookout-dispatch"));
});
const store = () => new DynamoDispatchStore({ client, tableName });

dispatchStoreContract("DynamoDB Local", store);

describe("dispatch store on DynamoDB Local", () => {
  it("stores 570 sources in one item far below DynamoDB's 400 KB limit, and reads them back as they were", async () => {
    const s = store();
    const state = busyState();
    expect(Object.keys(state.sources)).toHaveLength(570);
    const encoded = encodeDispatchState(state);
    const size = itemSizeBytes({ ...keys.dispatch("size"), item_type: "dispatch", version: 1, ...encoded });
    console.log(`dispatch item, 570 sources, every field set on many: ${size} bytes; plain JSON ${JSON.stringify(state).length} bytes`);
    // Billed a write unit per KB on every tick: compressed, it stays well under the 38 KB of the plain map.
    expect(size).toBeLessThan(20_000);
    expect(decodeDispatchState(encoded)).toEqual(state);

    await s.update("size", () => state);
    expect(await s.get("size")).toEqual(state);
    // DynamoDB's own measure agrees: a put is billed one write unit per KB of the item.
    const doc = DynamoDBDocumentClient.from(client);
    const put = await doc.send(new PutCommand({
      TableName: tableName, Item: { ...keys.dispatch("size"), item_type: "dispatch", version: 1, ...encoded }, ReturnConsumedCapacity: "TOTAL",
    }));
    expect(Math.abs(put.ConsumedCapacity!.CapacityUnits! - Math.ceil(size / 1024))).toBeLessThanOrEqual(1);
  });

  it("reads an item written before its sources were compressed", async () => {
    const state = busyState();
    const { sources_gz, ...rest } = encodeDispatchState(state);
    const plain = JSON.parse(gunzipSync(sources_gz!).toString("utf8"));
    const doc = DynamoDBDocumentClient.from(client);
    await doc.send(new PutCommand({ TableName: tableName, Item: { ...keys.dispatch("plain"), item_type: "dispatch", version: 3, ...rest, sources: plain } }));
    expect(await store().get("plain")).toEqual(state);
    // The next write compresses it.
    await store().update("plain", (cur) => cur!);
    const { Item } = await doc.send(new GetCommand({ TableName: tableName, Key: keys.dispatch("plain") }));
    expect(Item).toMatchObject({ version: 4 });
    expect(Item!.sources_gz).toBeInstanceOf(Uint8Array);
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
