/** Acting on a click in the cloud (lib/app/cloud/slack-actions.ts loads this on the first): the table, Slack, the secrets its receivers name. */
import type { Logger } from "@aws-lambda-powertools/logger";
import type { ActionPorts } from "../../actions/act.js";
import type { Config } from "../../config/load.js";
import { slackSender } from "../../notify/slack/sender.js";
import { composeActions } from "../actions.js";
import { cloudSlackApiUrl } from "./container.js";
import { cloudSecret } from "./secrets.js";
import { cloudAdapters } from "./adapters.js";

export const cloudActionPorts = (config: Config, logger: Logger): ActionPorts =>
  composeActions(config, { ...cloudAdapters(logger, cloudSecret), slack: slackSender(cloudSlackApiUrl()) });
