/** Lambda, SQS (the routes' email queue): delivers to the routes' email receivers through SES v2 (lib/app/lambda/notify.ts). */
import { cloudEmailNotify } from "../lib/app/cloud/email.js";
import { createNotifyHandler } from "../lib/app/lambda/notify.js";
import { telemetry } from "../lib/app/lambda/telemetry.js";

const t = telemetry("notify-email");

export const handler = createNotifyHandler("email", () => cloudEmailNotify(t.logger), t);
