/**
 * Dispatch as a Lambda handler (EventBridge Scheduler, every minute): plans which sources to poll within
 * the request budget, raises `Lookout Health` events, invokes the poll function with the tick's polls
 * (ten an invocation), and a notify function when alerts are held for its receivers' digests.
 * lib/dispatch decides.
 */
import middy from "@middy/core";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import type { Context } from "aws-lambda";
import { planPolls, unplanPolls } from "../../dispatch/tick.js";
import { raiseHealth, watchQueues } from "../../dispatch/health-watch.js";
import { DISPATCH_NAME } from "../../dispatch/source-state.js";
import { feedReadsNow, loopAlive } from "../../dispatch/feed-loop.js";
import type { FeedLoopQueue } from "./feed-tick.js";
import type { QueueSample } from "../../alerts/health.js";
import type { IngestStore } from "../../model/ingest-store.js";
import type { HealthSettings } from "../../config/load.js";
import type { DispatchState, FeedLoopState, Watchlist } from "../../model/dispatch.js";
import { sourceKey } from "../../model/source.js";
import type { PollRequest } from "../../model/poll.js";
import type { DispatchStore, FeedLoopStore } from "../../model/dispatch-store.js";
import type { DispatchServices } from "../dispatch.js";
import type { NotifyStore } from "../../model/notify-store.js";
import { escalationKinds, type Receiver, type Route } from "../../config/route-types.js";
import { receiverId } from "../../config/receivers.js";
import { kindOf, type ReceiverKind } from "./messages.js";
import { resolveDeps, telemetryOr, type Deps, type Telemetry } from "./telemetry.js";
import type { Log } from "../../model/log.js";
import type { LookoutEventDetail } from "../../model/event.js";

/** Polls that could not be sent, and why (each distinct reason once). */
export interface UnsentPolls {
  unsent: PollRequest[];
  reasons: string[];
}

/** Where planned polls go: the poll function, invoked asynchronously in the cloud (lib/app/cloud/invoke.ts). */
export interface PollSender {
  /** Sends the polls; returns those that could not be sent. */
  send(polls: PollRequest[]): Promise<UnsentPolls>;
}

/**
 * The storm digests' flush: which kinds of receiver have alerts held or an escalation due (docs/actions.md,
 * "Escalation"), and a flush of one kind (the notify function of that kind, invoked asynchronously). Held
 * alerts go out within a tick of being held, and escalations within a tick of being due, without a
 * schedule of their own that runs, and costs, every minute when nothing is held or due.
 */
export interface DigestFlusher {
  /** `now`: the tick's time (epoch ms), by which escalations are due. */
  held(now: number): Promise<ReceiverKind[]>;
  flush(kind: ReceiverKind): Promise<void>;
}

/** The kinds among these receivers that have an alert held (one key read a receiver). */
export function heldKinds(store: Pick<NotifyStore, "heldFor">, receivers: readonly Receiver[]): () => Promise<ReceiverKind[]> {
  return async () => {
    // One Query of at most one item a receiver, all at once (receivers are few).
    const held = await Promise.all(receivers.map(async (r) => ((await store.heldFor(receiverId(r), 1)).length ? [kindOf(r)] : [])));
    return [...new Set(held.flat())];
  };
}

/** The kinds whose escalations are due (one key read a kind an escalating route sends to), none when no route escalates. */
export function dueEscalationKinds(store: Pick<NotifyStore, "dueEscalations">, routes: readonly Route[]): (now: number) => Promise<ReceiverKind[]> {
  const kinds = [...new Set(routes.flatMap((r) => (r.escalate ? escalationKinds(r) : [])))];
  return async (now) => {
    const due = await Promise.all(kinds.map(async (k) => ((await store.dueEscalations(k, new Date(now).toISOString(), 1)).length ? [k] : [])));
    return due.flat();
  };
}

/** Both: the kinds with alerts held or escalations due. */
export const flushKinds = (...of: Array<(now: number) => Promise<ReceiverKind[]>>) => async (now: number): Promise<ReceiverKind[]> =>
  [...new Set((await Promise.all(of.map((f) => f(now)))).flat())];

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
  /** The change feed's loop: its lease (read each tick), and its queue, where a lost loop is started again (no queue on one machine: its run loop ticks it). */
  feedLoop?: { loops: FeedLoopStore; queue?: FeedLoopQueue };
  now?: () => number;
}

export interface DispatchOutcome {
  planned: number;
  sent: number;
  /** The kinds of receiver whose held digests were flushed. */
  flushed: ReceiverKind[];
}

