/**
 * The Slack actions function's services in the cloud: the packaged configuration's signing secret, an
 * asynchronous invocation of itself (AWS_LAMBDA_FUNCTION_NAME, which Lambda sets) for acting after Slack
 * has its answer, and the action ports on the table and Slack for that invocation.
 */
import type { Logger } from "@aws-lambda-powertools/logger";
import type { SlackActionsDeps } from "../lambda/slack-actions.js";
import { requiredEnv } from "../env.js";
import { packagedConfig } from "./config.js";
import { coldStart } from "./container.js";
import { invokeAsync } from "./invoke-async.js";
import { lambda } from "./clients/lambda.js";
import { cloudSecret } from "./secrets.js";

export const cloudSlackActions = coldStart(async (logger: Logger): Promise<SlackActionsDeps> => {
  const config = await packagedConfig();
  const ref = config.notify.slackActions?.signingSecretRef;
  const self = requiredEnv("AWS_LAMBDA_FUNCTION_NAME");
  return {
    signingSecret: ref ? await cloudSecret(ref) : undefined,
    // Only acting on a click (the asynchronous invocation) needs the table and Slack: loaded on the first
    // click acted on (a chunk of its own), so that answering Slack, within its three seconds, loads neither.
    ports: coldStart(async () => (await import("./slack-action-ports.js")).cloudActionPorts(config, logger)),
    async later(event) {
      const why = await invokeAsync(lambda, self, event);
      // Slack gets a 500 and shows the person that the click failed: better than a click that did nothing.
      if (why) throw new Error(`the click could not be handed on: ${why}`);
    },
  };
});
