/**
 * Poll as a Lambda handler, invoked asynchronously by dispatch with a batch of up to ten of a tick's
 * polls (`{"lookout": "poll", "polls": [...]}`, lib/app/cloud/invoke.ts). The batch's sources are
 * polled at once, with room for one large answer among them (lib/platform/answer-memory.ts: another is
 * deferred to the next tick, so that a batch fits the function's memory); lib/poll polls, stores and
 * raises alerts; dispatch is told what the batch learned in one write.
 *
 * Platform failures (4xx, 5xx after retries, bad responses) do not fail the invocation: dispatch already
 * counts them and backs the source off, and a retry would spend budget again. A failure of our own (the
 * store unreachable, a malformed event, dispatch's state not written) fails it once every poll has
 * ended: Lambda retries the event twice, a minute and two apart (its other polls again too: records are
 * stored by id, so nothing is stored twice), then sends it to the poll dead-letter queue, which dispatch
 * watches (a `dead_letters` health event).
 */
import middy from "@middy/core";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import type { Context } from "aws-lambda";
import { pollBatch } from "../../dispatch/poll-batch.js";
import type { Watchlist } from "../../model/dispatch.js";
import type { PollDeps } from "../../poll/poll.js";
import type { DispatchStore } from "../../model/dispatch-store.js";
import type { IngestServices } from "../ingest.js";
import { parsePollEvent, plannedAtOf, POLL_EVENT } from "./messages.js";
import { DISPATCH_NAME } from "../../dispatch/source-state.js";
import { resolveDeps, telemetryOr, type Deps, type Telemetry } from "./telemetry.js";

export { POLL_EVENT };

/**
 * Lambda retries a failed asynchronous invocation a minute after it failed at the soonest: a batch that
 * starts this long after its plan is a rerun (or was held in Lambda's queue: counted in full too, on the
 * safe side).
 */
const RERUN_AFTER_MS = 55_000;

/** Failures of our own stage, as opposed to the platform's: worth a retry and, in the end, a dead letter. */
const OWN_FAILURE = new Set(["internal"]);

export interface PollHandlerDeps {
  pollDeps: PollDeps;
  store: DispatchStore;
  watch: Watchlist;
}

export interface PollOutcome {
  polled: number;
  deferred: number;
}

export const pollHandlerDeps = (s: IngestServices): PollHandlerDeps => ({ pollDeps: s.pollDeps, store: s.dispatch, watch: s.watch });

export function createPollHandler(deps: Deps<PollHandlerDeps>, given?: Partial<Telemetry>) {
  const { logger, metrics } = telemetryOr("poll", given);

  const base = async (event: unknown, _context: Context): Promise<PollOutcome> => {
    const d = await resolveDeps(deps);
    const plannedAt = plannedAtOf(event);
    const rerun = plannedAt !== undefined && d.pollDeps.now().getTime() - plannedAt >= RERUN_AFTER_MS;
    const results = await pollBatch(parsePollEvent(event), d.pollDeps, d.store, d.watch, DISPATCH_NAME, { rerun });
    for (const r of results) {
      metrics.addMetric("PlatformRequests", MetricUnit.Count, r.requests);
      metrics.addMetric("NewRecords", MetricUnit.Count, r.newRecords);
      metrics.addMetric("AlertsRaised", MetricUnit.Count, r.alerts);
      logger.info("polled", { source: r.source, ok: r.ok, requests: r.requests, retries: r.retries, newRecords: r.newRecords, alerts: r.alerts, suppressed: r.suppressed, rejected: r.rejected });
    }
    const deferred = results.filter((r) => r.error?.kind === "deferred").length;
    metrics.addMetric("AnswersDeferred", MetricUnit.Count, deferred);
    const own = results.filter((r) => !r.ok && OWN_FAILURE.has(r.error?.kind ?? ""));
    if (own.length) throw new Error(`${own.length} of ${results.length} polls failed on our side (${own.map((r) => `${r.source}: ${r.error?.message}`).join("; ")}); the event will be retried`);
    return { polled: results.length, deferred };
  };
  return middy(base).use(injectLambdaContext(logger)).use(logMetrics(metrics));
}
