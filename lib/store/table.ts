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
  type TableDescription,
  UpdateTimeToLiveCommand,
} from "@aws-sdk/client-dynamodb";
import { AUDIT_FILTERS, AUDIT_SLOTS, AUDIT_SORT, INDEXED_SLOTS, auditIndexName } from "../model/audit-index.js";
import { TTL_ATTRIBUTE } from "../model/items.js";

export interface IndexDef {
  name: string;
  pk: string;
  sk: string;
  /** Non-key attributes copied into the index (INCLUDE projection); every attribute when absent. */
  include?: string[];
}

const SLOT_ATTRS: string[] = Object.values(AUDIT_SLOTS);

/**
 * Secondary indexes, keyed by strings. They project only the row's filtered fields and the other slots'
 * keys (for filters), not whole items nor rows: a GSI entry is billed, stored and written, by its size,
 * and the reader fetches a page's rows from their items (docs/audit.md, "Lean index entries").
 */
export const INDEXES: IndexDef[] = INDEXED_SLOTS.map((slot) => ({
  name: auditIndexName(slot),
  pk: AUDIT_SLOTS[slot],
  sk: AUDIT_SORT,
  include: [AUDIT_FILTERS, ...SLOT_ATTRS.filter((a) => a !== AUDIT_SLOTS[slot])],
}));

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
            Projection: i.include ? { ProjectionType: "INCLUDE", NonKeyAttributes: i.include } : { ProjectionType: "ALL" },
          })),
        }
      : {}),
  };
}

/** Creates the table if it does not exist, and waits until it is active. */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  await ensureTableFrom(client, tableDefinition(tableName), TTL_ATTRIBUTE);
}

/**
 * Creates a table from its definition (with its TTL) if it does not exist, and waits until it is
 * active: the table as it is then.
 */
export async function ensureTableFrom(client: DynamoDBClient, input: CreateTableCommandInput, ttlAttribute?: string): Promise<TableDescription> {
  const tableName = input.TableName!;
  try {
    await client.send(new CreateTableCommand(input));
    if (ttlAttribute) {
      await client.send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { Enabled: true, AttributeName: ttlAttribute } }));
    }
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err;
  }
  for (let i = 0; i < 100; i++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === "ACTIVE") return Table;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`DynamoDB table ${tableName} did not become active`);
}

/** How a table differs from its definition in what queries rely on: keys, indexes (keys and projections), stream. */
export function tableDifferences(table: TableDescription, want: CreateTableCommandInput): string[] {
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  const out: string[] = [];
  if (!same(table.KeySchema, want.KeySchema)) out.push("its key schema");
  const indexes = new Map((table.GlobalSecondaryIndexes ?? []).map((i) => [i.IndexName, i]));
  for (const i of want.GlobalSecondaryIndexes ?? []) {
    const have = indexes.get(i.IndexName);
    if (!have) out.push(`index ${i.IndexName} is missing`);
    else if (!same(have.KeySchema, i.KeySchema) || !same(have.Projection, i.Projection)) out.push(`index ${i.IndexName} has other keys or projection`);
    indexes.delete(i.IndexName);
  }
  for (const name of indexes.keys()) out.push(`index ${name} is not in the definition`);
  const stream = want.StreamSpecification?.StreamEnabled ? want.StreamSpecification.StreamViewType : undefined;
  const hasStream = table.StreamSpecification?.StreamEnabled ? table.StreamSpecification.StreamViewType : undefined;
  if (stream !== hasStream) out.push(`its stream is ${hasStream ?? "off"}, not ${stream ?? "off"}`);
  return out;
}
