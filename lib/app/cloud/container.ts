/** What every deployed function builds once per container (its cold start): the table, the log port. */
import type { Logger } from "@aws-lambda-powertools/logger";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { Log } from "../../model/log.js";
import { requiredEnv } from "../env.js";
import type { Adapters } from "../ingest.js";

/**
 * Builds on the first call and hands every later call the same result; a build that failed is tried
 * again on the next invocation (a passing SSM or DynamoDB error must not wedge the container).
 */
export function coldStart<A extends unknown[], T>(build: (...args: A) => Promise<T> | T): (...args: A) => Promise<T> {
  let built: Promise<T> | undefined;
  return (...args) => {
    built ??= Promise.resolve().then(() => build(...args)).catch((err: unknown) => {
      built = undefined;
      throw err;
    });
    return built;
  };
}

/**
 * The Slack Web API's base URL: Slack's own unless LOOKOUT_SLACK_API_URL names another, as
 * AWS_ENDPOINT_URL does for AWS (docs/cloud-local.md: the rehearsal points it at its local Slack).
 */
export const cloudSlackApiUrl = (env: NodeJS.ProcessEnv = process.env): { slackApiUrl?: string } =>
  env.LOOKOUT_SLACK_API_URL ? { slackApiUrl: env.LOOKOUT_SLACK_API_URL } : {};

/** The table named by TABLE_NAME (serverless.yml), through one client. */
export function cloudTable(): { dynamodb: DynamoDBClient; tableName: string } {
  return { dynamodb: new DynamoDBClient({}), tableName: requiredEnv("TABLE_NAME") };
}

/** The cloud's adapters for the compositions (lib/app/ingest.ts, lib/app/notify.ts): the table, secrets, the function's logger. */
export const cloudAdapters = (logger: Logger, resolveSecret: (ref: string) => Promise<string>): Adapters => ({
  ...cloudTable(),
  resolveSecret,
  log: asLog(logger),
});

/** Powertools' Logger as the stages' `Log` port. */
export function asLog(logger: Logger): Log {
  return {
    info: (m, extra) => (extra ? logger.info(m, extra) : logger.info(m)),
    warn: (m, extra) => (extra ? logger.warn(m, extra) : logger.warn(m)),
    error: (m, extra) => (extra ? logger.error(m, extra) : logger.error(m)),
  };
}
