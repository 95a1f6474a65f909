/**
 * Dispatch as a Lambda handler (EventBridge Scheduler, every minute): plans which sources to poll within
 * the request budget, raises `Lookout Health` events, invokes the poll function with the tick's polls
 * (ten an invocation), and a notify function when alerts are held for its receivers' digests.
 * lib/ingest decides.
 */
import middy from "@middy/core";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import type { Context } from "aws-lambda";
import { planPolls, raiseHealth, watchQueues } from "../../ingest/cycle.js";
import type { QueueSample } from "../../alerts/health.js";
import type { IngestStore } from "../../model/ingest-store.js";
import type { HealthSettings } from "../../config/load.js";
import type { Watchlist } from "../../model/dispatch.js";
import { sourceKey } from "../../model/source.js";
import type { PollRequest } from "../../model/poll.js";
import type { DispatchStore } from "../../model/dispatch-store.js";
import type { IngestServices } from "../ingest.js";
import type { NotifyStore } from "../../model/notify-store.js";
import type { Receiver } from "../../config/route-types.js";
import { receiverId } from "../../config/receivers.js";
import type { ReceiverKind } from "./messages.js";
import { resolveDeps, telemetryOr, type Deps, type Telemetry } from "./telemetry.js";

/** Where planned polls go: the poll function, invoked asynchronously in the cloud (lib/app/cloud/invoke.ts). */
export interface PollSender {
  /** Sends the polls; returns those that could not be sent. */
  send(polls: PollRequest[]): Promise<PollRequest[]>;
}

/**
 * The storm digests' flush: which kinds of receiver have alerts held, and a flush of one kind (the
 * notify function of that kind, invoked asynchronously). Held alerts go out within a tick of being
 * held without a schedule of their own that runs, and costs, every minute when nothing is held.
 */
export interface DigestFlusher {
  held(): Promise<ReceiverKind[]>;
  flush(kind: ReceiverKind): Promise<void>;
}

/** The kinds among these receivers that have an alert held (one key read a receiver). */
export function heldKinds(store: Pick<NotifyStore, "heldFor">, receivers: readonly Receiver[]): () => Promise<ReceiverKind[]> {
  return async () => {
    const kinds = new Set<ReceiverKind>();
    await Promise.all(receivers.map(async (r) => {
      if (!kinds.has(r.type) && (await store.heldFor(receiverId(r), 1)).length) kinds.add(r.type);
    }));
    return [...kinds];
  };
}

/** Reads how many messages wait in each of Lookout's queues: SQS in the cloud (lib/app/cloud/queue-gauge.ts). */
export interface QueueGauge {
  /** Every watched queue; rejects, naming the queues, when any could not be read (the others are in the error's `samples`). */
  sample(): Promise<QueueSample[]>;
}

/** How often dispatch samples the queues: the period of the CloudWatch alarms this replaces. */
export const QUEUE_SAMPLE_EVERY_MS = 5 * 60_000;

export interface DispatchHandlerDeps {
  store: DispatchStore;
  watch: Watchlist;
  polls: PollSender;
  /** Held digests flushed at each tick (absent on one machine: its run loop flushes them). */
  digests?: DigestFlusher;
  /** Where `Lookout Health` events go (the table's outbox). */
  outbox?: Pick<IngestStore, "raiseAlert" | "expiresAt">;
  health?: HealthSettings;
  /** Lookout's queues, watched for dead letters and backlogs (absent on one machine: no queues). */
  queues?: QueueGauge;
  now?: () => number;
}

export interface DispatchOutcome {
  planned: number;
  sent: number;
  /** The kinds of receiver whose held digests were flushed. */
  flushed: ReceiverKind[];
}

/** Dispatch's deps from the composed services and the cloud's adapters. */
export const dispatchDeps = (s: IngestServices, polls: PollSender, queues?: QueueGauge, digests?: DigestFlusher): DispatchHandlerDeps => ({
  store: s.dispatch,
  watch: s.watch,
  polls,
  ...(queues ? { queues } : {}),
  ...(digests ? { digests } : {}),
  outbox: s.pollDeps.store,
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
    const { polls, state } = await planPolls(d.store, d.watch, now);
    if (d.outbox) await raiseHealth(state, d.watch, new Date(now), d.outbox, undefined, d.health);
    // A send that fails is retried once; what still fails is picked up by a later tick (its source stays stale).
    let failed = await d.polls.send(polls);
    if (failed.length) failed = await d.polls.send(failed);
    if (failed.length) logger.warn("polls not sent", { sources: failed.map((p) => sourceKey(p.source)) });
    metrics.addMetric("PollsPlanned", MetricUnit.Count, polls.length);
    metrics.addMetric("PollsNotSent", MetricUnit.Count, failed.length);
    const flushed: ReceiverKind[] = [];
    if (d.digests) {
      // Each kind on its own: one notify function that cannot be invoked does not hold back the other's digests.
      const digests = d.digests;
      const kinds = await digests.held().catch((err: unknown): ReceiverKind[] => {
        unread ??= err;
        return [];
      });
      for (const kind of kinds) {
        await digests.flush(kind).then(() => void flushed.push(kind), (err: unknown) => void (unread ??= err));
      }
    }
    logger.info("tick planned", { planned: polls.length, sent: polls.length - failed.length, flushed });
    // The polls are sent; queues that could not be watched, or held digests that could not be flushed,
    // fail the tick, so its errors alarm says so (a digest not flushed is tried again at the next tick).
    if (unread) throw unread;
    return { planned: polls.length, sent: polls.length - failed.length, flushed };
  };
  return middy(base).use(injectLambdaContext(logger)).use(logMetrics(metrics));
}
