/**
 * The Slack actions function's services in the cloud: the packaged configuration's signing secret,
 * the action ports on the table, the Slack sender, and an asynchronous invocation of itself
 * (AWS_LAMBDA_FUNCTION_NAME, which Lambda sets) for acting after Slack has its answer.
 */
import type { Logger } from "@aws-lambda-powertools/logger";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { slackSender } from "../../notify/slack/send.js";
import { composeActions } from "../actions.js";
import type { SlackActionsDeps } from "../lambda/slack-actions.js";
import { requiredEnv } from "../env.js";
import { packagedConfig } from "./config.js";
import { cloudAdapters, cloudSlackApiUrl, coldStart } from "./container.js";
import { invokeAsync } from "./invoke.js";
import { cloudSecret } from "./secrets.js";

export const cloudSlackActions = coldStart(async (logger: Logger): Promise<SlackActionsDeps> => {
  const config = await packagedConfig();
  const ref = config.notify.slackActions?.signingSecretRef;
  const lambda = new LambdaClient({});
  const self = requiredEnv("AWS_LAMBDA_FUNCTION_NAME");
  return {
    signingSecret: ref ? await cloudSecret(ref) : undefined,
    ports: composeActions(config, { ...cloudAdapters(logger, cloudSecret), slack: slackSender(cloudSlackApiUrl()) }),
    async later(event) {
      const why = await invokeAsync(lambda, self, event);
      // Slack gets a 500 and shows the person that the click failed: better than a click that did nothing.
      if (why) throw new Error(`the click could not be handed on: ${why}`);
    },
  };
});
