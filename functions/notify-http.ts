/** Lambda, SQS (the routes' HTTP queue): delivers to the routes' PagerDuty, webhook and Teams receivers, once each (lib/app/lambda/notify.ts). */
import { cloudHttpNotify } from "../lib/app/cloud/http.js";
import { createNotifyHandler } from "../lib/app/lambda/notify.js";
import { telemetry } from "../lib/app/lambda/telemetry.js";

const t = telemetry("notify-http");

export const handler = createNotifyHandler("http", () => cloudHttpNotify(t.logger), t);
