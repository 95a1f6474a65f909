/**
 * Dispatch as a Lambda handler (EventBridge Scheduler, every minute): plans which sources to poll within
 * the request budget, raises `Lookout Health` events, and queues one message per poll. lib/ingest decides.
 */
import middy from "@middy/core";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import type { Context } from "aws-lambda";
import { planPolls, raiseHealth } from "../../ingest/cycle.js";
import type { IngestStore } from "../../store/ingest-store.js";
import type { HealthSettings } from "../../config/load.js";
import type { Watchlist } from "../../ingest/dispatch.js";
import { sourceKey } from "../../model/source.js";
import type { PollRequest } from "../../ingest/poll.js";
import type { DispatchStore } from "../../store/dispatch-store.js";
import type { IngestServices } from "../ingest.js";
import { resolveDeps, telemetryOr, type Deps, type Telemetry } from "./telemetry.js";

/** Where planned polls go: the SQS poll queue in the cloud (lib/app/cloud/queue.ts). */
export interface PollQueue {
  /** Sends the polls; returns those that could not be queued. */
  send(polls: PollRequest[]): Promise<PollRequest[]>;
}

export interface DispatchHandlerDeps {
  store: DispatchStore;
  watch: Watchlist;
  queue: PollQueue;
  /** Where `Lookout Health` events go (the table's outbox). */
  outbox?: Pick<IngestStore, "raiseAlert" | "expiresAt">;
  health?: HealthSettings;
  now?: () => number;
}

export interface DispatchOutcome {
  planned: number;
  queued: number;
}

/** Dispatch's deps from the composed services and the queue. */
export const dispatchDeps = (s: IngestServices, queue: PollQueue): DispatchHandlerDeps => ({
  store: s.dispatch,
  watch: s.watch,
  queue,
  outbox: s.pollDeps.store,
  health: s.config.health,
});

export function createDispatchHandler(deps: Deps<DispatchHandlerDeps>, given?: Partial<Telemetry>) {
  const { logger, metrics } = telemetryOr("dispatch", given);
  const base = async (_event: unknown, _context: Context): Promise<DispatchOutcome> => {
    const d = await resolveDeps(deps);
    const now = (d.now ?? Date.now)();
    const { polls, state } = await planPolls(d.store, d.watch, now);
    if (d.outbox) await raiseHealth(state, d.watch, new Date(now), d.outbox, undefined, d.health);
    // A send that fails is retried once; what still fails is picked up by a later tick (its source stays stale).
    let failed = await d.queue.send(polls);
    if (failed.length) failed = await d.queue.send(failed);
    if (failed.length) logger.warn("polls not queued", { sources: failed.map((p) => sourceKey(p.source)) });
    metrics.addMetric("PollsPlanned", MetricUnit.Count, polls.length);
    metrics.addMetric("PollsNotQueued", MetricUnit.Count, failed.length);
    logger.info("tick planned", { planned: polls.length, queued: polls.length - failed.length });
    return { planned: polls.length, queued: polls.length - failed.length };
  };
  return middy(base).use(injectLambdaContext(logger)).use(logMetrics(metrics));
}