/** Dispatch's deps from the composed services and the cloud's adapters. */
export const dispatchDeps = (s: DispatchServices, polls: PollSender, queues?: QueueGauge, digests?: DigestFlusher, feedLoop?: FeedLoopQueue): DispatchHandlerDeps => ({
  store: s.dispatch,
  watch: s.watch,
  polls,
  ...(queues ? { queues } : {}),
  ...(digests ? { digests } : {}),
  ...(feedLoop ? { feedLoop: { loops: s.loops, queue: feedLoop } } : {}),
  outbox: s.store,
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
    const { failure, flushed, ...outcome } = await dispatchTick(d, now, {
      log: { error: (message, extra) => logger.error(message, extra ?? {}) },
      metric: (name, n) => metrics.addMetric(name, MetricUnit.Count, n),
    });
    if (failure) unread ??= failure;
    // A lost loop (or none yet: a new stack) is started, when the budget in force has room for it; two
    // started at once keep one (the lease). Not when the tick could not read the loop's state.
    const restart = d.feedLoop?.queue;
    if (restart && outcome.loop !== "unknown" && feedReadsNow(d.watch, outcome.state) && !loopAlive(outcome.loop, now)) {
      await restart.tick(0).then(() => {
        metrics.addMetric("FeedLoopsStarted", MetricUnit.Count, 1);
        logger.warn("change feed loop started", { last_tick_at: outcome.loop && outcome.loop !== "unknown" ? new Date(outcome.loop.beat_at).toISOString() : "never" });
      }, (err: unknown) => void (unread ??= err));
    }
    const { loop: _, state: __, ...counts } = outcome;
    logger.info("tick planned", { ...counts, flushed });
    // Queues that could not be watched, polls not sent, or held digests not flushed fail the tick, so
    // its errors alarm says so (a digest not flushed is tried again at the next tick).
    if (unread) throw unread;
    return { ...counts, flushed };
  };
  return middy(base).use(injectLambdaContext(logger)).use(logMetrics(metrics));
}

/** What the tick tells beyond its outcome: metrics and errors in the cloud; health events raised, on one machine. */
export interface TickHooks {
  log?: Pick<Log, "error">;
  metric?: (name: string, n: number) => void;
  onHealth?: (detail: LookoutEventDetail) => void;
}

/** A tick's outcome, and its first failure (the tick did all it could after it). */
export interface TickOutcome extends TickPlanned {
  flushed: ReceiverKind[];
  failure?: unknown;
}

/**
 * One tick of dispatch, the deployed function's and `lookout run`'s (local/runtime/run.ts, whose polls
 * are sent to this process and whose loop flushes digests itself): plans the polls within the budget,
 * sends them, raises what the state says of polling's health, and flushes held digests whatever became
 * of the polls (a store or platform failure does not hold back what a person is waiting for). A failure
 * does not stop what follows it: the first is returned.
 */
export async function dispatchTick(d: DispatchHandlerDeps, now: number, hooks: TickHooks = {}): Promise<TickOutcome> {
  let failure: unknown;
  let planned: Pick<TickPlanned, "loop" | "state"> = { loop: "unknown" };
  const outcome: TickPlanned = await sendPolls(d, now, hooks, (p) => void (planned = p)).catch((err: unknown) => {
    failure ??= err;
    return { planned: 0, sent: 0, ...planned };
  });
  const flushed = d.digests ? await flushHeld(d.digests, now, (err) => void (failure ??= err)) : [];
  return { ...outcome, flushed, ...(failure === undefined ? {} : { failure }) };
}

/** Plans the tick's polls, raises what the state says of polling's health, and sends the polls. */
async function sendPolls(d: DispatchHandlerDeps, now: number, hooks: TickHooks, onPlanned: (p: Pick<TickPlanned, "loop" | "state">) => void): Promise<TickPlanned> {
  const { polls, state, loop } = await planPolls(d.store, d.watch, now, DISPATCH_NAME, d.feedLoop?.loops);
  onPlanned({ loop, state });
  // A send that fails is retried once. What still fails was not polled after all: its sources are due
  // again and stay stale (polling_stalled), and the tick fails, naming why, so its errors alarm says so.
  let { unsent, reasons } = await d.polls.send(polls);
  if (unsent.length) ({ unsent, reasons } = await d.polls.send(unsent));
  hooks.metric?.("PollsPlanned", polls.length);
  hooks.metric?.("PollsNotSent", unsent.length);
  // After the sends: health that cannot be raised neither keeps planned polls from being sent nor
  // leaves unsent ones marked polled; it fails the tick all the same.
  const health = d.outbox ? await raiseHealth(state, d.watch, new Date(now), d.outbox, hooks.onHealth, d.health).then(() => undefined, (err: unknown) => err) : undefined;
  if (unsent.length) {
    hooks.log?.error("polls not sent", { sources: unsent.map((p) => sourceKey(p.source)), reasons });
    await unplanPolls(d.store, unsent).catch((err: Error) => void reasons.push(`and their sources could not be made due again: ${err.message}`));
    throw new Error(`${unsent.length} of ${polls.length} polls could not be sent to the poll function: ${reasons.join("; ")}`);
  }
  if (health) throw health;
  return { planned: polls.length, sent: polls.length, loop, state };
}

/** What a tick planned: its counts, and the loop's lease and dispatch's state as it read them ("unknown": not read). */
interface TickPlanned {
  planned: number;
  sent: number;
  loop: FeedLoopState | undefined | "unknown";
  state?: DispatchState;
}

/** Flushes the held digests of each kind of receiver on its own: one notify function that cannot be invoked does not hold back the other's. */
async function flushHeld(digests: DigestFlusher, now: number, failed: (err: unknown) => void): Promise<ReceiverKind[]> {
  const flushed: ReceiverKind[] = [];
  const kinds = await digests.held(now).catch((err: unknown): ReceiverKind[] => {
    failed(err);
    return [];
  });
  for (const kind of kinds) await digests.flush(kind).then(() => void flushed.push(kind), failed);
  return flushed;
}
