/**
 * The tests' databases (test/support/dynamodb-pool.ts): each lease of the run's DynamoDB Local is a
 * database nobody else sees, whatever credentials or region its clients sign with.
 */
import { describe, expect, it } from "vitest";
import { CreateTableCommand, DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { dynamodbEndpoint, leaseDatabase, localDynamoClient } from "../../support/dynamodb.js";
import { requestRewriter, withAccessKey } from "../../support/dynamodb-pool.js";

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

  it("passes each request on with the lease's key, its body untouched, however the bytes are cut", () => {
    const body = (text: string) => `POST / HTTP/1.1\r\nhost: x\r\nAuthorization: AWS4-HMAC-SHA256 Credential=local/20261127/eu-west-1/dynamodb/aws4_request, Signature=abc\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
    // Two requests on one connection; the second's body quotes a header, which stays as it is.
    const sent = body('{"TableName":"t"}') + body('{"note":"\r\nAuthorization: Credential=local/20261127/eu-west-1/x"}');
    const want = sent.replaceAll("Authorization: AWS4-HMAC-SHA256 Credential=local/20261127/eu-west-1/", "Authorization: AWS4-HMAC-SHA256 Credential=lease7/20261127/us-east-1/");
    expect(want).not.toBe(sent);
    for (const cut of [1, 7, 64, sent.length]) {
      const rewrite = requestRewriter("lease7");
      let out = "";
      for (let i = 0; i < sent.length; i += cut) {
        const got = rewrite(Buffer.from(sent.slice(i, i + cut), "latin1"));
        if ("refuse" in got) throw new Error(got.refuse);
        out += Buffer.concat(got).toString("latin1");
      }
      expect(out, `cut every ${cut} bytes`).toBe(want);
    }
    expect(requestRewriter("lease7")(Buffer.from("POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n"))).toEqual({ refuse: expect.stringMatching(/chunks/) });
  });

  it("is told apart by the access key in the request's signature", () => {
    const signed = "AWS4-HMAC-SHA256 Credential=local/20261127/eu-west-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc";
    expect(withAccessKey(signed, "lease7")).toBe("AWS4-HMAC-SHA256 Credential=lease7/20261127/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc");
  });
});
