/**
 * The pipeline on the simulator's clock, tick by tick: each simulated minute dispatch's tick (the deployed
 * function's, lib/app/dispatch-tick.ts) plans the polls, and they run through the real poller in
 * batches as the poll function takes them (`pollBatch` → `pollSource` over HTTP, the ingest store on
 * DynamoDB; dispatch told once a batch), a few batches at a time; with the change feed's loop (`loops`),
 * its ticks follow every ten seconds of the minute (the first at the minute's own time, after
 * dispatch's); then the clock moves on to the next minute. Used by the benchmarks and the load test, so
 * both measure the same thing.
 */
import pMap from "p-map";
import type { Simulator } from "../simulator/index.js";
import type { DispatchState, Watchlist } from "../../lib/model/dispatch.js";
import { feedTick } from "../../lib/dispatch/feed-tick.js";
import { pollBatch, pollBatches } from "../../lib/dispatch/poll-batch.js";
import { dispatchTick } from "../../lib/app/dispatch-tick.js";
import { FEED_LOOP } from "../../lib/dispatch/feed-loop.js";
import { DISPATCH_POLICY } from "../../lib/dispatch/source-state.js";
import type { PollDeps } from "../../lib/poll/poll.js";
import type { PollResult } from "../../lib/model/poll.js";
import type { DispatchStore, FeedLoopStore } from "../../lib/model/dispatch-store.js";

export const TICK_MS = 60_000;
export const POLL_CONCURRENCY = 4;

/** One dispatch tick after another on the simulator's clock, keeping what the benchmark needs to explain. */
export class TickRunner {
  ticks = 0;
  polls = 0;
  failedPolls = 0;
  /** Failed polls by the source's kind and the error's (`cluster timeout`), to say why. */
  readonly failedPollKinds = new Map<string, number>();
  /**
   * Polls deferred by another poll's large answer in their batch: planned again at the next tick with a
   * batch's room to themselves, so not failures — unless one source is deferred more times in a row
   * than dispatch allows (`deferralsBeforeFailure`), which dispatch counts as a failure and so does this.
   */
  deferredPolls = 0;
  private readonly deferralStreak = new Map<string, number>();
  requests = 0;
  newRecords = 0;
  readonly polledSources = new Set<string>();
  /** Requests sent per tick, in order. */
  readonly perTick: number[] = [];
  /** Source key → simulated times it was polled. */
  readonly pollTimes = new Map<string, number[]>();

  /** Ticks of the change feed's loop, and of them those that claimed it. */
  loopTicks = 0;
  /** Whether a tick of the loop is running (what the store is asked meanwhile is the loop's). */
  inFeedTick = false;

  constructor(
    private readonly sim: Simulator,
    private readonly watch: Watchlist,
    private readonly dispatch: DispatchStore,
    private readonly deps: PollDeps,
    /** The change feed's loop's store: with it, the loop ticks within each minute. */
    private readonly loops?: FeedLoopStore,
  ) {}

  async tick() {
    const at = this.sim.clock.nowMs();
    // Dispatch's tick as the deployed function runs it, its polls sent to the poller here.
    const { failure, state } = await dispatchTick({
      store: this.dispatch, watch: this.watch, ...(this.loops ? { feedLoop: { loops: this.loops } } : {}),
      polls: {
        send: async (polls) => {
          const results = (await pMap(pollBatches(polls), (batch) => pollBatch(batch, this.deps, this.dispatch, this.watch), { concurrency: POLL_CONCURRENCY })).flat();
          this.record(results, at);
          return { unsent: [], reasons: [] };
        },
      },
    }, at);
    if (failure) throw failure;
    // What dispatch's tick raised polling's health from (lib/app/dispatch-tick.ts).
    this.plannedState = state;
    if (this.loops) {
      for (let t = at; t < at + TICK_MS; t += FEED_LOOP.everyMs) {
        this.sim.clock.set(new Date(t));
        this.inFeedTick = true;
        const outcome = await feedTick({ dispatch: this.dispatch, loops: this.loops, watch: this.watch, pollDeps: this.deps }, t).finally(() => {
          this.inFeedTick = false;
        });
        if (outcome.claimed) this.loopTicks++;
        this.record(outcome.results, t);
      }
    }
    this.perTick.push(this.minuteRequests);
    this.minuteRequests = 0;
    this.ticks++;
    this.sim.clock.set(new Date(at + TICK_MS));
  }

  private minuteRequests = 0;
  /** The state dispatch planned its latest tick into, and raised polling's health from. */
  plannedState: DispatchState | undefined;

  private record(results: readonly PollResult[], at: number) {
    this.minuteRequests += results.reduce((n, r: PollResult) => n + r.requests, 0);
    for (const r of results) {
      this.polls++;
      this.requests += r.requests;
      this.newRecords += r.newRecords;
      const streak = r.error?.kind === "deferred" ? (this.deferralStreak.get(r.source) ?? 0) + 1 : 0;
      this.deferralStreak.set(r.source, streak);
      if (streak && streak <= DISPATCH_POLICY.deferralsBeforeFailure) this.deferredPolls++;
      else if (!r.ok) {
        this.failedPolls++;
        const kind = `${r.source.split(":")[0]} ${r.error?.kind ?? "unknown"}`;
        this.failedPollKinds.set(kind, (this.failedPollKinds.get(kind) ?? 0) + 1);
      }
      this.polledSources.add(r.source);
      const times = this.pollTimes.get(r.source) ?? [];
      times.push(at);
      this.pollTimes.set(r.source, times);
    }
  }

  maxInWindow(ticks: number): number {
    let sum = 0;
    let max = 0;
    this.perTick.forEach((n, i) => {
      sum += n - (i >= ticks ? this.perTick[i - ticks]! : 0);
      max = Math.max(max, sum);
    });
    return max;
  }
}
