/** The publish function's bus (EVENT_BUS_NAME) and quarantine, in the cloud. */
import { eventBridgeBus } from "../../alerts/bus.js";
import type { QuarantinePort } from "../../model/quarantine.js";
import type { PublishHandlerDeps } from "../lambda/publish.js";
import { requiredEnv } from "../env.js";
import { packagedConfig } from "./config.js";
import { coldStart } from "./container.js";
import { eventbridge } from "./clients/eventbridge.js";

/**
 * Only an alert no retry can publish is quarantined: the configuration (for the retention), the table's
 * client and its store are loaded when the first is (a chunk of their own, ./quarantine.ts), not at every
 * cold start; if that fails, the batch is retried.
 */
function lazyQuarantine(): QuarantinePort {
  const port = coldStart(async () => (await import("./quarantine.js")).cloudQuarantine(await packagedConfig()));
  return { quarantine: async (write) => (await port()).quarantine(write), expiresAt: async () => (await port()).expiresAt() };
}

/** Built on the first invocation: without EVENT_BUS_NAME the function refuses to run. */
export const cloudPublish = coldStart((): PublishHandlerDeps => ({
  bus: eventBridgeBus(eventbridge, requiredEnv("EVENT_BUS_NAME")),
  quarantine: lazyQuarantine(),
}));
