/**
 * The composition root of polling: the platform client, the stores, the watchlist and the poll deps,
 * from the configuration and the environment's adapters. lib/app/cloud/ingest.ts (DynamoDB, SSM / Secrets
 * Manager) and local/pipeline.ts (DynamoDB Local, env:) both build through here, so every configured
 * fact reaches both. No AWS service beyond DynamoDB is imported: the poll and dispatch bundles stay lean.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { Config } from "../config/load.js";
import { createPlatformClient, type PlatformApi, type PlatformClient } from "../platform/client.js";
import type { CallCost } from "../platform/cost.js";
import { DynamoIngestStore } from "../store/ingest-store.js";
import { DynamoDispatchStore, DynamoFeedLoopStore } from "../store/dispatch-store.js";
import { watchlist } from "../ingest/watchlist.js";
import type { Watchlist } from "../model/dispatch.js";
import type { Log } from "../model/log.js";
import type { PollDeps } from "../ingest/poll.js";
import { spareRequestsOf } from "../ingest/spare-requests.js";
import { DISPATCH_NAME } from "../ingest/cycle.js";
import { configuredClusterNames, configuredContexts, configuredOrganizationNames } from "./context.js";

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

export interface IngestServices {
  config: Config;
  client: PlatformClient & PlatformApi;
  store: DynamoIngestStore;
  dispatch: DynamoDispatchStore;
  /** The change feed's loop: its lease and reads (lib/ingest/feed-loop.ts). */
  loops: DynamoFeedLoopStore;
  watch: Watchlist;
  pollDeps: PollDeps;
}

export async function composeIngest(config: Config, a: Adapters): Promise<IngestServices> {
  const now = a.now ?? (() => new Date());
  const token = await a.resolveSecret(config.platform.tokenRef);
  const client = createPlatformClient({
    baseUrl: config.platform.url,
    token,
    auth: config.platform.auth,
    timeoutMs: config.platform.timeoutMs,
    maxResponseBytes: config.platform.maxResponseBytes,
    ...(a.onCost ? { onCost: a.onCost } : {}),
  });
  const store = new DynamoIngestStore({ client: a.dynamodb, tableName: a.tableName, retentionMs: config.retentionMs, routineRetentionMs: config.routineRetentionMs, now });
  const dispatch = new DynamoDispatchStore({ client: a.dynamodb, tableName: a.tableName, retentionMs: config.retentionMs });
  return {
    config,
    client,
    store,
    dispatch,
    loops: new DynamoFeedLoopStore({ client: a.dynamodb, tableName: a.tableName, retentionMs: config.retentionMs }),
    watch: watchlist(config),
    pollDeps: {
      client,
      store,
      now,
      backfillWindowMs: config.backfillWindowMs,
      clusterQuietMs: config.incidents.clusterQuietMs,
      configured: configuredContexts(config),
      clusterNames: configuredClusterNames(config),
      organizationNames: configuredOrganizationNames(config),
      log: a.log,
      spare: spareRequestsOf(dispatch, DISPATCH_NAME, () => now().getTime()),
    },
  };
}
