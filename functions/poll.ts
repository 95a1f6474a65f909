/**
 * Lambda, SQS poll queue (batch, partial failures): one message = one source to poll. Thin: lib/ingest
 * polls, stores and raises alerts; dispatch is told what the poll learned.
 *
 * Platform failures (4xx, 5xx after retries, bad responses) do not fail the message: dispatch already
 * counts them and backs the source off, and a redelivery would spend budget twice. A failure of our own
 * (the store unreachable, a malformed message) fails it, so SQS retries it and then dead-letters it.
 */
import middy from "@middy/core";
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import * as z from "zod/mini";
import { pollAndRecord } from "../lib/ingest/cycle.js";
import type { Watchlist } from "../lib/ingest/dispatch.js";
import type { PollDeps, PollRequest } from "../lib/ingest/poll.js";
import type { DispatchStore } from "../lib/store/dispatch-store.js";
import { describeIssue, jsonPath } from "../lib/model/issues.js";
import { cloudRuntime } from "./runtime.js";

const PollMessage = z.object({
  source: z.object({ kind: z.enum(["webhook", "deployment", "cluster"]), organizationId: z.string(), id: z.string() }),
  previousPollAt: z.optional(z.string()),
  outage: z.optional(z.object({ from: z.string(), to: z.string() })),
});

export class MalformedPollMessage extends Error {
  override name = "MalformedPollMessage";
}

export function parsePollMessage(body: string): PollRequest {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new MalformedPollMessage("poll message is not JSON");
  }
  const parsed = PollMessage.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new MalformedPollMessage(`poll message ${jsonPath(issue.path)}: ${describeIssue(issue, json)}`);
  }
  return parsed.data;
}

/** Failures of our own stage, as opposed to the platform's: worth a retry and, in the end, a dead letter. */
const OWN_FAILURE = new Set(["internal"]);

export interface PollHandlerDeps {
  pollDeps: PollDeps;
  store: DispatchStore;
  watch: Watchlist;
}

export function createPollHandler(deps: PollHandlerDeps | (() => Promise<PollHandlerDeps> | PollHandlerDeps)) {
  const logger = new Logger({ serviceName: "lookout-poll" });
  const metrics = new Metrics({ namespace: "Lookout", serviceName: "lookout-poll" });
  const processor = new BatchProcessor(EventType.SQS);

  const base = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    const d = typeof deps === "function" ? await deps() : deps;
    const record = async (msg: SQSRecord) => {
      const req = parsePollMessage(msg.body);
      const r = await pollAndRecord(req, d.pollDeps, d.store, d.watch);
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

export const handler = createPollHandler(async () => {
  const rt = await cloudRuntime(new Logger({ serviceName: "lookout-poll" }));
  return { pollDeps: rt.pollDeps, store: rt.dispatch, watch: rt.watch };
});
