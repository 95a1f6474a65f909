/** Lambda, SQS (the routes' Slack queue): delivers to the route's Slack receivers. */
import { Logger } from "@aws-lambda-powertools/logger";
import { createNotifyHandler } from "./notify.js";
import { notifyRuntime } from "./notify-runtime.js";

export const handler = createNotifyHandler("slack", () => notifyRuntime(new Logger({ serviceName: "lookout-notify-slack" })));
