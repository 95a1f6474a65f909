/**
 * What every deployed function builds once per container (its cold start), and how: the log port, the
 * Slack API's URL. No AWS SDK client here: the table's is ./adapters.ts, imported only where it is used.
 */
import type { Logger } from "@aws-lambda-powertools/logger";
import type { Log } from "../../model/log.js";
import { onFirstUse } from "../../model/first-use.js";

/**
 * Builds on the first call and hands every later call the same result; a build that failed is tried
 * again on the next invocation (a passing SSM or DynamoDB error must not wedge the container).
 */
export const coldStart = onFirstUse;

/**
 * The Slack Web API's base URL: Slack's own unless LOOKOUT_SLACK_API_URL names another, as
 * AWS_ENDPOINT_URL does for AWS (docs/cloud-local.md: the rehearsal points it at its local Slack).
 */
export const cloudSlackApiUrl = (env: NodeJS.ProcessEnv = process.env): { slackApiUrl?: string } =>
  env.LOOKOUT_SLACK_API_URL ? { slackApiUrl: env.LOOKOUT_SLACK_API_URL } : {};

/** Powertools' Logger as the stages' `Log` port. */
export function asLog(logger: Logger): Log {
  return {
    info: (m, extra) => (extra ? logger.info(m, extra) : logger.info(m)),
    warn: (m, extra) => (extra ? logger.warn(m, extra) : logger.warn(m)),
    error: (m, extra) => (extra ? logger.error(m, extra) : logger.error(m)),
  };
}
