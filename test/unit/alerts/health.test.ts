import { describe, expect, it } from "vitest";
import { healthFromFacts, quarantinedHealth, queueHealth, receiverFailing, type QueueSample } from "../../../lib/alerts/health.js";
import { detailTypeOf } from "../../../lib/model/event.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";

const now = new Date("2026-05-01T12:00:00Z");
const src = "deployment:0b9c3a52-3f9e-4c43-9d5f-1f0f4a2b7c11/6a3c2d1e-5b4f-4a7e-8c9d-0e1f2a3b4c5d";
const anchors = () => "2026-05-01T11:00:00.000Z";

describe("health events", () => {
  it("says once that the token is rejected, not once per source", () => {
    const events = healthFromFacts(
      { failing: [{ source: src, consecutiveFailures: 5, lastError: "unauthenticated" }], stalled: [], tokenRejected: { sources: [src], statuses: [401] } },
      anchors, now,
    );
    expect(events.map((e) => e.transition)).toEqual(["token_rejected"]);
    expect(events[0]).toMatchObject({ kind: "health", severity: "critical", organization: { id: "0b9c3a52-3f9e-4c43-9d5f-1f0f4a2b7c11" } });
    expect(detailTypeOf(events[0]!.kind, events[0]!.transition)).toBe("Lookout Health");
  });

  it("keeps one id per episode, and reminds once a day", () => {
    const facts = { failing: [{ source: src, consecutiveFailures: 3, lastError: "server_error" }], stalled: [], tokenRejected: undefined };
    const a = healthFromFacts(facts, anchors, now)[0]!;
    const b = healthFromFacts(facts, anchors, new Date(now.getTime() + 3_600_000))[0]!;
    const c = healthFromFacts(facts, anchors, new Date(now.getTime() + 86_400_000))[0]!;
    expect(a.id).toBe(b.id);
    expect(c.id).not.toBe(a.id);
    expect(c.summary).toContain("day 2");
    const d = healthFromFacts(facts, () => "2026-05-02T00:00:00.000Z", now)[0]!;
    expect(d.id).not.toBe(a.id); // a new episode
    // Dated when Lookout found it, not at the episode's anchor (a never-successful source's is midnight).
    expect(a.occurred_at).toBe(now.toISOString());
    expect(healthFromFacts(facts, () => undefined, now)[0]!.occurred_at).toBe(now.toISOString());
  });

  it("reports stalled polling and a failing receiver", () => {
    const stalled = healthFromFacts({ failing: [], stalled: [{ source: src, lastOkAt: "2026-05-01T10:00:00.000Z", silentForMs: 7_200_000 }], tokenRejected: undefined }, anchors, now);
    expect(stalled[0]).toMatchObject({ transition: "polling_stalled", severity: "critical" });
    expect(stalled[0]!.summary).toContain("120 min");
    // Never read: said so, anchored on when it was first watched (one event for the episode, however long).
    const never = { source: src, watchedSince: "2026-05-01T07:00:00.000Z", silentForMs: 5 * 3_600_000 };
    const [first] = healthFromFacts({ failing: [], stalled: [never], tokenRejected: undefined }, anchors, now);
    expect(first).toMatchObject({ transition: "polling_stalled", severity: "critical", health: { subject: src } });
    expect(first!.summary).toBe(`${src} has not been read once in 300 min of watching`);
    expect(first!.health?.detail).toMatch(/^Never read since Lookout began watching it at 2026-05-01T07:00:00.000Z\. Check the schedule/);
    const [later] = healthFromFacts({ failing: [], stalled: [{ ...never, silentForMs: 9 * 3_600_000 }], tokenRejected: undefined }, anchors, new Date(now.getTime() + 4 * 3_600_000));
    expect(later!.id).toBe(first!.id);
    const r = receiverFailing(EXAMPLE_DETAILS["Deployment Failed"], "slack #oncall", "HTTP 500", now);
    expect(r).toMatchObject({ transition: "receiver_failing", health: { subject: "slack #oncall" } });
    expect(receiverFailing(EXAMPLE_DETAILS["Deployment Failed"], "slack #oncall", "again", new Date(now.getTime() + 60_000)).id).toBe(r.id);
  });

  it("says a failing receiver once per episode: the run of failures the table keeps, however long it lasts", () => {
    const alert = EXAMPLE_DETAILS["Deployment Failed"];
    const run = { since: "2026-05-01T11:58:00.000Z", consecutive_failures: 1 };
    const first = receiverFailing(alert, "slack #oncall", "no_service", now, run);
    // Hours later, the same run (no success in between): the same event, counted.
    const later = receiverFailing(alert, "slack #oncall", "no_service", new Date(now.getTime() + 5 * 3_600_000), { ...run, consecutive_failures: 40 });
    expect(later.id).toBe(first.id);
    expect(later.health).toMatchObject({ consecutive_failures: 40 });
    // A new run (it worked in between): a new event.
    expect(receiverFailing(alert, "slack #oncall", "no_service", now, { since: "2026-05-01T12:30:00.000Z", consecutive_failures: 1 }).id).not.toBe(first.id);
  });
});

