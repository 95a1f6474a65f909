/**
 * One DynamoDB Local for the whole test run (each test file makes its own table), started here and
 * handed to the files by vitest's provide/inject; and one temporary directory for the run, which every
 * file's `mkdtemp(tmpdir())` lands in (TMPDIR, inherited by the workers and what they start) and which
 * is removed when the run ends, failed or not: tests leave nothing behind in the system's temporary directory.
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

export default async function setup(project: TestProject) {
  const runTmp = mkdtempSync(join(tmpdir(), "lookout-tests-"));
  // Others may enter it, as they may /tmp (a test runs a command as an unprivileged user); none may write.
  chmodSync(runTmp, 0o755);
  process.env.TMPDIR = runTmp;
  const removeTmp = () => rmSync(runTmp, { recursive: true, force: true });
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
