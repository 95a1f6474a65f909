/**
 * What audit, explain, mute, unmute and mutes read and write: the local store (`data_dir`, or
 * DYNAMODB_ENDPOINT) or, with `--table`, the deployed table (AWS credentials from the environment).
 */
import { existsSync } from "node:fs";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type Config, loadConfigFile } from "../../lib/config/load.js";
import { openLocalStore } from "../runtime/pipeline.js";

export interface StoreTarget {
  config: string;
  /** The deployed table: talk to AWS with the environment's credentials instead of the local store. */
  table?: string;
}

export interface OpenedStore {
  client: DynamoDBClient;
  tableName: string;
  /** The configuration: always with the local store; with --table, when the file is there. */
  config?: Config;
}

export async function withStore<T>(target: StoreTarget, fn: (store: OpenedStore) => Promise<T>): Promise<T> {
  if (target.table) {
    const client = new DynamoDBClient({});
    try {
      // Names in the configuration help resolve a --service name; the deployed table needs no file.
      const config = existsSync(target.config) ? loadConfigFile(target.config) : undefined;
      return await fn({ client, tableName: target.table, ...(config ? { config } : {}) });
    } finally {
      client.destroy();
    }
  }
  const config = loadConfigFile(target.config);
  const local = await openLocalStore(config);
  try {
    return await fn({ client: local.dynamodb, tableName: local.tableName, config });
  } finally {
    await local.close();
  }
}
