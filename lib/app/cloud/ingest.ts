/** Dispatch's and poll's services in the cloud: the packaged configuration, the table, the token from SSM or Secrets Manager. */
import type { Logger } from "@aws-lambda-powertools/logger";
import { composeIngest } from "../ingest.js";
import { packagedConfig } from "./config.js";
import { coldStart } from "./container.js";
import { cloudAdapters } from "./adapters.js";
import { cloudSecret } from "./secrets.js";

export const cloudIngest = coldStart(async (logger: Logger) => composeIngest(await packagedConfig(), cloudAdapters(logger, cloudSecret)));
