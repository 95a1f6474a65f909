/**
 * The integration project's DynamoDB Local: one for the whole run, in which each test file (and each
 * model sequence) leases a database of its own (test/support/dynamodb-pool.ts, through vitest's
 * provide/inject). The unit project starts none (vitest.config.ts). Listed after test/support/run-tmp.ts,
 * so that it and everything after it run in the run's temporary directory. Every DynamoDB Local a test
 * starts (this one, a file's own, the CLI's) runs with JVM_QUICK.
 */
import type { TestProject } from "vitest/node";
import { startDynamoDbLocal } from "../../local/runtime/dynamodb-local.js";
import { startDynamoDbPool } from "./dynamodb-pool.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** Where a file leases a database of its own (test/support/dynamodb.ts). */
    dynamodbPool: string;
  }
}

/**
 * A test run's DynamoDB Local lives minutes and mostly answers small requests: the JIT's optimising tier
 * (C2) costs it more CPU than it ever wins back (about half its CPU in the receivers model; the same on
 * bulk writes), and the serial collector spares the parallel one's threads. The java launcher reads
 * JDK_JAVA_OPTIONS; the workers and what they start inherit it, and DDB_LOCAL_TELEMETRY (nothing sent).
 */
const JVM_QUICK = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC";

export default async function setup(project: TestProject) {
  process.env.JDK_JAVA_OPTIONS = [process.env.JDK_JAVA_OPTIONS, JVM_QUICK].filter(Boolean).join(" ");
  process.env.DDB_LOCAL_TELEMETRY = "0";
  // An external one (DYNAMODB_ENDPOINT) keeps the files apart too when it runs without -sharedDb.
  const ddb = process.env.DYNAMODB_ENDPOINT ? undefined : await startDynamoDbLocal({ sharedDb: false });
  const pool = await startDynamoDbPool(process.env.DYNAMODB_ENDPOINT ?? ddb!.endpoint);
  project.provide("dynamodbPool", pool.url);
  return async () => {
    await pool.close();
    await ddb?.stop();
  };
}
