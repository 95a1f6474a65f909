/** The environment's adapters every composition builds on (./ingest.ts, ./dispatch.ts, ./notify.ts, ./actions.ts). */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { CallCost } from "../platform/cost.js";
import type { Log } from "../model/log.js";

/** What differs between the cloud and one machine. */
export interface Adapters {
  dynamodb: DynamoDBClient;
  tableName: string;
  /** A secret reference → the secret: env: on one machine; also ssm: and secretsmanager: in the cloud. */
  resolveSecret(ref: string): Promise<string>;
  log: Log;
  now?: () => Date;
  /** Told the cost of every platform call (the live view's budget line). */
  onCost?: (cost: CallCost) => void;
}
