/**
 * The DynamoDB IngestStore against the port's contract (test/support/ingest-store-contract.ts), and
 * what only DynamoDB does to a batch of records: refuse an item, leave items unprocessed, throttle.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { type DynamoDBClient, ProvisionedThroughputExceededException } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { DynamoIngestStore } from "../../../lib/store/ingest-store.js";
import { recordItem } from "../../../lib/model/items.js";
import { type RecordItem, RecordUnwritable } from "../../../lib/model/ingest-store.js";
import { freshTable, localDynamoClient, scanTable } from "../../support/dynamodb.js";
import { NOW, RETENTION_MS, ingestStoreContract } from "../../support/ingest-store-contract.js";
import { expandRecords } from "../../../lib/store/routine-batches.js";

let client: DynamoDBClient;
let tableName: string;
beforeAll(async () => {
  ({ client, tableName } = await freshTable("lookout-ingest-store"));
});

ingestStoreContract("DynamoDB Local", () => ({
  store: new DynamoIngestStore({ client, tableName, retentionMs: RETENTION_MS, now: () => NOW }),
  // Records that raised nothing are kept in batches: read back as the record items they stand for.
  scan: async () => expandRecords(await scanTable(DynamoDBDocumentClient.from(client), tableName)),
  refusesUnwritable: true,
}));

describe("routine retention", () => {
  it("keeps records that raised nothing for retention_routine, and a record with its alert for the whole retention", async () => {
    const DAY = 86_400_000;
    const store = new DynamoIngestStore({ client, tableName, retentionMs: 400 * DAY, routineRetentionMs: 30 * DAY, now: () => NOW });
    const entry = () => recordItem({ record_kind: "cluster_log", id: randomUUID(), organization_id: "org", message: "m" } as never, undefined, NOW.toISOString());
    const [routine, alerted] = [entry(), entry()];
    expect(await store.insertRecords([routine])).toEqual([]);
    expect(await store.insertRecord(alerted)).toBe("inserted");
    const items = await scanTable(DynamoDBDocumentClient.from(client), tableName);
    const ttl = (pk: string) => items.find((i) => i.pk === pk)!.expires_at;
    expect(ttl(routine.pk)).toBe(Math.floor((NOW.getTime() + 30 * DAY) / 1000));
    expect(ttl(alerted.pk)).toBe(Math.floor((NOW.getTime() + 400 * DAY) / 1000));
  });
});

describe("DynamoIngestStore.insertRecords against DynamoDB's refusals", () => {
  const logEntry = (message: string): RecordItem =>
    recordItem({ record_kind: "cluster_log", id: randomUUID(), organization_id: "org", message } as never, undefined, NOW.toISOString());
  /** A client whose BatchWriteItem requests go through `around` (the real request is `send`). */
  function storeWith(around: (items: Array<{ PutRequest: { Item: RecordItem } }>, send: (items: unknown[]) => Promise<unknown>) => Promise<unknown>) {
    const c = localDynamoClient();
    c.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== "BatchWriteItemCommand") return next(args);
        const input = args.input as { RequestItems: Record<string, Array<{ PutRequest: { Item: RecordItem } }>> };
        const send = (items: unknown[]) => next({ ...args, input: { ...input, RequestItems: { [tableName]: items } } });
        return around(input.RequestItems[tableName]!, send) as ReturnType<typeof next>;
      },
      { step: "initialize", name: "aroundBatchWrite" },
    );
    return new DynamoIngestStore({ client: c, tableName, retentionMs: RETENTION_MS, now: () => NOW });
  }
  const storedOf = async (records: RecordItem[]) => {
    const pks = new Set(records.map((r) => r.pk));
    return (await scanTable(DynamoDBDocumentClient.from(client), tableName)).filter((i) => pks.has(String(i.pk)));
  };

  it("an item too large for DynamoDB even compressed is refused alone: the others of its batch are stored", async () => {
    const store = new DynamoIngestStore({ client, tableName, retentionMs: RETENTION_MS, now: () => NOW });
    // Random text compresses little: 530 KB of it is past an item's 400 KB in a batch too.
    const records = Array.from({ length: 30 }, (_, i) => logEntry(i === 3 ? randomBytes(400 * 1024).toString("base64") : `line ${i}`));
    const refused = await store.insertRecords(records);
    expect(refused.map((r) => r.record.pk)).toEqual([records[3]!.pk]);
    expect(refused[0]!.error).toBeInstanceOf(RecordUnwritable);
    expect((await storedOf(records)).map((i) => i.pk).sort()).toEqual(records.filter((_, i) => i !== 3).map((r) => r.pk).sort());
  });

  it("a record over 400 KB that compresses is stored in its batch, whole, and read back the same", async () => {
    const store = new DynamoIngestStore({ client, tableName, retentionMs: RETENTION_MS, now: () => NOW });
    const records = Array.from({ length: 5 }, (_, i) => logEntry(i === 2 ? "x".repeat(410 * 1024) : `line ${i}`));
    expect(await store.insertRecords(records)).toEqual([]);
    const back = expandRecords(await scanTable(DynamoDBDocumentClient.from(client), tableName)).filter((i) => i.pk === records[2]!.pk);
    expect(back).toEqual([{ ...records[2], expires_at: store.expiresAt() }]);
  });

  it("asks again for what DynamoDB leaves unprocessed, until every record is stored", async () => {
    let requests = 0;
    const store = storeWith(async (items, send) => {
      requests++;
      // Every other request: only the first two items are processed, the rest handed back.
      if (requests % 2 === 0 || items.length <= 2) return send(items);
      const res = (await send(items.slice(0, 2))) as { output: Record<string, unknown> };
      return { ...res, output: { ...res.output, UnprocessedItems: { [tableName]: items.slice(2) } } };
    });
    const records = Array.from({ length: 40 }, (_, i) => logEntry(`line ${i}`));
    expect(await store.insertRecords(records)).toEqual([]);
    expect(requests).toBeGreaterThan(2);
    expect(await storedOf(records)).toHaveLength(40);
  });

  it("a passing error (throttling) refuses each record of the batch it hit, and no other", async () => {
    const records = Array.from({ length: 30 }, (_, i) => logEntry(`line ${i}`));
    const store = storeWith(async (items, send) => {
      if (items.some((w) => w.PutRequest.Item.pk === records[27]!.pk)) {
        throw new ProvisionedThroughputExceededException({ message: "Rate of requests exceeds the allowed throughput.", $metadata: { httpStatusCode: 400 } });
      }
      return send(items);
    });
    const refused = await store.insertRecords(records);
    expect(refused.map((r) => r.record.pk).sort()).toEqual(records.slice(25).map((r) => r.pk).sort());
    expect(refused.every((r) => r.error instanceof ProvisionedThroughputExceededException && !(r.error instanceof RecordUnwritable))).toBe(true);
    expect((await storedOf(records)).map((i) => i.pk).sort()).toEqual(records.slice(0, 25).map((r) => r.pk).sort());
  });
});
