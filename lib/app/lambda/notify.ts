/**
 * The notify functions as Lambda handlers: SQS messages `{ route, event }` — put there by the route's
 * EventBridge rule — are delivered to the route's receivers of one kind (Slack, email, or the HTTP
 * receivers: PagerDuty, generic webhooks, Teams), each once.
 * A delivery that failed and may succeed later fails the message, so SQS retries it and, in the end,
 * dead-letters it; the fallback receiver and a health event have been told by then. So does one that
 * another sender holds: if that sender died, the retry takes over once its lease ran out. One that no
 * retry can fix (a missing secret, a 4xx) has gone to the fallback and is not retried.
 * The queues are FIFO, one message group per incident (docs/architecture.md, "Order per incident"): a
 * batch is processed in order, and once a message fails, the later messages of its incident in the batch
 * fail with it, unprocessed, so that none overtakes it; other incidents' messages go on.
 * The default route's messages (`route: "default"`) carry every event; only those no route matches are
 * delivered. Dispatch invokes it with `{"lookout": "flush-digests"}` at a tick where alerts are held for
 * its receivers or an escalation is due for them: what storms held back, and what nobody acknowledged in
 * time, go out without waiting for another alert.
 */
import middy from "@middy/core";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { SqsFifoPartialProcessorAsync, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { DEFAULT_ROUTE, escalationReceivers, type Receiver, routeReceivers } from "../../config/route-types.js";
import { decideRoutes } from "../../routes/match.js";
import { allReceivers } from "../../config/receivers.js";
import { flushDigests, flushEscalations, notifyEvent, unfinished } from "../../notify/notifier.js";
import type { NotifyServices } from "../notify.js";
import { FLUSH_DIGESTS, type FlushDigestsEvent, kindOf, parseNotifyMessage, type ReceiverKind } from "./messages.js";

export { FLUSH_DIGESTS, type ReceiverKind };
import { resolveDeps, telemetryOr, type Deps, type Telemetry } from "./telemetry.js";


export type NotifyHandlerDeps = NotifyServices;

const isFlush = (e: unknown): e is FlushDigestsEvent => (e as FlushDigestsEvent | undefined)?.lookout === FLUSH_DIGESTS;

const ofKind = (kind: ReceiverKind, receivers: readonly Receiver[]) => receivers.filter((r) => kindOf(r) === kind);

/**
 * The rule's message from the pipe's (infra/pipes.yml): its input template sends the message itself; should
 * the pipe send its whole record, or the body as a JSON string, the message is taken out of it.
 */
export function notifyBody(body: string): string {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return body; // parseNotifyMessage says what is wrong
  }
  if (typeof json === "string") return json;
  const inner = (json as { body?: unknown } | null)?.body;
  if (json && typeof json === "object" && !("route" in json) && inner !== undefined) return typeof inner === "string" ? inner : JSON.stringify(inner);
  return body;
}

export function createNotifyHandler(kind: ReceiverKind, deps: Deps<NotifyHandlerDeps>, given?: Partial<Telemetry>) {
  const { logger, metrics } = telemetryOr(`notify-${kind}`, given);
  const processor = new SqsFifoPartialProcessorAsync();

  const base = async (event: SQSEvent | FlushDigestsEvent, context: Context): Promise<SQSBatchResponse & { flushed?: number }> => {
    const d = await resolveDeps(deps);
    if (isFlush(event)) {
      // Every receiver of this function's kind, whichever route, the default route or the fallback names it.
      // Digests and due escalations (docs/actions.md, "Escalation"): either one's failure fails the call after both were tried.
      let failed: unknown;
      const flushed = await flushDigests(ofKind(kind, allReceivers(d.routes, d.notifier.settings)), d.notifier).catch((err: unknown) => ((failed = err), 0));
      const escalations = await flushEscalations([kind], d.notifier).catch((err: unknown) => ((failed ??= err), []));
      metrics.addMetric("DigestAlertsFlushed", MetricUnit.Count, flushed);
      metrics.addMetric("EscalationDeliveries", MetricUnit.Count, escalations.length);
      if (escalations.length) logger.info("escalated", { deliveries: escalations });
      if (failed) throw failed;
      return { batchItemFailures: [], flushed };
    }
    const record = async (msg: SQSRecord) => {
      const { route: name, event: envelope } = parseNotifyMessage(notifyBody(msg.body));
      let receivers: Receiver[];
      let escalateTo: Receiver[] = [];
      if (name === DEFAULT_ROUTE) {
        // The default route's rule takes every event; it delivers only what no route matches.
        const taken = decideRoutes(envelope.detail, d.routes, d.notifier.settings).find((x) => x.route === DEFAULT_ROUTE);
        if (!taken) return logger.debug("taken by a route; not for the default route", { alert: envelope.detail.id });
        receivers = ofKind(kind, taken.receivers);
      } else {
        const route = d.routes.find((r) => r.name === name);
        // A rule for a route that is no longer configured (a deploy in between): nothing to send.
        if (!route) return logger.warn("event for an unknown route; skipped", { route: name, alert: envelope.detail.id });
        receivers = ofKind(kind, routeReceivers(route));
        escalateTo = ofKind(kind, escalationReceivers(route));
      }
      const deliveries = await notifyEvent(envelope.detail, [{ route: name, receivers, escalateTo }], d.notifier);
      for (const x of deliveries) metrics.addMetric(`Deliveries_${x.outcome}`, MetricUnit.Count, 1);
      logger.info("delivered", { alert: envelope.detail.id, detailType: envelope["detail-type"], route: name, deliveries });
      if (unfinished(deliveries)) {
        throw new Error(`route ${name}: a receiver failed or is still being sent to; the message will be retried`);
      }
    };
    // skipGroupOnError: a failure holds back only the rest of its own incident in this batch.
    return processPartialResponse(event as SQSEvent, record, processor, { context, throwOnFullBatchFailure: false, skipGroupOnError: true });
  };
  return middy(base).use(injectLambdaContext(logger)).use(logMetrics(metrics));
}
