import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { MAX_ENTRY_BYTES, MAX_REQUEST_BYTES, entrySize } from "../../../lib/alerts/bus.js";
import type { LookoutEventDetail } from "../../../lib/model/event.js";
import {
  CLIP_MARKER,
  chunkEntries,
  clipDetail,
  publishAlerts,
  toBusEntry,
  toEnvelope,
} from "../../../lib/alerts/publish.js";
import { fullJitterMs } from "../../../lib/model/backoff.js";
import { FakeEventBridge, ValidationException, byId } from "../../support/fake-eventbridge.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";

const BUS = "lookout";
const base = EXAMPLE_DETAILS["Deployment Failed"];
const detail = (i: number, over: Partial<LookoutEventDetail> = {}): LookoutEventDetail => ({ ...base, id: `alert-${String(i).padStart(2, "0")}`, ...over });
const many = (n: number) => Array.from({ length: n }, (_, i) => detail(i));

/** Sleep that records the delays asked for and does not wait. */
function recordingSleep() {
  const delays: number[] = [];
  return { delays, sleep: async (ms: number) => void delays.push(ms) };
}

describe("toBusEntry / toEnvelope", () => {
  it("maps a detail to a PutEvents entry: source lookout, detail-type from kind+transition, detail as JSON", () => {
    const e = toBusEntry(EXAMPLE_DETAILS["Webhook Delivery Failed"], BUS);
    expect(e).toEqual({
      Source: "lookout",
      DetailType: "Webhook Delivery Failed",
      EventBusName: BUS,
      Time: new Date("2026-03-02T14:08:02.331Z"),
      Resources: [],
      Detail: JSON.stringify(EXAMPLE_DETAILS["Webhook Delivery Failed"]),
    });
  });

  it("gives every example its own detail-type", () => {
    for (const [dt, d] of Object.entries(EXAMPLE_DETAILS)) expect(toBusEntry(d, BUS).DetailType).toBe(dt);
  });

  it("refuses a detail whose transition has no detail-type", () => {
    expect(() => toBusEntry({ ...base, transition: "exploded" as never }, BUS)).toThrow(/no detail-type/);
  });

  it("builds EventBridge's envelope, time to the second", () => {
    const env = toEnvelope(base, { account: "111122223333", region: "eu-west-1", time: "2026-03-02T14:08:02.114Z", eventId: "ev-1" });
    expect(env).toEqual({
      version: "0",
      id: "ev-1",
      "detail-type": "Deployment Failed",
      source: "lookout",
      account: "111122223333",
      time: "2026-03-02T14:08:02Z",
      region: "eu-west-1",
      resources: [],
      detail: base,
    });
  });
});

