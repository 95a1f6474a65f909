/**
 * Poll as a Lambda handler (SQS poll queue, batch, partial failures): one message = one source to poll.
 * lib/ingest polls, stores and raises alerts; dispatch is told what the poll learned.
 *
 * Platform failures (4xx, 5xx after retries, bad responses) do not fail the message: dispatch already
 * counts them and backs the source off, and a redelivery would spend budget twice. A failure of our own
 * (the store unreachable, a malformed message) fails it, so SQS retries it and then dead-letters it.
 */
import middy from "@middy/core";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { pollAndRecord } from "../../ingest/cycle.js";
import type { Watchlist } from "../../ingest/dispatch.js";
import type { PollDeps } from "../../ingest/poll.js";
import type { DispatchStore } from "../../store/dispatch-store.js";
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

export function createPollHandler(deps: Deps<PollHandlerDeps>, given?: Partial<Telemetry>) {
  const { logger, metrics } = telemetryOr("poll", given);
  const processor = new BatchProcessor(EventType.SQS);

  const base = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    const d = await resolveDeps(deps);
    const record = async (msg: SQSRecord) => {
      const r = await pollAndRecord(parsePollMessage(msg.body), d.pollDeps, d.store, d.watch);
      metrics.addMetric("PlatformRequests", MetricUnit.Count, r.requests);
      metrics.addMetric("NewRecords", MetricUnit.Count, r.newRecords);
      metrics.addMetric("AlertsRaised", MetricUnit.Count, r.alerts);
      logger.info("polled", { source: r.source, ok: r.ok, requests: r.requests, retries: r.retries, newRecords: r.newRecords, alerts: r.alerts, suppressed: r.suppressed, rejected: r.rejected });
      if (!r.ok && OWN_FAILURE.has(r.error?.kind ?? "")) throw new Error(`poll of ${r.source} failed: ${r.error?.message}`);
    };
    // A batch that failed entirely is reported record by record, as a partial failure of every record.
    return processPartialResponse(event, record, processor, { context, throwOnFullBatchFailure: false });
  };
  return middy(base).use(injectLambdaContext(logger)).use(logMetrics(metrics));
}
