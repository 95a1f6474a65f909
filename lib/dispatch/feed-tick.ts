/** The change feed's loop's tick (lib/dispatch/feed-loop.ts holds its rules): the feed read, then what it named polled. */
import type { DispatchStore, FeedLoopStore } from "../model/dispatch-store.js";
import type { Watchlist } from "../model/dispatch.js";
import type { PollRequest, PollResult } from "../model/poll.js";
import { claimFeedTick, FEED_LOOP, feedReadsPerTick, planHot, readsDone, withLoopRead, type FeedClaim } from "./feed-loop.js";
import { applyPollResult, DISPATCH_NAME, initialState } from "./source-state.js";
import { pollBatch } from "./poll-batch.js";
import type { PollDeps } from "../poll/poll.js";
import { pollTogether } from "../poll/together.js";

export interface FeedTickOutcome {
  /** False when another loop holds the lease (or there is no loop to run): this loop ends. */
  claimed: boolean;
  /** Why a tick was refused: another loop holds the lease, the budget in force leaves the loop no read, or no webhook is watched. */
  refused?: "lease" | "no_room" | "no_feed";
  /** The feed reads', then the named services' polls' results. */
  results: PollResult[];
}

/**
 * One tick of the change feed's loop (lib/dispatch/feed-loop.ts): claims the lease, reads the feed, and
 * polls at once the services it named. Dispatch's state is written only when the feed brought news (the
 * loop's own reads go to its small item, stamped once answered), and the news and the polls it calls for
 * in one write. `renew` (the cloud's next tick) goes right after the claim; when it fails the tick still
 * reads, and fails afterwards.
 */
export async function feedTick(
  d: {
    dispatch: DispatchStore; loops: FeedLoopStore; watch: Watchlist; pollDeps: PollDeps;
    /** Once the lease is won, before the reads: the cloud's loop sends its next tick's message. */
    renew?: () => Promise<void>;
  },
  now: number,
  name = DISPATCH_NAME,
): Promise<FeedTickOutcome> {
  if (!feedReadsPerTick(d.watch)) return { claimed: false, refused: "no_feed", results: [] };
  const state = await d.dispatch.get(name);
  let claim: FeedClaim | undefined;
  let held = false;
  await d.loops.update(name, (current) => {
    held = current !== undefined && now - current.beat_at < FEED_LOOP.leaseGapMs;
    return (claim = claimFeedTick(current, state, d.watch, now))?.loop;
  });
  if (!claim) return { claimed: false, refused: held ? "lease" : "no_room", results: [] };
  const renewed = d.renew ? await d.renew().then(() => undefined, (err: unknown) => err) : undefined;
  const { polls, rotating } = claim;
  const feed = await pollTogether(polls, d.pollDeps);
  if (feed.length) await d.loops.update(name, (current) => current && readsDone(current, feed, now, rotating));
  let hot: PollRequest[] = [];
  if (feed.length) {
    await d.dispatch.update(name, (current) => {
      let next = current ?? initialState(d.watch, now);
      let changed = false;
      for (const r of feed) {
        // The loop's read counts as the source's poll, written only with the news it brought.
        next = { ...next, sources: { ...next.sources, [r.source]: withLoopRead(next.sources[r.source] ?? {}, now) } };
        const applied = applyPollResult(next, r, now, d.watch);
        next = applied.state;
        changed ||= applied.changed;
      }
      const plan = planHot(next, d.watch, now);
      hot = plan.polls;
      return changed || hot.length ? plan.state : undefined;
    });
  }
  const results = [...feed, ...(hot.length ? await pollBatch(hot, d.pollDeps, d.dispatch, d.watch, name, { settlesClaim: true }) : [])];
  if (renewed) throw renewed;
  return { claimed: true, results };
}
