/**
 * The composition root of dispatching: the stores dispatch plans with and raises health into, and the
 * watchlist, from the configuration and the environment's table. No platform client and so no token:
 * dispatch never calls the platform (the poll function does). composeIngest (./ingest.ts) builds on it.
 */
import type { Config } from "../config/load.js";
import { DynamoIngestStore } from "../store/ingest-store.js";
import { DynamoDispatchStore, DynamoFeedLoopStore } from "../store/dispatch-store.js";
import { watchlist } from "../dispatch/watchlist.js";
import type { Watchlist } from "../model/dispatch.js";
import type { Adapters } from "./adapters.js";

export interface DispatchServices {
  config: Config;
  /** The records and the outbox (dispatch raises `Lookout Health` alerts into it). */
  store: DynamoIngestStore;
  dispatch: DynamoDispatchStore;
  /** The change feed's loop: its lease and reads (lib/dispatch/feed-loop.ts). */
  loops: DynamoFeedLoopStore;
  watch: Watchlist;
}

export function composeDispatch(config: Config, a: Pick<Adapters, "dynamodb" | "tableName" | "now">): DispatchServices {
  const now = a.now ?? (() => new Date());
  return {
    config,
    store: new DynamoIngestStore({ client: a.dynamodb, tableName: a.tableName, retentionMs: config.retentionMs, routineRetentionMs: config.routineRetentionMs, now }),
    dispatch: new DynamoDispatchStore({ client: a.dynamodb, tableName: a.tableName, retentionMs: config.retentionMs }),
    loops: new DynamoFeedLoopStore({ client: a.dynamodb, tableName: a.tableName, retentionMs: config.retentionMs }),
    watch: watchlist(config),
  };
}
