/**
 * The audit trail's reads on DynamoDB (the port: lib/model/audit-items.ts): Query on an audit index
 * (never a Scan), GetItem, BatchGetItem, Query on a partition. Read-only.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { BatchGetCommand, type BatchGetCommandInput, type BatchGetCommandOutput, DynamoDBDocumentClient, GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import pMap from "p-map";
import { itemKeyString, TTL_ATTRIBUTE } from "../model/items.js";
import { fullJitterMs, UNPROCESSED_BACKOFF } from "../model/backoff.js";
import { AUDIT_FILTERS, AUDIT_ROW, AUDIT_SLOTS, AUDIT_SORT } from "../model/audit-index.js";
import type { AuditItems, IndexRead, ItemKey, StoredItem } from "../model/audit-items.js";
import { BATCH_ROWS } from "./routine-batches.js";

export interface DynamoAuditItemsOptions {
  client: DynamoDBClient;
  tableName: string;
}

/** BatchGetItem requests in flight at once. */
const GETS_IN_FLIGHT = 8;
/** BatchGetItem requests for one group of keys before what it leaves unprocessed fails the query. */
const BATCH_GET_ROUNDS = 10;

export class DynamoAuditItems implements AuditItems {
  private readonly doc: DynamoDBDocumentClient;
  private readonly table: string;

  constructor(opts: DynamoAuditItemsOptions) {
    this.doc = DynamoDBDocumentClient.from(opts.client, { marshallOptions: { removeUndefinedValues: true } });
    this.table = opts.tableName;
  }

  async queryIndex(read: IndexRead): Promise<{ items: StoredItem[]; last?: StoredItem }> {
    const res = await this.doc.send(new QueryCommand({
      TableName: this.table,
      IndexName: read.index,
      KeyConditionExpression: read.key.expression,
      ...(read.filter ? { FilterExpression: read.filter.expression } : {}),
      ExpressionAttributeNames: { ...read.key.names, ...read.filter?.names },
      ExpressionAttributeValues: { ...read.key.values, ...read.filter?.values },
      ScanIndexForward: false,
      Limit: read.limit,
      ExclusiveStartKey: read.start,
    }));
    return { items: (res.Items ?? []) as StoredItem[], ...(res.LastEvaluatedKey ? { last: res.LastEvaluatedKey as StoredItem } : {}) };
  }

  /** BatchGetItem, 100 keys a request, what it leaves unprocessed asked again with backoff. */
  async rowItems(keyList: ItemKey[]): Promise<Map<string, StoredItem>> {
    const out = new Map<string, StoredItem>();
    const unique = [...new Map(keyList.map((k): [string, ItemKey] => [itemKeyString(k), { pk: String(k.pk), sk: String(k.sk) }])).values()];
    const groups = Array.from({ length: Math.ceil(unique.length / 100) }, (_, i) => unique.slice(i * 100, i * 100 + 100));
    await pMap(groups, async (group) => {
      let request: BatchGetCommandInput["RequestItems"] = { [this.table]: { Keys: group, ...ROW_PROJECTION } };
      // BatchGet may answer part of the keys (its 16 MB limit, throttling): ask again for the rest.
      for (let round = 0; request && Object.keys(request).length; round++) {
        if (round === BATCH_GET_ROUNDS) {
          const left = request[this.table]?.Keys?.length ?? 0;
          throw new Error(`${left} of ${group.length} items of table ${this.table} were still unread after ${BATCH_GET_ROUNDS} BatchGetItem requests (throttled or over its 16 MB): try the query again`);
        }
        if (round) await new Promise((r) => setTimeout(r, fullJitterMs(round, UNPROCESSED_BACKOFF, Math.random)));
        const res: BatchGetCommandOutput = await this.doc.send(new BatchGetCommand({ RequestItems: request }));
        for (const item of res.Responses?.[this.table] ?? []) out.set(itemKeyString(item), item);
        request = res.UnprocessedKeys;
      }
    }, { concurrency: GETS_IN_FLIGHT });
    return out;
  }

  async get(key: ItemKey): Promise<StoredItem | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: key }));
    return Item as StoredItem | undefined;
  }

  async partition(pk: string): Promise<StoredItem[]> {
    const out: StoredItem[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const res = await this.doc.send(new QueryCommand({
        TableName: this.table, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": pk }, ExclusiveStartKey: start,
      }));
      out.push(...((res.Items ?? []) as StoredItem[]));
      start = res.LastEvaluatedKey;
    } while (start);
    return out;
  }
}

/**
 * What the reader needs of an item it reads by key: a row, or a batch's rows and shared attributes —
 * not an execution's state nor a record as read, which are most of an item's bytes.
 */
const ROW_ATTRIBUTES = ["pk", "sk", AUDIT_ROW, AUDIT_FILTERS, AUDIT_SORT, BATCH_ROWS, TTL_ATTRIBUTE, ...Object.values(AUDIT_SLOTS)];
const ROW_PROJECTION = {
  ProjectionExpression: ROW_ATTRIBUTES.map((_, i) => `#p${i}`).join(", "),
  ExpressionAttributeNames: Object.fromEntries(ROW_ATTRIBUTES.map((a, i) => [`#p${i}`, a])),
};
