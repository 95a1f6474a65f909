/**
 * Dispatch as a Lambda handler (EventBridge Scheduler, every minute): plans which sources to poll within
 * the request budget, raises `Lookout Health` events, and queues one message per poll. lib/ingest decides.
 */
import middy from "@middy/core";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import type { Context } from "aws-lambda";
import { planPolls, raiseHealth, watchQueues } from "../../ingest/cycle.js";
import type { QueueSample } from "../../alerts/health.js";
import type { IngestStore } from "../../model/ingest-store.js";
import type { HealthSettings } from "../../config/load.js";
import type { Watchlist } from "../../model/dispatch.js";
import { sourceKey } from "../../model/source.js";
import type { PollRequest } from "../../model/poll.js";
import type { DispatchStore } from "../../model/dispatch-store.js";
import type { IngestServices } from "../ingest.js";
import { resolveDeps, telemetryOr, type Deps, type Telemetry } from "./telemetry.js";

/** Where planned polls go: the SQS poll queue in the cloud (lib/app/cloud/queue.ts). */
export interface PollQueue {
  /** Sends the polls; returns those that could not be queued. */
  send(polls: PollRequest[]): Promise<PollRequest[]>;
}

/** Reads how many messages wait in each of Lookout's queues: SQS in the cloud (lib/app/cloud/queue-gauge.ts). */
export interface QueueGauge {
  /** Every watched queue; rejects, naming the queues, when any could not be read (the others are in the error's `samples`). */
  sample(): Promise<QueueSample[]>;
}

/** How often dispatch samples the queues: the period of the CloudWatch alarms this replaces. */
export const QUEUE_SAMPLE_EVERY_MS = 5 * 60_000;

export interface DispatchHandlerDeps {
  store: DispatchStore;
  watch: Watchlist;
  queue: PollQueue;
  /** Where `Lookout Health` events go (the table's outbox). */
  outbox?: Pick<IngestStore, "raiseAlert" | "expiresAt">;
  health?: HealthSettings;
  /** Lookout's queues, watched for dead letters and backlogs (absent on one machine: no queues). */
  queues?: QueueGauge;
  now?: () => number;
}

export interface DispatchOutcome {
  planned: number;
  queued: number;
}

/** Dispatch's deps from the composed services and the queue. */
export const dispatchDeps = (s: IngestServices, queue: PollQueue, queues?: QueueGauge): DispatchHandlerDeps => ({
  store: s.dispatch,
  watch: s.watch,
  queue,
  ...(queues ? { queues } : {}),
  outbox: s.pollDeps.store,
  health: s.config.health,
});

export function createDispatchHandler(deps: Deps<DispatchHandlerDeps>, given?: Partial<Telemetry>) {
  const { logger, metrics } = telemetryOr("dispatch", given);
  // When this container last sampled the queues: a new one samples at once, a warm one every period.
  let sampledAt: number | undefined;
  const base = async (_event: unknown, _context: Context): Promise<DispatchOutcome> => {
    const d = await resolveDeps(deps);
    const now = (d.now ?? Date.now)();
    // Sampled before this tick's polls are queued: what the poll queue holds then was left by earlier ticks.
    let unread: unknown;
    if (d.queues && d.outbox && (sampledAt === undefined || now - sampledAt >= QUEUE_SAMPLE_EVERY_MS - 30_000)) {
      sampledAt = now;
      let samples: QueueSample[] = [];
      try {
        samples = await d.queues.sample();
      } catch (err) {
        unread = err;
        samples = (err as { samples?: QueueSample[] }).samples ?? [];
      }
      try {
        await watchQueues(d.store, samples, d.watch, new Date(now), d.outbox);
      } catch (err) {
        unread ??= err;
      }
    }
    const { polls, state } = await planPolls(d.store, d.watch, now);
    if (d.outbox) await raiseHealth(state, d.watch, new Date(now), d.outbox, undefined, d.health);
    // A send that fails is retried once; what still fails is picked up by a later tick (its source stays stale).
    let failed = await d.queue.send(polls);
    if (failed.length) failed = await d.queue.send(failed);
    if (failed.length) logger.warn("polls not queued", { sources: failed.map((p) => sourceKey(p.source)) });
    metrics.addMetric("PollsPlanned", MetricUnit.Count, polls.length);
    metrics.addMetric("PollsNotQueued", MetricUnit.Count, failed.length);
    logger.info("tick planned", { planned: polls.length, queued: polls.length - failed.length });
    // The polls are queued; queues that could not be watched fail the tick, so its errors alarm says so.
    if (unread) throw unread;
    return { planned: polls.length, queued: polls.length - failed.length };
  };
  return middy(base).use(injectLambdaContext(logger)).use(logMetrics(metrics));
}
