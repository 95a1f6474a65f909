/**
 * One DynamoDB Local for the whole test run (each test file makes its own table), started here and
 * handed to the files by vitest's provide/inject; and one temporary directory for the run, which every
 * file's `mkdtemp(tmpdir())` lands in (TMPDIR, inherited by the workers and what they start) and which
 * is removed when the run ends, failed or not: tests leave nothing behind in the system's temporary directory.
 * Every DynamoDB Local a test starts (this one, a file's own, the CLI's) runs with JVM_QUICK.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startDynamoDbLocal } from "../../local/dynamodb-local.js";

declare module "vitest" {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}

/**
 * A test run's DynamoDB Local lives minutes and mostly answers small requests: the JIT's optimising tier
 * (C2) costs it more CPU than it ever wins back (about half its CPU in the receivers model; the same on
 * bulk writes), and the serial collector spares the parallel one's threads. The java launcher reads
 * JDK_JAVA_OPTIONS; the workers and what they start inherit it.
 */
const JVM_QUICK = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC";

export default async function setup(project: TestProject) {
  process.env.JDK_JAVA_OPTIONS = [process.env.JDK_JAVA_OPTIONS, JVM_QUICK].filter(Boolean).join(" ");
  const runTmp = mkdtempSync(join(tmpdir(), "lookout-tests-"));
  // Others may enter it, as they may /tmp (a test runs a command as an unprivileged user); none may write.
  chmodSync(runTmp, 0o755);
  process.env.TMPDIR = runTmp;
  const removeTmp = () => rmSync(runTmp, { recursive: true, force: true });
  // A run stopped by a signal (Ctrl-C, or `npm test` stopping it on a type error) skips the teardown below.
  process.once("exit", removeTmp);
  const external = process.env.DYNAMODB_ENDPOINT;
  if (external) {
    project.provide("dynamodbEndpoint", external);
    return removeTmp;
  }
  const ddb = await startDynamoDbLocal();
  project.provide("dynamodbEndpoint", ddb.endpoint);
  return async () => {
    await ddb.stop();
    removeTmp();
  };
}
