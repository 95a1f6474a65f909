/**
 * Lambda: the table's DynamoDB stream (the outbox) → EventBridge bus. Thin: lib/alerts/outbox.ts decides
 * and publishes; this maps the outcome to a partial batch response. A failed record is reported by its
 * SequenceNumber; Lambda checkpoints at the lowest one reported and retries the shard from there, so an
 * alert is never skipped (records after it may be published twice: publishing is at-least-once). An
 * alert no retry can publish is quarantined instead (lib/store/quarantine.ts), so it holds nothing up.
 */
import middy from "@middy/core";
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from "aws-lambda";
import { type EventBus, eventBridgeBus } from "../lib/alerts/bus.js";
import { type EventKind, type Transition, detailTypeOf } from "../lib/model/event.js";
import { publishOutbox } from "../lib/alerts/outbox.js";
import type { PublishOptions } from "../lib/alerts/publish.js";
import { bundledConfigFile, requiredEnv } from "../lib/app/env.js";
import { DynamoQuarantine } from "../lib/store/quarantine.js";
import type { QuarantinePort } from "../lib/model/quarantine.js";
import { loadConfigFile } from "../lib/config/load.js";

export interface PublishHandlerDeps {
  bus: EventBus;
  /** Default: env EVENT_BUS_NAME. */
  busName?: string;
  logger?: Logger;
  metrics?: Metrics;
  /** Retry tuning (and injected sleep/random in tests). */
  publish?: Omit<PublishOptions, "busName">;
  /** Where alerts no retry can publish are set aside; without it they are retried like any failure. */
  quarantine?: QuarantinePort;
}

export type PublishHandler = (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse>;

class AlertNotPublished extends Error {
  override name = "AlertNotPublished";
}

export function createPublishHandler(deps: PublishHandlerDeps): PublishHandler {
  const busName = deps.busName ?? requiredEnv("EVENT_BUS_NAME");
  const logger = deps.logger ?? new Logger({ serviceName: "lookout-publish" });
  const metrics = deps.metrics ?? new Metrics({ namespace: "Lookout", serviceName: "lookout-publish" });
  const processor = new BatchProcessor(EventType.DynamoDBStreams);

  const base = async (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> => {
    const out = await publishOutbox(event.Records, deps.bus, {
      ...deps.publish,
      busName,
      onRetry: (info) => logger.warn("retrying entries PutEvents did not accept", info),
    }, deps.quarantine);

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

/**
 * The table and the retention (the bundled lookout.yaml, as functions/runtime.ts reads it) are read when
 * an alert is first quarantined, not at every cold start; if that fails, the batch is retried.
 */
function lazyQuarantine(): QuarantinePort {
  let port: DynamoQuarantine | undefined;
  return {
    quarantine: (entry) => {
      if (!port) {
        const file = bundledConfigFile();
        port = new DynamoQuarantine({ client: new DynamoDBClient({}), tableName: requiredEnv("TABLE_NAME"), retentionMs: loadConfigFile(file).retentionMs });
      }
      return port.quarantine(entry);
    },
  };
}

let real: PublishHandler | undefined;

/** The deployed handler: the real bus from env, built on the first invocation (the cold start). */
export const handler: PublishHandler = async (event, context) => {
  real ??= createPublishHandler({
    bus: eventBridgeBus(new EventBridgeClient({}), requiredEnv("EVENT_BUS_NAME")),
    quarantine: lazyQuarantine(),
  });
  return real(event, context);
};
