/**
 * DynamoDB for the tests: each test file has a database of its own on the run's DynamoDB Local
 * (test/support/dynamodb-pool.ts), leased before the file loads (test/support/dynamodb-setup.ts), so that
 * no file slows or sees another's tables; a model-based test leases one per sequence.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { randomUUID } from "node:crypto";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../local/runtime/dynamodb-local.js";
import { ensureTable } from "../../lib/store/table.js";
import { dynamodbEndpoint } from "./dynamodb-lease.js";

export { dynamodbEndpoint, leaseDatabase } from "./dynamodb-lease.js";

export function localDynamoClient(endpoint = dynamodbEndpoint()): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
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
