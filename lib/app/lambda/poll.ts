/**
 * Poll as a Lambda handler (SQS poll queue, batches of up to ten, partial failures): one message = one
 * source to poll. The batch's sources are polled at once, with room for one large answer among them
 * (lib/platform/answer-memory.ts: another is deferred to the next tick, so that a batch fits the
 * function's memory); lib/ingest polls, stores and raises alerts; dispatch is told what the batch
 * learned in one write.
 *
 * Platform failures (4xx, 5xx after retries, bad responses) do not fail the message: dispatch already
 * counts them and backs the source off, and a redelivery would spend budget twice. A failure of our own
 * (the store unreachable, a malformed message) fails it, so SQS retries it and then dead-letters it; so
 * does a batch whose results dispatch could not be told (every message).
 */
import middy from "@middy/core";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { pollBatch } from "../../ingest/cycle.js";
import type { PollRequest } from "../../model/poll.js";
import type { Watchlist } from "../../model/dispatch.js";
import type { PollDeps } from "../../ingest/poll.js";
import type { DispatchStore } from "../../model/dispatch-store.js";
import type { IngestServices } from "../ingest.js";
import { parsePollMessage } from "./messages.js";
import { resolveDeps, telemetryOr, type Deps, type Telemetry } from "./telemetry.js";

/** Failures of our own stage, as opposed to the platform's: worth a retry and, in the end, a dead letter. */
const OWN_FAILURE = new Set(["internal"]);

export interface PollHandlerDeps {
  pollDeps: PollDeps;
  store: DispatchStore;
  watch: Watchlist;
}

export const pollHandlerDeps = (s: IngestServices): PollHandlerDeps => ({ pollDeps: s.pollDeps, store: s.dispatch, watch: s.watch });

const zip = <A, B>(a: readonly A[], b: readonly B[]): Array<[A, B]> => a.map((x, i) => [x, b[i]!]);

export function createPollHandler(deps: Deps<PollHandlerDeps>, given?: Partial<Telemetry>) {
  const { logger, metrics } = telemetryOr("poll", given);
  const processor = new BatchProcessor(EventType.SQS);

  const base = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    const d = await resolveDeps(deps);
    // Every message read first: the valid ones are polled as one batch, a malformed one fails alone.
    const requests = new Map<string, PollRequest | Error>();
    for (const msg of event.Records) {
      try {
        requests.set(msg.messageId, parsePollMessage(msg.body));
      } catch (err) {
        requests.set(msg.messageId, err as Error);
      }
    }
    const valid = [...requests].filter((e): e is [string, PollRequest] => !(e[1] instanceof Error));
    const results = new Map(zip(valid.map(([id]) => id), await pollBatch(valid.map(([, req]) => req), d.pollDeps, d.store, d.watch)));
    const record = async (msg: SQSRecord) => {
      const r = results.get(msg.messageId);
      if (!r) throw requests.get(msg.messageId);
      metrics.addMetric("PlatformRequests", MetricUnit.Count, r.requests);
      metrics.addMetric("NewRecords", MetricUnit.Count, r.newRecords);
      metrics.addMetric("AlertsRaised", MetricUnit.Count, r.alerts);
      logger.info("polled", { source: r.source, ok: r.ok, requests: r.requests, retries: r.retries, newRecords: r.newRecords, alerts: r.alerts, suppressed: r.suppressed, rejected: r.rejected });
      if (!r.ok && OWN_FAILURE.has(r.error?.kind ?? "")) throw new Error(`poll of ${r.source} failed: ${r.error?.message}`);
    };
    // A batch that failed entirely is reported record by record, as a partial failure of every record.
    const response = await processPartialResponse(event, record, processor, { context, throwOnFullBatchFailure: false });
    const deferred = [...results.values()].filter((r) => r.error?.kind === "deferred").length;
    metrics.addMetric("AnswersDeferred", MetricUnit.Count, deferred);
    return response;
  };
  return middy(base).use(injectLambdaContext(logger)).use(logMetrics(metrics));
}
