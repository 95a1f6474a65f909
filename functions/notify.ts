/**
 * The notify functions' shared handler: SQS messages `{ route, event }` — put there by the route's
 * EventBridge rule — are delivered to the route's receivers of one kind (Slack or email), each once.
 * A delivery that failed and may succeed later fails the message, so SQS retries it and, in the end,
 * dead-letters it; the fallback receiver and a health event have been told by then. So does one that
 * another sender holds: if that sender died, the retry takes over once its lease ran out. One that no
 * retry can fix (a missing secret, a 4xx) has gone to the fallback and is not retried.
 * The default route's messages (`route: "default"`) carry every event; only those no route matches are
 * delivered. The digest schedule invokes it with `{"lookout": "flush-digests"}`: what storms held back
 * for this kind of receiver goes out without waiting for another alert.
 */
import middy from "@middy/core";
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import * as z from "zod/mini";
import type { LookoutEventEnvelope } from "../lib/model/event.js";
import { DEFAULT_ROUTE, type Receiver, type Route } from "../lib/config/route-types.js";
import { decideRoutes } from "../lib/routes/match.js";
import { allReceivers } from "../lib/config/routes.js";
import { flushDigests, notifyEvent, unfinished, type NotifierDeps } from "../lib/notify/notifier.js";
import { describeIssue, jsonPath } from "../lib/model/issues.js";

export type ReceiverKind = "slack" | "email";

const NotifyMessage = z.object({
  route: z.string(),
  event: z.looseObject({ "detail-type": z.string(), source: z.literal("lookout"), detail: z.looseObject({ id: z.string(), kind: z.string() }) }),
});

export class MalformedNotifyMessage extends Error {
  override name = "MalformedNotifyMessage";
}

export function parseNotifyMessage(body: string): { route: string; event: LookoutEventEnvelope } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new MalformedNotifyMessage("notify message is not JSON");
  }
  const parsed = NotifyMessage.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new MalformedNotifyMessage(`notify message ${jsonPath(issue.path)}: ${describeIssue(issue, json)}`);
  }
  return parsed.data as unknown as { route: string; event: LookoutEventEnvelope };
}

export interface NotifyHandlerDeps {
  routes: readonly Route[];
  notifier: NotifierDeps;
}

/** What the digest schedule sends the notify functions (infra/schedule.yml): flush what storms held. */
export const FLUSH_DIGESTS = "flush-digests";
export interface FlushDigestsEvent {
  lookout: typeof FLUSH_DIGESTS;
}
const isFlush = (e: unknown): e is FlushDigestsEvent => (e as FlushDigestsEvent | undefined)?.lookout === FLUSH_DIGESTS;

const ofKind = (kind: ReceiverKind, receivers: readonly Receiver[]) => receivers.filter((r) => r.type === kind);

export function createNotifyHandler(kind: ReceiverKind, deps: NotifyHandlerDeps | (() => Promise<NotifyHandlerDeps>)) {
  const logger = new Logger({ serviceName: `lookout-notify-${kind}` });
  const metrics = new Metrics({ namespace: "Lookout", serviceName: `lookout-notify-${kind}` });
  const processor = new BatchProcessor(EventType.SQS);

  const base = async (event: SQSEvent | FlushDigestsEvent, context: Context): Promise<SQSBatchResponse & { flushed?: number }> => {
    const d = typeof deps === "function" ? await deps() : deps;
    if (isFlush(event)) {
      // Every receiver of this function's kind, whichever route, the default route or the fallback names it.
      const flushed = await flushDigests(ofKind(kind, allReceivers(d.routes, d.notifier.settings)), d.notifier);
      metrics.addMetric("DigestAlertsFlushed", MetricUnit.Count, flushed);
      return { batchItemFailures: [], flushed };
    }
    const record = async (msg: SQSRecord) => {
      const { route: name, event: envelope } = parseNotifyMessage(msg.body);
      let receivers: Receiver[];
      if (name === DEFAULT_ROUTE) {
        // The default route's rule takes every event; it delivers only what no route matches.
        const taken = decideRoutes(envelope.detail, d.routes, d.notifier.settings).find((x) => x.route === DEFAULT_ROUTE);
        if (!taken) return logger.debug("taken by a route; not for the default route", { alert: envelope.detail.id });
        receivers = ofKind(kind, taken.receivers);
      } else {
        const route = d.routes.find((r) => r.name === name);
        // A rule for a route that is no longer configured (a deploy in between): nothing to send.
        if (!route) return logger.warn("event for an unknown route; skipped", { route: name, alert: envelope.detail.id });
        receivers = kind === "slack" ? route.slack : route.email ? [route.email] : [];
      }
      const deliveries = await notifyEvent(envelope.detail, [{ route: name, receivers }], d.notifier);
      for (const x of deliveries) metrics.addMetric(`Deliveries_${x.outcome}`, MetricUnit.Count, 1);
      logger.info("delivered", { alert: envelope.detail.id, detailType: envelope["detail-type"], route: name, deliveries });
      if (unfinished(deliveries)) {
        throw new Error(`route ${name}: a receiver failed or is still being sent to; the message will be retried`);
      }
    };
    return processPartialResponse(event as SQSEvent, record, processor, { context, throwOnFullBatchFailure: false });
  };
  return middy(base).use(injectLambdaContext(logger)).use(logMetrics(metrics));
}
