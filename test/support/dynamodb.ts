/** A fresh table on the run's DynamoDB Local, for one test file. */
import { inject } from "vitest";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { randomUUID } from "node:crypto";
import { LOCAL_CREDENTIALS, LOCAL_REGION, startDynamoDbLocal, type DynamoDbLocal } from "../../local/dynamodb-local.js";
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
 * A table on a DynamoDB Local of the test's own, for the heavy tests (load, hostile pages): the run's
 * shared one slows as every file fills it, which made those tests three times slower late in a run.
 */
export async function ownTable(prefix: string): Promise<{ client: DynamoDBClient; tableName: string; ddb: DynamoDbLocal }> {
  const ddb = await startDynamoDbLocal({ readyTimeoutMs: 120_000 });
  const client = new DynamoDBClient({ endpoint: ddb.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const tableName = `${prefix}-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, tableName);
  return { client, tableName, ddb };
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
