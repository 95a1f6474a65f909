/** The publish function's quarantine on the table (lib/app/cloud/publish.ts loads this when an alert is first quarantined). */
import type { Config } from "../../config/load.js";
import type { QuarantinePort } from "../../model/quarantine.js";
import { quarantinePort } from "../quarantine.js";
import { cloudTable } from "./adapters.js";

export const cloudQuarantine = (config: Pick<Config, "retentionMs">): QuarantinePort => quarantinePort(config, cloudTable());
