/**
 * One DynamoDB Local for the whole test run (each test file makes its own table), started here and
 * handed to the files by vitest's provide/inject.
 */
import type { TestProject } from "vitest/node";
import { startDynamoDbLocal } from "../../local/dynamodb-local.js";

declare module "vitest" {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}

export default async function setup(project: TestProject) {
  const external = process.env.DYNAMODB_ENDPOINT;
  if (external) {
    project.provide("dynamodbEndpoint", external);
    return;
  }
  const ddb = await startDynamoDbLocal();
  project.provide("dynamodbEndpoint", ddb.endpoint);
  return () => ddb.stop();
}
