/** Lambda, SQS (the routes' email queue): delivers to the route's email receivers through SES v2. */
import { Logger } from "@aws-lambda-powertools/logger";
import { createNotifyHandler } from "./notify.js";
import { notifyRuntime } from "./notify-runtime.js";

export const handler = createNotifyHandler("email", () => notifyRuntime(new Logger({ serviceName: "lookout-notify-email" })));
