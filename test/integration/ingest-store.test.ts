/** The DynamoDB IngestStore against the port's contract (test/support/ingest-store-contract.ts). */
import { beforeAll } from "vitest";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { DynamoIngestStore } from "../../lib/store/ingest-store.js";
import { freshTable, scanTable } from "../support/dynamodb.js";
import { NOW, RETENTION_MS, ingestStoreContract } from "../support/ingest-store-contract.js";

let client: DynamoDBClient;
let tableName: string;
beforeAll(async () => {
  ({ client, tableName } = await freshTable("lookout-ingest-store"));
});

ingestStoreContract("DynamoDB Local", () => ({
  store: new DynamoIngestStore({ client, tableName, retentionMs: RETENTION_MS, now: () => NOW }),
  scan: () => scanTable(DynamoDBDocumentClient.from(client), tableName),
}));
