/** Lambda, Slack's interactivity endpoint (POST /slack/actions, signed by Slack): acknowledge and mute from the message (lib/app/lambda/slack-actions.ts). */
import { cloudSlackActions } from "../lib/app/cloud/slack-actions.js";
import { createSlackActionsHandler } from "../lib/app/lambda/slack-actions.js";
import { telemetry } from "../lib/app/lambda/telemetry.js";

const t = telemetry("slack-actions");

export const handler = createSlackActionsHandler(() => cloudSlackActions(t.logger), t);
