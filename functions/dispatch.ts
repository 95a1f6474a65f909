/** Lambda, every minute (EventBridge Scheduler): plans the polls within the request budget and invokes the poll function with them, and starts the change feed's loop when it is lost (lib/app/lambda/dispatch.ts). */
import { cloudDispatch } from "../lib/app/cloud/dispatch.js";
import { cloudInvokes } from "../lib/app/cloud/invoke.js";
import { cloudQueueGauge } from "../lib/app/cloud/queue-gauge.js";
import { cloudFeedLoopQueue } from "../lib/app/cloud/feed-loop-queue.js";
import { createDispatchHandler, dispatchDeps } from "../lib/app/lambda/dispatch.js";
import { telemetry } from "../lib/app/lambda/telemetry.js";

const t = telemetry("dispatch");

export const handler = createDispatchHandler(async () => {
  const s = await cloudDispatch();
  const { polls, digests } = await cloudInvokes(s.config);
  return dispatchDeps(s, polls, await cloudQueueGauge(), digests, cloudFeedLoopQueue());
}, t);
