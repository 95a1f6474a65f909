/** A fresh table on the run's DynamoDB Local, for one test file. */
import { inject } from "vitest";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { randomUUID } from "node:crypto";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../local/dynamodb-local.js";
import { ensureTable } from "../../lib/store/table.js";

export function localDynamoClient(): DynamoDBClient {
  return new DynamoDBClient({ endpoint: inject("dynamodbEndpoint"), region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
}

export async function freshTable(prefix = "lookout-test"): Promise<{ client: DynamoDBClient; tableName: string }> {
  const client = localDynamoClient();
  const tableName = `${prefix}-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, tableName);
  return { client, tableName };
}

/**
 * Retention for stores in tests. Tests run on simulated clocks in the past, and DynamoDB Local enforces
 * TTL: with a short retention their items are born expired and vanish mid-test.
 */
export const TEST_RETENTION_MS = 100 * 365 * 86_400_000;

/** Every item of a table, all pages, consistent: for tests that check what was written (never in lib/). */
export async function scanTable(doc: DynamoDBDocumentClient, tableName: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const res = await doc.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start, ConsistentRead: true }));
    items.push(...(res.Items ?? []));
    start = res.LastEvaluatedKey;
  } while (start);
  return items;
}
