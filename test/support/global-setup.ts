/**
 * One DynamoDB Local for the whole test run, in which each test file (and each model sequence) leases a
 * database of its own (test/support/dynamodb-pool.ts, through vitest's provide/inject); and one temporary
 * directory for the run, which every file's `mkdtemp(tmpdir())` lands in (TMPDIR, inherited by the
 * workers and what they start) and which is removed when the run ends, failed or not: tests leave
 * nothing behind in the system's temporary directory. Every DynamoDB Local a test starts (this one, a
 * file's own, the CLI's) runs with JVM_QUICK.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

interface RunParts {
  pool: string;
  teardown(): Promise<void>;
}

/** Each vitest project calls the global setup (unit, integration): the first one starts the run's parts, the others share them. */
const SHARED = Symbol.for("lookout.tests.run");
type WithRun = typeof globalThis & { [SHARED]?: Promise<RunParts> };

export default async function setup(project: TestProject) {
  const holder = globalThis as WithRun;
  const first = !holder[SHARED];
  holder[SHARED] ??= startRun();
  const run = await holder[SHARED];
  project.provide("dynamodbPool", run.pool);
  return first ? run.teardown : () => undefined;
}

async function startRun(): Promise<RunParts> {
  process.env.JDK_JAVA_OPTIONS = [process.env.JDK_JAVA_OPTIONS, JVM_QUICK].filter(Boolean).join(" ");
  process.env.DDB_LOCAL_TELEMETRY = "0";
  const runTmp = mkdtempSync(join(tmpdir(), "lookout-tests-"));
  // Others may enter it, as they may /tmp (a test runs a command as an unprivileged user); none may write.
  chmodSync(runTmp, 0o755);
  process.env.TMPDIR = runTmp;
  const removeTmp = () => rmSync(runTmp, { recursive: true, force: true });
  // A run stopped by a signal (Ctrl-C, or `npm test` stopping it on a type error) skips the teardown.
  process.once("exit", removeTmp);
  // An external one (DYNAMODB_ENDPOINT) keeps the files apart too when it runs without -sharedDb.
  const ddb = process.env.DYNAMODB_ENDPOINT ? undefined : await startDynamoDbLocal({ sharedDb: false });
  const pool = await startDynamoDbPool(process.env.DYNAMODB_ENDPOINT ?? ddb!.endpoint);
  return {
    pool: pool.url,
    async teardown() {
      await pool.close();
      await ddb?.stop();
      removeTmp();
    },
  };
}
