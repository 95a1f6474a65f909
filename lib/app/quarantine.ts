/** Where an alert no retry can publish is set aside: the table, for the configured retention (docs/audit.md, "Quarantine"). */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { Config } from "../config/load.js";
import { DynamoQuarantine } from "../store/quarantine.js";
import type { QuarantinePort } from "../model/quarantine.js";

export function quarantinePort(config: Pick<Config, "retentionMs">, a: { dynamodb: DynamoDBClient; tableName: string; now?: () => Date }): QuarantinePort {
  return new DynamoQuarantine({ client: a.dynamodb, tableName: a.tableName, retentionMs: config.retentionMs, ...(a.now ? { now: a.now } : {}) });
}
