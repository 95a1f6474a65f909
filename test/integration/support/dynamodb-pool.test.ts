/**
 * The tests' databases (test/support/dynamodb-pool.ts): each lease of the run's DynamoDB Local is a
 * database nobody else sees, whatever credentials or region its clients sign with.
 */
import { describe, expect, it } from "vitest";
import { CreateTableCommand, DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { dynamodbEndpoint, leaseDatabase, localDynamoClient } from "../../support/dynamodb.js";
import { withAccessKey } from "../../support/dynamodb-pool.js";

const tables = async (client: DynamoDBClient) => (await client.send(new ListTablesCommand({}))).TableNames ?? [];

describe("a leased database", () => {
  it("holds what its clients made, and nothing of another lease's", async () => {
    const [a, b] = await Promise.all([leaseDatabase(), leaseDatabase()]);
    expect(new Set([a, b, dynamodbEndpoint()]).size).toBe(3);
    await localDynamoClient(a).send(new CreateTableCommand({
      TableName: "pool-a", BillingMode: "PAY_PER_REQUEST",
      AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }], KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
    }));
    expect(await tables(localDynamoClient(a))).toEqual(["pool-a"]);
    expect(await tables(localDynamoClient(b))).toEqual([]);
    expect(await tables(localDynamoClient())).not.toContain("pool-a");
    // Another identity and region through the same lease (Lookout in a child process signs as it likes): the same database.
    const other = new DynamoDBClient({ endpoint: a, region: "eu-west-1", credentials: { accessKeyId: "someone-else", secretAccessKey: "x" } });
    expect(await tables(other)).toEqual(["pool-a"]);
  });

  it("is told apart by the access key in the request's signature", () => {
    const signed = "AWS4-HMAC-SHA256 Credential=local/20261127/eu-west-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc";
    expect(withAccessKey(signed, "lease7")).toBe("AWS4-HMAC-SHA256 Credential=lease7/20261127/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc");
  });
});