describe("publishAlerts", () => {
  it("sends 25 alerts in 3 calls of at most 10, in order", async () => {
    const bus = new FakeEventBridge();
    const details = many(25);
    const r = await publishAlerts(details, bus, { busName: BUS });
    expect(bus.calls.map((c) => c.length)).toEqual([10, 10, 5]);
    expect(r.published).toEqual(details.map((d) => d.id));
    expect(r.failed).toEqual([]);
    expect(bus.acceptedIds()).toEqual(details.map((d) => d.id));
  });

  it("retries only the entries that failed, with jittered backoff, until they are published", async () => {
    const bus = new FakeEventBridge()
      .failFirst(2, byId("alert-03", "alert-07"), "ThrottlingException")
      .failFirst(1, byId("alert-12"), "InternalFailure");
    const { delays, sleep } = recordingSleep();
    const r = await publishAlerts(many(15), bus, { busName: BUS, sleep, random: () => 0.5, baseDelayMs: 100, maxDelayMs: 1000 });

    expect(r.failed).toEqual([]);
    expect([...r.published].sort()).toEqual(many(15).map((d) => d.id));
    // Round 1: 10 + 5; round 2: the three that failed; round 3: the two still throttled.
    const ids = (call: number) => bus.calls[call]!.map((e) => JSON.parse(e.Detail).id);
    expect(bus.calls.map((c) => c.length)).toEqual([10, 5, 3, 2]);
    expect(ids(2)).toEqual(["alert-03", "alert-07", "alert-12"]);
    expect(ids(3)).toEqual(["alert-03", "alert-07"]);
    expect(bus.attemptsOf("alert-03")).toBe(3);
    expect(bus.attemptsOf("alert-12")).toBe(2);
    expect(bus.attemptsOf("alert-00")).toBe(1);
    // Full jitter: random (0.5) × min(max, base × 2^(attempt-1)).
    expect(delays).toEqual([50, 100]);
  });

  it("reports an entry that keeps failing as failed after maxAttempts, and publishes the others", async () => {
    const bus = new FakeEventBridge().failAlways(byId("alert-04"), "InternalFailure");
    const { delays, sleep } = recordingSleep();
    const r = await publishAlerts(many(6), bus, { busName: BUS, maxAttempts: 4, sleep, random: () => 1 });
    expect(r.failed).toEqual([{ id: "alert-04", errorCode: "InternalFailure", errorMessage: expect.stringContaining("InternalFailure") }]);
    expect(r.published).toEqual(["alert-00", "alert-01", "alert-02", "alert-03", "alert-05"]);
    expect(bus.attemptsOf("alert-04")).toBe(4);
    expect(delays).toHaveLength(3);
    expect(delays.every((d, i) => d <= 100 * 2 ** i)).toBe(true);
  });

  it("does not retry an entry whose error no retry can fix", async () => {
    const bus = new FakeEventBridge().failAlways(byId("alert-01"), "NotAuthorizedForDetailTypeException");
    const { delays, sleep } = recordingSleep();
    const r = await publishAlerts(many(3), bus, { busName: BUS, sleep });
    expect(r.failed.map((f) => [f.id, f.errorCode])).toEqual([["alert-01", "NotAuthorizedForDetailTypeException"]]);
    expect(bus.attemptsOf("alert-01")).toBe(1);
    expect(delays).toEqual([]);
  });

  it("counts a call that throws (network) as all its entries failed, and retries them", async () => {
    const network = Object.assign(new Error("socket hang up"), { name: "TimeoutError" });
    const bus = new FakeEventBridge().throwOnNextCalls(network);
    const { delays, sleep } = recordingSleep();
    const r = await publishAlerts(many(12), bus, { busName: BUS, sleep, random: () => 0 });
    expect(bus.calls.map((c) => c.length)).toEqual([10, 2, 10]);
    expect(r.published).toHaveLength(12);
    expect(r.failed).toEqual([]);
    expect(delays).toEqual([0]);
  });

  it("reports every entry of a call rejected as invalid without retrying it", async () => {
    const bus = new FakeEventBridge().throwOnNextCalls(new ValidationException("bad request"));
    const r = await publishAlerts(many(3), bus, { busName: BUS, sleep: async () => {} });
    expect(r.failed.map((f) => f.errorCode)).toEqual(["ValidationException", "ValidationException", "ValidationException"]);
    expect(bus.calls).toHaveLength(1);
  });

  it("reports as failed, after maxAttempts, entries whose calls keep throwing", async () => {
    const down = () => Object.assign(new Error("connect ECONNREFUSED"), { name: "Error" });
    const bus = new FakeEventBridge().throwOnNextCalls(down(), down(), down());
    const r = await publishAlerts(many(2), bus, { busName: BUS, maxAttempts: 3, sleep: async () => {} });
    expect(r.published).toEqual([]);
    expect(r.failed.map((f) => [f.id, f.errorCode])).toEqual([["alert-00", "CallFailed"], ["alert-01", "CallFailed"]]);
  });

  it("fails a detail with no detail-type on its own, without sending it", async () => {
    const bus = new FakeEventBridge();
    const r = await publishAlerts([detail(1), detail(2, { transition: "melted" as never })], bus, { busName: BUS });
    expect(r.published).toEqual(["alert-01"]);
    expect(r.failed).toEqual([{ id: "alert-02", errorCode: "InvalidDetail", errorMessage: expect.stringContaining("melted") }]);
    expect(bus.calls.flat()).toHaveLength(1);
  });

  it("clips an oversized detail's long text with a marker instead of failing it", async () => {
    const bus = new FakeEventBridge();
    const huge = "npm ERR! ".repeat(40_000); // 360 KB
    const d = detail(1, { error: { ...base.error, message: huge, hint: "short hint" } });
    const r = await publishAlerts([d, detail(2)], bus, { busName: BUS });
    expect(r.published).toEqual(["alert-01", "alert-02"]);
    expect(r.clipped).toEqual(["alert-01"]);
    const sent = bus.accepted[0]!.entry;
    expect(entrySize(sent)).toBeLessThanOrEqual(MAX_ENTRY_BYTES);
    const got = JSON.parse(sent.Detail) as LookoutEventDetail;
    expect(got.error!.message!.endsWith(CLIP_MARKER)).toBe(true);
    expect(huge.startsWith(got.error!.message!.slice(0, -CLIP_MARKER.length))).toBe(true);
    expect(got.error!.message!.length).toBeGreaterThan(200_000); // clipped to fit, not emptied
    expect({ ...got, error: undefined, clipped: undefined }).toEqual({ ...d, error: undefined });
    expect(got.clipped).toEqual(["error.message"]);
    expect(got.error!.hint).toBe("short hint");
  });

  it("keeps each call under 256 KB in total, even with fewer than 10 entries", async () => {
    const bus = new FakeEventBridge(); // throws ValidationException above 256 KB per call
    const big = (i: number) => detail(i, { error: { message: "x".repeat(100_000) } });
    const r = await publishAlerts([big(1), big(2), big(3), big(4), big(5)], bus, { busName: BUS });
    expect(r.failed).toEqual([]);
    expect(bus.calls.map((c) => c.length)).toEqual([2, 2, 1]);
    for (const c of bus.calls) expect(c.reduce((n, e) => n + entrySize(e), 0)).toBeLessThanOrEqual(MAX_REQUEST_BYTES);
  });
});

