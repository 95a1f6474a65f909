/**
 * One tick of dispatch, the same for the deployed function (lib/app/lambda/dispatch.ts) and each pass of
 * `lookout run` (local/runtime/run.ts): the polls planned within the budget and sent, polling's health
 * raised, held digests and due escalations flushed. Where polls go and how digests are flushed are
 * ports: the poll and notify functions invoked in the cloud, this process on one machine.
 */
import { planPolls, unplanPolls } from "../dispatch/tick.js";
import { raiseHealth } from "../dispatch/health-watch.js";
import { DISPATCH_NAME } from "../dispatch/source-state.js";
import type { IngestStore } from "../model/ingest-store.js";
import type { HealthSettings } from "../config/load.js";
import type { DispatchState, FeedLoopState, Watchlist } from "../model/dispatch.js";
import { sourceKey } from "../model/source.js";
import type { PollRequest } from "../model/poll.js";
import type { DispatchStore, FeedLoopStore } from "../model/dispatch-store.js";
import type { NotifyStore } from "../model/notify-store.js";
import { escalationKinds, type Receiver, type Route } from "../config/route-types.js";
import { receiverId } from "../config/receivers.js";
import { kindOf, type ReceiverKind } from "./lambda/messages.js";
import type { Log } from "../model/log.js";
import type { LookoutEventDetail } from "../model/event.js";

/** Polls that could not be sent, and why (each distinct reason once). */
export interface UnsentPolls {
  unsent: PollRequest[];
  reasons: string[];
}

/** Where planned polls go: the poll function, invoked asynchronously in the cloud (lib/app/cloud/invoke.ts). */
export interface PollSender {
  /** Sends the polls the tick at `plannedAt` planned; returns those that could not be sent. */
  send(polls: PollRequest[], plannedAt: number): Promise<UnsentPolls>;
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

/** What a tick needs. */
export interface DispatchTickDeps {
  store: DispatchStore;
  watch: Watchlist;
  polls: PollSender;
  /** Held digests flushed at each tick (absent on one machine: its run loop flushes them). */
  digests?: DigestFlusher;
  /** Where `Lookout Health` events go (the table's outbox). */
  outbox?: Pick<IngestStore, "raiseAlert" | "expiresAt">;
  health?: HealthSettings;
  /** The change feed's loop's lease, read each tick: while it beats, the tick leaves the feed to it. */
  feedLoop?: { loops: FeedLoopStore };
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
export async function dispatchTick(d: DispatchTickDeps, now: number, hooks: TickHooks = {}): Promise<TickOutcome> {
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
async function sendPolls(d: DispatchTickDeps, now: number, hooks: TickHooks, onPlanned: (p: Pick<TickPlanned, "loop" | "state">) => void): Promise<TickPlanned> {
  const { polls, state, loop } = await planPolls(d.store, d.watch, now, DISPATCH_NAME, d.feedLoop?.loops);
  onPlanned({ loop, state });
  // A send that fails is retried once. What still fails was not polled after all: its sources are due
  // again and stay stale (polling_stalled), and the tick fails, naming why, so its errors alarm says so.
  let { unsent, reasons } = await d.polls.send(polls, now);
  if (unsent.length) ({ unsent, reasons } = await d.polls.send(unsent, now));
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
export interface TickPlanned {
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
