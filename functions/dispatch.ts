/**
 * Lambda, every minute (EventBridge Scheduler): plans which sources to poll within the request budget
 * and queues one SQS message per poll. Thin: lib/ingest decides.
 */
import middy from "@middy/core";
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { SendMessageBatchCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { Context } from "aws-lambda";
import { planPolls, raiseHealth } from "../lib/ingest/cycle.js";
import type { IngestStore } from "../lib/store/ingest-store.js";
import type { HealthSettings } from "../lib/config/load.js";
import type { Watchlist } from "../lib/ingest/dispatch.js";
import { sourceKey } from "../lib/model/source.js";
import type { PollRequest } from "../lib/ingest/poll.js";
import type { DispatchStore } from "../lib/store/dispatch-store.js";
import { cloudRuntime, requiredEnv } from "./runtime.js";

/** Where planned polls go: the SQS poll queue in the cloud. */
export interface PollQueue {
  /** Sends the polls; returns those that could not be queued. */
  send(polls: PollRequest[]): Promise<PollRequest[]>;
}

export function sqsPollQueue(sqs: SQSClient, queueUrl: string): PollQueue {
  return {
    async send(polls) {
      const failed: PollRequest[] = [];
      for (let i = 0; i < polls.length; i += 10) {
        const batch = polls.slice(i, i + 10);
        const res = await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: batch.map((p, j) => ({ Id: String(j), MessageBody: JSON.stringify(p) })),
          }),
        );
        for (const f of res.Failed ?? []) failed.push(batch[Number(f.Id)]!);
      }
      return failed;
    },
  };
}

export interface DispatchHandlerDeps {
  store: DispatchStore;
  watch: Watchlist;
  queue: PollQueue;
  /** Where `Lookout Health` events go (the table's outbox). */
  outbox?: Pick<IngestStore, "raiseAlert" | "expiresAt">;
  health?: HealthSettings;
  now?: () => number;
  logger?: Logger;
  metrics?: Metrics;
}

export interface DispatchOutcome {
  planned: number;
  queued: number;
}

export function createDispatchHandler(deps: DispatchHandlerDeps | (() => Promise<DispatchHandlerDeps> | DispatchHandlerDeps)) {
  const logger = new Logger({ serviceName: "lookout-dispatch" });
  const metrics = new Metrics({ namespace: "Lookout", serviceName: "lookout-dispatch" });
  const base = async (_event: unknown, _context: Context): Promise<DispatchOutcome> => {
    const d = typeof deps === "function" ? await deps() : deps;
    const now = (d.now ?? Date.now)();
    const { polls, state } = await planPolls(d.store, d.watch, now);
    if (d.outbox) await raiseHealth(state, d.watch, new Date(now), d.outbox, undefined, d.health);
    // A send that fails is retried once; what still fails is picked up by a later tick (its source stays stale).
    let failed = await d.queue.send(polls);
    if (failed.length) failed = await d.queue.send(failed);
    if (failed.length) (d.logger ?? logger).warn("polls not queued", { sources: failed.map((p) => sourceKey(p.source)) });
    const m = d.metrics ?? metrics;
    m.addMetric("PollsPlanned", MetricUnit.Count, polls.length);
    m.addMetric("PollsNotQueued", MetricUnit.Count, failed.length);
    (d.logger ?? logger).info("tick planned", { planned: polls.length, queued: polls.length - failed.length });
    return { planned: polls.length, queued: polls.length - failed.length };
  };
  return middy(base).use(injectLambdaContext(logger)).use(logMetrics(metrics));
}

export const handler = createDispatchHandler(async () => {
  const rt = await cloudRuntime(new Logger({ serviceName: "lookout-dispatch" }));
  return {
    store: rt.dispatch,
    watch: rt.watch,
    queue: sqsPollQueue(new SQSClient({}), requiredEnv("POLL_QUEUE_URL")),
    outbox: rt.pollDeps.store,
    health: rt.config.health,
  };
});