describe("quarantined", () => {
  const thing = { stage: "ingest" as const, kind: "webhook_delivery", id: "d".repeat(3_000), source: src, organization: "org-1", reason: "ValidationException: ".padEnd(5_000, "x") };
  it("is one event per quarantined thing, whenever it is said", () => {
    const a = quarantinedHealth(thing, now);
    const b = quarantinedHealth(thing, new Date(now.getTime() + 3 * 86_400_000));
    expect(b.id).toBe(a.id);
    expect(quarantinedHealth({ ...thing, stage: "publish" }, now).id).not.toBe(a.id);
    expect(quarantinedHealth({ ...thing, id: "other" }, now).id).not.toBe(a.id);
    expect(a).toMatchObject({ kind: "health", transition: "quarantined", severity: "error", health: { check: "quarantined" } });
    expect(detailTypeOf(a.kind, a.transition)).toBe("Lookout Health");
  });
  it("keeps its text short however long the id and the reason", () => {
    const a = quarantinedHealth(thing, now);
    expect(a.summary.length).toBeLessThan(400);
    expect(Buffer.byteLength(JSON.stringify(a))).toBeLessThan(4_000);
  });
});

describe("Lookout's queues", () => {
  const T = Date.parse("2026-05-01T10:00:00.000Z");
  const at = (min: number) => new Date(T + min * 60_000);
  const dlq = (visible: number): QueueSample => ({ queue: "PollDeadLetterQueue", deadLetter: true, what: "poll messages that failed 3 times", visible });
  const work = (visible: number): QueueSample => ({ queue: "SlackQueue", deadLetter: false, what: "the notify-slack function's work", visible });

  it("says dead letters at once and a backlog after 15 minutes, each once an episode, reminded the next day", () => {
    let r = queueHealth([dlq(2), work(1)], {}, "org", at(0));
    expect(r.events.map((e) => e.transition)).toEqual(["dead_letters"]);
    const first = r.events[0]!;
    r = queueHealth([dlq(3), work(4)], r.since, "org", at(10));
    expect(r.events.map((e) => e.transition)).toEqual(["dead_letters"]);
    expect(r.events[0]!.id).toBe(first.id); // the same episode: the outbox keeps one
    r = queueHealth([dlq(3), work(4)], r.since, "org", at(15));
    expect(r.events.map((e) => [e.transition, e.severity, e.health?.subject])).toEqual([["dead_letters", "error", "PollDeadLetterQueue"], ["queue_backlog", "critical", "SlackQueue"]]);
    expect(r.events[1]!.summary).toBe("SlackQueue has not been emptied for 15 min (4 waiting): the notify-slack function's work");
    const nextDay = queueHealth([dlq(3)], r.since, "org", at(24 * 60 + 5));
    expect(nextDay.events[0]!.id).not.toBe(first.id);
    expect(nextDay.events[0]!.summary).toMatch(/\(still, day 2\)$/);
  });

  it("forgets a queue once it is empty, and keeps what it knew of a queue it could not read", () => {
    let r = queueHealth([dlq(1), work(1)], {}, "org", at(0));
    r = queueHealth([work(0)], r.since, "org", at(5));
    expect(r.since).toEqual({ PollDeadLetterQueue: T });
    r = queueHealth([dlq(0)], r.since, "org", at(10));
    expect(r.since).toEqual({});
    expect(r.events).toEqual([]);
  });
});
