/** The table a deployed function works on, and the adapters the compositions take with it. */
import type { Logger } from "@aws-lambda-powertools/logger";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { dynamodb } from "./clients/dynamodb.js";
import { requiredEnv } from "../env.js";
import type { Adapters } from "../adapters.js";
import { asLog } from "./container.js";

/** The table named by TABLE_NAME (serverless.yml), through the container's client. */
export function cloudTable(): { dynamodb: DynamoDBClient; tableName: string } {
  return { dynamodb, tableName: requiredEnv("TABLE_NAME") };
}

/** The cloud's adapters for the compositions (lib/app/ingest.ts, lib/app/notify.ts): the table, secrets, the function's logger. */
export const cloudAdapters = (logger: Logger, resolveSecret: (ref: string) => Promise<string>): Adapters => ({
  ...cloudTable(),
  resolveSecret,
  log: asLog(logger),
});
