/** Dispatch's services in the cloud: the packaged configuration and the table; no token (lib/app/dispatch.ts). */
import { composeDispatch } from "../dispatch.js";
import { packagedConfig } from "./config.js";
import { coldStart } from "./container.js";
import { cloudTable } from "./adapters.js";

export const cloudDispatch = coldStart(async () => composeDispatch(await packagedConfig(), cloudTable()));
