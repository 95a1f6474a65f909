/**
 * Dispatch as a Lambda handler (EventBridge Scheduler, every minute): plans which sources to poll within
 * the request budget, raises `Lookout Health` events, invokes the poll function with the tick's polls
 * (ten an invocation), and a notify function when alerts are held for its receivers' digests.
 * lib/dispatch decides; the tick itself is lib/app/dispatch-tick.ts, which `lookout run` shares.
 */
import middy from "@middy/core";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import type { Context } from "aws-lambda";
import { watchQueues } from "../../dispatch/health-watch.js";
import { feedReadsNow, loopAlive } from "../../dispatch/feed-loop.js";
import type { FeedLoopQueue } from "./feed-tick.js";
import { dispatchTick, type DigestFlusher, type DispatchTickDeps, type PollSender } from "../dispatch-tick.js";
import type { QueueSample } from "../../alerts/health.js";
import type { FeedLoopStore } from "../../model/dispatch-store.js";
import type { DispatchServices } from "../dispatch.js";
import type { ReceiverKind } from "./messages.js";
import { resolveDeps, telemetryOr, type Deps, type Telemetry } from "./telemetry.js";

/** Reads how many messages wait in each of Lookout's queues: SQS in the cloud (lib/app/cloud/queue-gauge.ts). */
export interface QueueGauge {
  /** Every watched queue; rejects, naming the queues, when any could not be read (the others are in the error's `samples`). */
  sample(): Promise<QueueSample[]>;
}

/** How often dispatch samples the queues: the period of the CloudWatch alarms this replaces. */
export const QUEUE_SAMPLE_EVERY_MS = 5 * 60_000;

export interface DispatchHandlerDeps extends DispatchTickDeps {
  /** Lookout's queues, watched for dead letters and backlogs (absent on one machine: no queues). */
  queues?: QueueGauge;
  /** The change feed's loop: its lease (read each tick), and its queue, where a lost loop is started again (no queue on one machine: its run loop ticks it). */
  feedLoop?: { loops: FeedLoopStore; queue?: FeedLoopQueue };
  now?: () => number;
}

export interface DispatchOutcome {
  planned: number;
  sent: number;
  /** The kinds of receiver whose held digests were flushed. */
  flushed: ReceiverKind[];
}

/** Dispatch's deps from the composed services and the cloud's adapters. */
export const dispatchDeps = (s: DispatchServices, polls: PollSender, queues?: QueueGauge, digests?: DigestFlusher, feedLoop?: FeedLoopQueue): DispatchHandlerDeps => ({
  store: s.dispatch,
  watch: s.watch,
  polls,
  ...(queues ? { queues } : {}),
  ...(digests ? { digests } : {}),
  ...(feedLoop ? { feedLoop: { loops: s.loops, queue: feedLoop } } : {}),
  outbox: s.store,
  health: s.config.health,
});

export function createDispatchHandler(deps: Deps<DispatchHandlerDeps>, given?: Partial<Telemetry>) {
  const { logger, metrics } = telemetryOr("dispatch", given);
  // When this container last sampled the queues: a new one samples at once, a warm one every period.
  let sampledAt: number | undefined;
  const base = async (_event: unknown, _context: Context): Promise<DispatchOutcome> => {
    const d = await resolveDeps(deps);
    const now = (d.now ?? Date.now)();
    // Sampled before this tick's polls are sent.
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
    const { failure, flushed, ...outcome } = await dispatchTick(d, now, {
      log: { error: (message, extra) => logger.error(message, extra ?? {}) },
      metric: (name, n) => metrics.addMetric(name, MetricUnit.Count, n),
    });
    if (failure) unread ??= failure;
    // A lost loop (or none yet: a new stack) is started, when the budget in force has room for it; two
    // started at once keep one (the lease). Not when the tick could not read the loop's state.
    const restart = d.feedLoop?.queue;
    if (restart && outcome.loop !== "unknown" && feedReadsNow(d.watch, outcome.state) && !loopAlive(outcome.loop, now)) {
      await restart.tick(0).then(() => {
        metrics.addMetric("FeedLoopsStarted", MetricUnit.Count, 1);
        logger.warn("change feed loop started", { last_tick_at: outcome.loop && outcome.loop !== "unknown" ? new Date(outcome.loop.beat_at).toISOString() : "never" });
      }, (err: unknown) => void (unread ??= err));
    }
    const { loop: _, state: __, ...counts } = outcome;
    logger.info("tick planned", { ...counts, flushed });
    // Queues that could not be watched, polls not sent, or held digests not flushed fail the tick, so
    // its errors alarm says so (a digest not flushed is tried again at the next tick).
    if (unread) throw unread;
    return { ...counts, flushed };
  };
  return middy(base).use(injectLambdaContext(logger)).use(logMetrics(metrics));
}

