/** Lambda, invoked by dispatch (asynchronously, a batch of polls): polls the sources at once (lib/app/lambda/poll.ts). */
import { cloudIngest } from "../lib/app/cloud/ingest.js";
import { createPollHandler, pollHandlerDeps } from "../lib/app/lambda/poll.js";
import { telemetry } from "../lib/app/lambda/telemetry.js";

const t = telemetry("poll");

export const handler = createPollHandler(async () => pollHandlerDeps(await cloudIngest(t.logger)), t);
