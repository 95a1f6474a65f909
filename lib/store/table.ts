/**
 * The one DynamoDB table: its key schema, stream, TTL and indexes. Local runs and tests create it from
 * this definition; infra/ declares the same for the cloud (a test compares the two).
 */
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
} from "@aws-sdk/client-dynamodb";

/** Epoch seconds after which DynamoDB deletes the item (retention). */
export const TTL_ATTRIBUTE = "expires_at";

export interface IndexDef {
  name: string;
  pk: string;
  sk: string;
}

/** Secondary indexes, all keyed by strings and projecting everything (items are small). */
export const INDEXES: IndexDef[] = [];

export function tableDefinition(tableName: string): CreateTableCommandInput {
  const attrs = new Set(["pk", "sk", ...INDEXES.flatMap((i) => [i.pk, i.sk])]);
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST",
    KeySchema: [
      { AttributeName: "pk", KeyType: "HASH" },
      { AttributeName: "sk", KeyType: "RANGE" },
    ],
    AttributeDefinitions: [...attrs].map((name) => ({ AttributeName: name, AttributeType: "S" })),
    // The stream is the outbox: the publisher reads alert items from it (NEW_IMAGE is all it needs).
    StreamSpecification: { StreamEnabled: true, StreamViewType: "NEW_IMAGE" },
    ...(INDEXES.length
      ? {
          GlobalSecondaryIndexes: INDEXES.map((i) => ({
            IndexName: i.name,
            KeySchema: [
              { AttributeName: i.pk, KeyType: "HASH" },
              { AttributeName: i.sk, KeyType: "RANGE" },
            ],
            Projection: { ProjectionType: "ALL" },
          })),
        }
      : {}),
  };
}

/** Creates the table if it does not exist, and waits until it is active. */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(new CreateTableCommand(tableDefinition(tableName)));
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { Enabled: true, AttributeName: TTL_ATTRIBUTE },
      }),
    );
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err;
  }
  for (let i = 0; i < 100; i++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === "ACTIVE") return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`DynamoDB table ${tableName} did not become active`);
}
