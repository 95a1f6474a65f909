/**
 * The change feed's loop as a Lambda handler (docs/architecture.md, "The change feed's loop"): a
 * self-renewing SQS delay loop. Each message is one tick: it claims the loop's lease, sends the next
 * tick's message ten seconds ahead, then reads the feed and polls what it names (lib/dispatch/feed-tick.ts,
 * `feedTick`). A tick refused by the lease belongs to a second loop: its message is consumed and not
 * renewed, so that loop ends. A tick whose renewal failed fails, and SQS delivers its message again after
 * the queue's visibility timeout: the loop goes on. A loop lost all the same (its message expired,
 * the function throttled) is started again by dispatch's next minute tick.
 */
import middy from "@middy/core";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import type { Context } from "aws-lambda";
import { feedTick, type FeedTickOutcome } from "../../dispatch/feed-tick.js";
import { FEED_LOOP } from "../../dispatch/feed-loop.js";
import type { Watchlist } from "../../model/dispatch.js";
import type { PollDeps } from "../../poll/poll.js";
import type { DispatchStore, FeedLoopStore } from "../../model/dispatch-store.js";
import type { IngestServices } from "../ingest.js";
import { resolveDeps, telemetryOr, type Deps, type Telemetry } from "./telemetry.js";

/** The loop's queue: a tick's message, sent with a delay (SQS in the cloud, lib/app/cloud/feed-loop-queue.ts). */
export interface FeedLoopQueue {
  /** Sends the message of a tick `delayMs` from now (0: at once, a loop's start). */
  tick(delayMs: number): Promise<void>;
}

/** The message of a tick (its body: the loop has no other state to carry). */
export const FEED_TICK_MESSAGE = { lookout: "feed-tick" } as const;

export interface FeedTickHandlerDeps {
  dispatch: DispatchStore;
  loops: FeedLoopStore;
  watch: Watchlist;
  pollDeps: PollDeps;
  queue: FeedLoopQueue;
  now?: () => number;
}

export interface FeedTickHandlerOutcome {
  claimed: boolean;
  polled: number;
}

export const feedTickDeps = (s: IngestServices, queue: FeedLoopQueue): FeedTickHandlerDeps =>
  ({ dispatch: s.dispatch, loops: s.loops, watch: s.watch, pollDeps: s.pollDeps, queue });

const REFUSED: Record<NonNullable<FeedTickOutcome["refused"]>, string> = {
  lease: "another loop holds the lease",
  no_room: "the request budget in force leaves the loop no read (dispatch reads the feed each minute)",
  no_feed: "no webhook is watched",
};

export function createFeedTickHandler(deps: Deps<FeedTickHandlerDeps>, given?: Partial<Telemetry>) {
  const { logger, metrics } = telemetryOr("feed-tick", given);
  // An SQS event of one message (batch size 1): whatever it holds, it is a tick.
  const base = async (_event: unknown, _context: Context): Promise<FeedTickHandlerOutcome> => {
    const d = await resolveDeps(deps);
    const now = (d.now ?? Date.now)();
    // Renewed once the lease is won, before the reads: a tick that fails later does not end the loop.
    const outcome = await feedTick({ ...d, renew: () => d.queue.tick(FEED_LOOP.everyMs) }, now);
    for (const r of outcome.results) metrics.addMetric("PlatformRequests", MetricUnit.Count, r.requests);
    metrics.addMetric("FeedTicksRefused", MetricUnit.Count, outcome.claimed ? 0 : 1);
    if (!outcome.claimed) logger.info(`feed tick refused: ${REFUSED[outcome.refused ?? "lease"]}; this loop ends`);
    for (const r of outcome.results) if (r.newRecords || !r.ok) logger.info("polled", { source: r.source, ok: r.ok, newRecords: r.newRecords, alerts: r.alerts });
    return { claimed: outcome.claimed, polled: outcome.results.length };
  };
  return middy(base).use(injectLambdaContext(logger)).use(logMetrics(metrics));
}
