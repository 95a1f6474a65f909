/** Lambda, a message of its own SQS delay loop every ten seconds: reads the change feed and polls what it names at once (lib/app/lambda/feed-tick.ts). */
import { cloudIngest } from "../lib/app/cloud/ingest.js";
import { cloudFeedLoopQueue } from "../lib/app/cloud/feed-loop-queue.js";
import { createFeedTickHandler, feedTickDeps } from "../lib/app/lambda/feed-tick.js";
import { telemetry } from "../lib/app/lambda/telemetry.js";

const t = telemetry("feed-tick");

export const handler = createFeedTickHandler(async () => feedTickDeps(await cloudIngest(t.logger), cloudFeedLoopQueue()), t);
