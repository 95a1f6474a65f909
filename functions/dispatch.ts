/** Lambda, every minute (EventBridge Scheduler): plans the polls within the request budget and queues them (lib/app/lambda/dispatch.ts). */
import { cloudIngest } from "../lib/app/cloud/ingest.js";
import { cloudPollQueue } from "../lib/app/cloud/queue.js";
import { cloudQueueGauge } from "../lib/app/cloud/queue-gauge.js";
import { createDispatchHandler, dispatchDeps } from "../lib/app/lambda/dispatch.js";
import { telemetry } from "../lib/app/lambda/telemetry.js";

const t = telemetry("dispatch");

export const handler = createDispatchHandler(
  async () => dispatchDeps(await cloudIngest(t.logger), await cloudPollQueue(), await cloudQueueGauge()),
  t,
);
