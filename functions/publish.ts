/** Lambda, the table's DynamoDB stream (the outbox) → the Lookout bus, with partial batch failures (lib/app/lambda/publish.ts). */
import { cloudPublish } from "../lib/app/cloud/publish.js";
import { createPublishHandler } from "../lib/app/lambda/publish.js";
import { telemetry } from "../lib/app/lambda/telemetry.js";

export const handler = createPublishHandler(cloudPublish, telemetry("publish"));
