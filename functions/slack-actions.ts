/** Lambda, Slack's interactivity endpoint (POST /slack/actions, signed by Slack): acknowledge and mute from the message (lib/app/lambda/slack-actions.ts). */
import { cloudSlackActions } from "../lib/app/cloud/slack-actions.js";
import { createSlackActionsHandler } from "../lib/app/lambda/slack-actions.js";
import { loggerOr } from "../lib/app/lambda/telemetry.js";

// A Logger only: the function counts nothing of its own.
const logger = loggerOr("slack-actions");

export const handler = createSlackActionsHandler(() => cloudSlackActions(logger), { logger });
