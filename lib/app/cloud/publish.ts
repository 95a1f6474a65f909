/** The publish function's bus (EVENT_BUS_NAME) and quarantine, in the cloud. */
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { eventBridgeBus } from "../../alerts/bus.js";
import type { QuarantinePort } from "../../model/quarantine.js";
import type { PublishHandlerDeps } from "../lambda/publish.js";
import { quarantinePort } from "../quarantine.js";
import { requiredEnv } from "../env.js";
import { packagedConfig } from "./config.js";
import { cloudTable, coldStart } from "./container.js";

/**
 * The configuration (for the retention) is read when an alert is first quarantined, not at every cold
 * start; if that fails, the batch is retried.
 */
function lazyQuarantine(): QuarantinePort {
  let port: QuarantinePort | undefined;
  const open = () => (port ??= quarantinePort(packagedConfig(), cloudTable()));
  return { quarantine: (write) => open().quarantine(write), expiresAt: () => open().expiresAt() };
}

/** Built on the first invocation: without EVENT_BUS_NAME the function refuses to run. */
export const cloudPublish = coldStart((): PublishHandlerDeps => ({
  bus: eventBridgeBus(new EventBridgeClient({}), requiredEnv("EVENT_BUS_NAME")),
  quarantine: lazyQuarantine(),
}));
