/** What `lookout status` says of the change feed's loop (docs/status.md): beating, lost or off, never a reason to be unhealthy. */
import { describe, expect, it } from "vitest";
import { statusLines, statusReport, type StatusFacts, type StatusSettings } from "../../../lib/status/operations-report.js";
import { FEED_LOOP } from "../../../lib/dispatch/feed-loop.js";
import { watchlist } from "../../../lib/dispatch/watchlist.js";
import type { FeedLoopState } from "../../../lib/model/dispatch.js";

const NOW = Date.parse("2026-03-01T12:00:00Z");
const ORG = "6a1c0f9e-0000-4000-8000-000000000001";
const settings = (webhooks: number, rph = 1000): StatusSettings => ({
  watch: watchlist({
    platform: { url: "http://x", tokenRef: "env:T", auth: "token", requestsPerHour: rph, timeoutMs: 10_000 },
    watch: [{ organization: ORG, webhooks: Array.from({ length: webhooks }, (_, i) => `6a1c0f9e-0000-4000-8000-00000000010${i}`), clusters: [], applications: [] }],
  }),
  receivers: [], digestWithinMs: 60_000, failingAfter: 3,
});
const facts = (loop?: FeedLoopState): StatusFacts => ({ now: NOW, dispatch: undefined, loop, receivers: [], quarantine: { rows: [], more: false } });
const loopLine = (f: StatusFacts, s: StatusSettings) => statusLines(statusReport(f, s)).find((l) => l.startsWith("change feed loop:"));

describe("the change feed's loop in lookout status", () => {
  it("is beating while it ticked within 30 s, lost after, and shown without making Lookout unhealthy", () => {
    const beating = statusReport(facts({ beat_at: NOW - 5_000, reads: {} }), settings(1));
    expect(beating.feed_loop).toEqual({ state: "beating", last_tick_at: new Date(NOW - 5_000).toISOString(), reads_per_tick: 1 });
    const lost = statusReport(facts({ beat_at: NOW - FEED_LOOP.lostAfterMs - 1, reads: {} }), settings(1));
    expect(lost).toMatchObject({ verdict: "healthy", feed_loop: { state: "lost" } });
    expect(loopLine(facts({ beat_at: NOW - FEED_LOOP.lostAfterMs - 1, reads: {} }), settings(1))).toMatch(/^change feed loop: LOST: dispatch restarts it at its next tick/);
  });

  it("is off when it never ticked (cron runs), no webhook is watched, or the budget has no room for it", () => {
    expect(statusReport(facts(), settings(1)).feed_loop.state).toBe("off");
    expect(loopLine(facts(), settings(1))).toMatch(/not running \(it never ticked, as with cron runs\)/);
    expect(statusReport(facts({ beat_at: NOW, reads: {} }), settings(0)).feed_loop).toMatchObject({ state: "off", reads_per_tick: 0 });
    expect(loopLine(facts({ beat_at: NOW, reads: {} }), settings(1, 600))).toMatch(/not running \(no webhook watched, or no room for it/);
  });
});
