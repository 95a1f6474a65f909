/**
 * Publish as a Lambda handler: the table's DynamoDB stream (the outbox) → EventBridge bus.
 * lib/alerts/outbox.ts decides and publishes; this maps the outcome to a partial batch response. A
 * failed record is reported by its SequenceNumber; Lambda checkpoints at the lowest one reported and
 * retries the shard from there, so an alert is never skipped (records after it may be published twice:
 * publishing is at-least-once). An alert no retry can publish is quarantined instead
 * (lib/store/quarantine.ts), so it holds nothing up.
 */
import middy from "@middy/core";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from "aws-lambda";
import type { EventBus } from "../../alerts/bus.js";
import { type EventKind, type Transition, detailTypeOf } from "../../model/event.js";
import { publishOutbox } from "../../alerts/outbox.js";
import type { PublishOptions } from "../../alerts/publish.js";
import type { QuarantinePort } from "../../model/quarantine.js";
import { requiredEnv } from "../env.js";
import { resolveDeps, telemetryOr, type Deps, type Telemetry } from "./telemetry.js";

export interface PublishHandlerDeps extends Partial<Telemetry> {
  bus: EventBus;
  /** Default: env EVENT_BUS_NAME. */
  busName?: string;
  /** Retry tuning (and injected sleep/random in tests). */
  publish?: Omit<PublishOptions, "busName">;
  /** Where alerts no retry can publish are set aside; without it they are retried like any failure. */
  quarantine?: QuarantinePort;
}

export type PublishHandler = (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse>;

class AlertNotPublished extends Error {
  override name = "AlertNotPublished";
}

/** Telemetry given beside the deps, or (tests) inside them. */
export function createPublishHandler(deps: Deps<PublishHandlerDeps>, given?: Partial<Telemetry>): PublishHandler {
  const { logger, metrics } = telemetryOr("publish", given ?? (typeof deps === "function" ? {} : deps));
  const processor = new BatchProcessor(EventType.DynamoDBStreams);

  const base = async (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> => {
    const d = await resolveDeps(deps);
    const out = await publishOutbox(event.Records, d.bus, {
      ...d.publish,
      busName: d.busName ?? requiredEnv("EVENT_BUS_NAME"),
      onRetry: (info) => logger.warn("retrying entries PutEvents did not accept", info),
    }, d.quarantine);

    // Ids and detail-types only: details carry commit messages and error text that belong to the bus.
    const typeOf = new Map(out.alerts.map((a) => [a.detail.id, detailTypeOrUndefined(a.detail)]));
    if (out.published.length) {
      logger.info("alerts published", { alerts: out.published.map((id) => ({ id, detailType: typeOf.get(id) })) });
    }
    if (out.clipped.length) logger.warn("alert text clipped to fit the 256 KB entry limit", { ids: out.clipped });
    const quarantined = new Set(out.quarantined);
    for (const f of out.failed) {
      const what = quarantined.has(f) ? "alert quarantined: no retry can publish it" : "alert not published";
      logger.error(what, { id: f.id, detailType: typeOf.get(f.id), errorCode: f.errorCode, errorMessage: f.errorMessage });
    }
    metrics.addMetric("AlertsPublished", MetricUnit.Count, out.published.length);
    metrics.addMetric("AlertsFailed", MetricUnit.Count, out.failed.length - out.quarantined.length);
    if (out.quarantined.length) metrics.addMetric("AlertsQuarantined", MetricUnit.Count, out.quarantined.length);

    // Powertools builds the response (itemIdentifier = dynamodb.SequenceNumber) from per-record outcomes.
    // The alerts were already sent in batches of 10 above; each record handler only reports its outcome.
    const failedSeq = new Set(out.failedSequenceNumbers);
    const recordHandler = async (record: DynamoDBRecord) => {
      const seq = record.dynamodb?.SequenceNumber;
      if (seq && failedSeq.has(seq)) throw new AlertNotPublished(`alert at sequence number ${seq} not published`);
    };
    // A batch that failed entirely is reported record by record too: for a stream that is the same
    // retry as a thrown error, without Powertools' FullBatchFailureError noise.
    return processPartialResponse(event, recordHandler, processor, { context, throwOnFullBatchFailure: false });
  };

  return middy(base).use(injectLambdaContext(logger)).use(logMetrics(metrics)) as unknown as PublishHandler;
}

/** For logs only: a stored alert of no known detail-type must not fail the batch it is in. */
function detailTypeOrUndefined(d: { kind: EventKind; transition: Transition }): string | undefined {
  try {
    return detailTypeOf(d.kind, d.transition);
  } catch {
    return undefined;
  }
}
