/** What `lookout status` lists as waiting at a receiver, and when that makes it unhealthy (docs/status.md, "Waiting alerts"). */
import { describe, expect, it } from "vitest";
import { waitingAt, WAITING_BOUND_MS, type SeenDelivery } from "../../../lib/status/operations-report.js";
import type { HeldAlert } from "../../../lib/model/notify-store.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";

const NOW = Date.parse("2026-03-01T12:00:00Z");
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const seen = (alert_id: string, state: string, age: number, more: Partial<SeenDelivery> = {}): SeenDelivery =>
  ({ receiver: "slack #oncall", state, updated_at: ago(age), alert_id, ...more });

describe("alerts waiting at a receiver", () => {
  it("lists held alerts and deliveries in flight over a minute, oldest first; not what was settled or cannot be retried", () => {
    const held: HeldAlert[] = [{ receiver_id: "r", held_at: ago(5 * 60_000), detail: { ...EXAMPLE_DETAILS["Cluster Error"], id: "held-1" }, route: "ops" }];
    const deliveries = [
      seen("sending-new", "sending", 30_000), // under a minute: not yet listed
      seen("sending-old", "sending", WAITING_BOUND_MS + 60_000),
      seen("failed-retried", "failed", 2 * 60_000),
      seen("failed-permanent", "failed", 2 * 60_000, { permanent: true }),
      seen("failed-long-ago", "failed", 2 * 3_600_000), // dead-lettered by now
      seen("sent", "sent", 10 * 60_000),
    ];
    expect(waitingAt(held, deliveries, NOW)).toEqual([
      { alert_id: "sending-old", state: "sending", since: ago(WAITING_BOUND_MS + 60_000) },
      { alert_id: "held-1", state: "held", since: ago(5 * 60_000) },
      { alert_id: "failed-retried", state: "failed", since: ago(2 * 60_000) },
    ]);
  });

  it("reads an alert's newest delivery only: one sent after it failed waits no more", () => {
    expect(waitingAt([], [seen("a", "sent", 60_000), seen("a", "failed", 5 * 60_000)], NOW)).toEqual([]);
  });
});
