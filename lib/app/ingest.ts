/**
 * The composition root of polling: the platform client, the stores, the watchlist and the poll deps,
 * from the configuration and the environment's adapters. lib/app/cloud/ingest.ts (DynamoDB, SSM / Secrets
 * Manager) and local/runtime/pipeline.ts (DynamoDB Local, env:) both build through here, and the simulated
 * day and the benches build their poll deps with pollDepsOf, so every configured fact reaches them all. No AWS service beyond DynamoDB is imported: the poll bundle stays lean (dispatch's
 * composes ./dispatch.ts alone: no platform client).
 */
import type { Config } from "../config/load.js";
import { createPlatformClient, type PlatformApi, type PlatformClient } from "../platform/client.js";
import type { PollDeps } from "../poll/poll.js";
import { spareRequestsOf } from "../dispatch/spare-requests.js";
import { DISPATCH_NAME } from "../dispatch/source-state.js";
import { configuredClusterNames, configuredContexts, configuredOrganizationNames } from "./context.js";
import type { Adapters } from "./adapters.js";
import { composeDispatch, type DispatchServices } from "./dispatch.js";

export interface IngestServices extends DispatchServices {
  client: PlatformClient & PlatformApi;
  pollDeps: PollDeps;
}

/** What a poll is given that does not come from the configuration. */
export type PollParts = Pick<PollDeps, "client" | "store" | "now" | "log"> & Partial<Pick<PollDeps, "spare" | "onAlert">>;

/** The poll deps: the configuration's facts (backfill, cluster quiet period, names) beside the parts given. */
export function pollDepsOf(config: Pick<Config, "backfillWindowMs" | "incidents" | "watch">, parts: PollParts): PollDeps {
  return {
    ...parts,
    backfillWindowMs: config.backfillWindowMs,
    clusterQuietMs: config.incidents.clusterQuietMs,
    configured: configuredContexts(config),
    clusterNames: configuredClusterNames(config),
    organizationNames: configuredOrganizationNames(config),
  };
}

export async function composeIngest(config: Config, a: Adapters): Promise<IngestServices> {
  const now = a.now ?? (() => new Date());
  const token = await a.resolveSecret(config.platform.tokenRef);
  const client = createPlatformClient({
    baseUrl: config.platform.url,
    token,
    renewToken: () => a.resolveSecret(config.platform.tokenRef),
    auth: config.platform.auth,
    timeoutMs: config.platform.timeoutMs,
    maxResponseBytes: config.platform.maxResponseBytes,
    ...(a.onCost ? { onCost: a.onCost } : {}),
  });
  const services = composeDispatch(config, { ...a, now });
  const { store, dispatch } = services;
  return {
    ...services,
    client,
    pollDeps: pollDepsOf(config, { client, store, now, log: a.log, spare: spareRequestsOf(dispatch, DISPATCH_NAME, () => now().getTime()) }),
  };
}
