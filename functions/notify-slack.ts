/** Lambda, SQS (the routes' Slack queue): delivers to the routes' Slack receivers, once each (lib/app/lambda/notify.ts). */
import { cloudSlackNotify } from "../lib/app/cloud/slack.js";
import { createNotifyHandler } from "../lib/app/lambda/notify.js";
import { telemetry } from "../lib/app/lambda/telemetry.js";

const t = telemetry("notify-slack");

export const handler = createNotifyHandler("slack", () => cloudSlackNotify(t.logger), t);
