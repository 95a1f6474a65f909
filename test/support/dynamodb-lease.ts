/**
 * Leases of the run's DynamoDB Local (test/support/dynamodb-pool.ts): a database nobody else uses. Kept
 * apart from test/support/dynamodb.ts and free of the AWS SDK: every integration test file loads it before
 * it starts (test/support/dynamodb-setup.ts), those that never touch DynamoDB too; unit files lease none.
 */
import { inject } from "vitest";

/** A database nobody else uses: the endpoint that reaches it (for clients, and for Lookout's DYNAMODB_ENDPOINT). */
export async function leaseDatabase(): Promise<string> {
  const res = await fetch(inject("dynamodbPool"), { method: "POST" });
  if (!res.ok) throw new Error(`no database leased from the run's DynamoDB Local: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { endpoint: string }).endpoint;
}

let fileEndpoint: string | undefined;

/** Called once per test file, before it loads (test/support/dynamodb-setup.ts). */
export async function leaseFileDatabase(): Promise<void> {
  fileEndpoint = await leaseDatabase();
}

/** This test file's database. */
export function dynamodbEndpoint(): string {
  if (!fileEndpoint) throw new Error("no database for this file: test/support/dynamodb-setup.ts is not among vitest's setupFiles (the integration project's only: a test that uses DynamoDB Local belongs in test/integration/)");
  return fileEndpoint;
}