describe("clipDetail", () => {
  it("returns the detail itself when it fits", () => {
    expect(clipDetail(base, MAX_ENTRY_BYTES)).toBe(base);
  });

  it("clips the longest text first and leaves short ones alone", () => {
    const d = detail(1, {
      summary: "s".repeat(5_000),
      deployment: { ...base.deployment!, commit: { message: "m".repeat(50_000) } },
      http: { status_code: 500, response_excerpt: "r".repeat(20_000) },
    });
    const c = clipDetail(d, 40_000);
    expect(Buffer.byteLength(JSON.stringify(c))).toBeLessThanOrEqual(40_000);
    expect(c.deployment!.commit!.message!.endsWith(CLIP_MARKER)).toBe(true);
    expect(c.http!.response_excerpt).toBe(d.http!.response_excerpt);
    expect(c.summary).toBe(d.summary);
    expect(d.deployment!.commit!.message).toHaveLength(50_000); // the input is not changed
  });

  it("fits any text, escapes and multi-byte characters included, in the limit", () => {
    const text = fc.string({ unit: "grapheme", maxLength: 3000 });
    const ascii = fc.string({ unit: fc.constantFrom("\n", '"', "\\", "\u0001", "a", "é", "😀", "\ud800"), maxLength: 3000 });
    fc.assert(
      fc.property(fc.oneof(text, ascii), fc.oneof(text, ascii), fc.integer({ min: 3_000, max: 12_000 }), (msg, excerpt, limit) => {
        const d = detail(1, { error: { message: msg.repeat(5) }, http: { status_code: null, response_excerpt: excerpt.repeat(3) } });
        const c = clipDetail(d, limit);
        const size = Buffer.byteLength(JSON.stringify(c));
        if (Buffer.byteLength(JSON.stringify(d)) <= limit) expect(c).toBe(d);
        else expect(size).toBeLessThanOrEqual(limit);
        // What is kept is a prefix of the original, cut between code points (never inside a surrogate pair).
        for (const [got, orig] of [[c.error?.message, d.error?.message], [c.http?.response_excerpt, d.http?.response_excerpt]] as const) {
          if (!got?.endsWith(CLIP_MARKER) || got === orig) continue;
          const kept = got.slice(0, -CLIP_MARKER.length);
          expect(orig!.startsWith(kept)).toBe(true);
          const splitPair = /[\ud800-\udbff]$/.test(kept) && /^[\udc00-\udfff]/.test(orig!.slice(kept.length));
          expect(splitPair).toBe(false);
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe("chunkEntries and the publisher's backoff", () => {
  it("splits by count and by bytes, keeping order", () => {
    expect(chunkEntries([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], () => 1).map((c) => c.length)).toEqual([10, 1]);
    expect(chunkEntries([200_000, 50_000, 20_000, 262_144], (n) => n)).toEqual([[200_000, 50_000], [20_000], [262_144]]);
    expect(chunkEntries([], () => 1)).toEqual([]);
  });

  it("grows exponentially to the cap, scaled by the random factor", () => {
    // publishAlerts waits floor(fullJitterMs(attempt - 1)) before attempt + 1.
    const wait = (attempt: number, random: () => number) => Math.floor(fullJitterMs(attempt - 1, { baseDelayMs: 100, maxDelayMs: 1000 }, random));
    expect([1, 2, 3, 4, 5, 6].map((a) => wait(a, () => 0.999))).toEqual([99, 199, 399, 799, 999, 999]);
    expect(wait(3, () => 0)).toBe(0);
  });
});

describe("clipDetail on any field", () => {
  it("shortens any string field when the free-text ones are not enough, ids last, and lists what it shortened", () => {
    const huge = "x".repeat(300_000);
    const d = detail(1, {
      deployment: { ...base.deployment!, duration: huge, commit: { ...base.deployment!.commit, tag: huge } },
      http: { status_code: 500, delivery_kind: huge },
    });
    const c = clipDetail(d, MAX_ENTRY_BYTES - 1_000);
    expect(Buffer.byteLength(JSON.stringify(c))).toBeLessThanOrEqual(MAX_ENTRY_BYTES - 1_000);
    expect(c.clipped).toEqual(expect.arrayContaining(["deployment.duration", "deployment.commit.tag", "http.delivery_kind"]));
    for (const v of [c.deployment!.duration!, c.deployment!.commit!.tag!, c.http!.delivery_kind!]) expect(v.endsWith(CLIP_MARKER)).toBe(true);
    // What identifies and routes the event is kept whole.
    expect([c.id, c.kind, c.transition, c.severity, c.organization.id]).toEqual([d.id, d.kind, d.transition, d.severity, d.organization.id]);
    expect(c.deployment!.execution_id).toBe(d.deployment!.execution_id);
  });

  it("shortens a long id only when nothing else is left", () => {
    const d = detail(1, { service: { id: "s".repeat(300_000), name: "n".repeat(200) } });
    const c = clipDetail(d, 100_000);
    expect(Buffer.byteLength(JSON.stringify(c))).toBeLessThanOrEqual(100_000);
    expect(c.service!.name).toBe(d.service!.name);
    expect(c.clipped).toEqual(["service.id"]);
  });
});
