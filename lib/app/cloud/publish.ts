/** The publish function's bus (EVENT_BUS_NAME) and quarantine, in the cloud. */
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { eventBridgeBus } from "../../alerts/bus.js";
import type { QuarantinePort } from "../../model/quarantine.js";
import type { Config } from "../../config/load.js";
import type { PublishHandlerDeps } from "../lambda/publish.js";
import { quarantinePort } from "../quarantine.js";
import { requiredEnv } from "../env.js";
import { packagedConfig } from "./config.js";
import { cloudTable, coldStart } from "./container.js";

/**
 * The table's client is built when an alert is first quarantined, not at every cold start; the
 * configuration (for the retention) is the packaged one, read at the cold start (a JSON parse).
 */
function lazyQuarantine(config: Config): QuarantinePort {
  let port: QuarantinePort | undefined;
  const open = () => (port ??= quarantinePort(config, cloudTable()));
  return { quarantine: (write) => open().quarantine(write), expiresAt: () => open().expiresAt() };
}

/** Built on the first invocation: without EVENT_BUS_NAME the function refuses to run. */
export const cloudPublish = coldStart(async (): Promise<PublishHandlerDeps> => ({
  bus: eventBridgeBus(new EventBridgeClient({}), requiredEnv("EVENT_BUS_NAME")),
  quarantine: lazyQuarantine(await packagedConfig()),
}));
