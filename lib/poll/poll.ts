/**
 * One poll of one source: read it, normalize, store what is new (conditional writes), raise alerts into
 * the outbox, remember what was seen. Shared by functions/poll and the local runner; each kind of source
 * has its reader in lib/poll/readers/; what a poll is given: deps.ts.
 *
 * Rules that hold for every source:
 * - Nothing new on the platform → nothing written.
 * - An item that does not match its schema is logged and skipped; it is not marked seen, so it is read
 *   again next time, and the valid items beside it are stored.
 * - A failed read (error, malformed body) changes nothing: no cursor moves past unseen data.
 * - A record DynamoDB refuses for what it is (too large even after clipping) is quarantined and counts
 *   as handled; the records beside it are stored. A passing store error (throttling, network) still
 *   fails the poll, after the other records were tried, and the cursor does not move.
 */
import type { CallCost } from "../platform/cost.js";
import type { PlatformError } from "../platform/errors.js";
import type { PollRequest, PollResult } from "../model/poll.js";
import { type SourceKind, sourceKey } from "../model/source.js";
import type { PollDeps } from "./deps.js";
import type { PollContext, SourceReader } from "./readers/reader.js";
import { webhookDeliveries } from "./readers/webhook-deliveries.js";
import { clusterLogs } from "./readers/cluster-logs.js";
import { deploymentHistory } from "./readers/deployment-history.js";

export type { PollDeps } from "./deps.js";

const READERS: Record<SourceKind, SourceReader> = {
  webhook: webhookDeliveries,
  cluster: clusterLogs,
  deployment: deploymentHistory,
};

export async function pollSource(req: PollRequest, deps: PollDeps): Promise<PollResult> {
  const result: PollResult = {
    source: sourceKey(req.source), ok: true, requests: 0, retries: 0, newRecords: 0, alerts: 0, suppressed: 0,
    rejected: 0, inProgress: 0, hotServices: [], gapSuspected: false, firstSight: false,
  };
  const spend = (cost: CallCost) => {
    result.requests += cost.requests;
    result.retries += cost.retries;
    if (cost.rateLimit) result.rateLimit = cost.rateLimit;
  };
  const poll: PollContext = { req, deps, result, spend };
  try {
    const reader = READERS[req.source.kind];
    // A kind no reader knows must fail loudly, not read nothing and call it a success.
    if (!reader) throw new Error(`no reader for source kind ${JSON.stringify(req.source.kind)}`);
    await reader.read(poll);
  } catch (err) {
    const e = err as PlatformError;
    if (e.cost) spend(e.cost);
    result.ok = false;
    result.error = { kind: e.kind ?? "internal", status: e.status, message: e.message };
    if (e.kind === "deferred") deps.log.info("answer deferred to the next tick; nothing recorded for this source", { source: result.source });
    else deps.log.error("poll failed; nothing recorded for this source", { source: result.source, error: e.message, kind: e.kind });
  }
  return result;
}
