import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendFile, mkdtemp, readFile, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LookoutEventEnvelope } from "../../../lib/model/event.js";
import { publishAlerts, toBusEntry } from "../../../lib/alerts/publish.js";
import { LocalBus } from "../../../local/runtime/local-bus.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "lookout-bus-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const lines = async (file: string) =>
  (await readFile(file, "utf8")).split("\n").filter(Boolean).map((l) => JSON.parse(l) as LookoutEventEnvelope);

describe("local bus", () => {
  it("writes one EventBridge envelope per line and gives each entry its event id", async () => {
    let n = 0;
    const bus = new LocalBus({ dataDir: join(dir, "data"), newId: () => `ev-${++n}` });
    const details = Object.values(EXAMPLE_DETAILS);
    const res = await bus.putEvents(details.slice(0, 3).map((d) => toBusEntry(d, "lookout")));
    expect(res).toEqual({ FailedEntryCount: 0, Entries: [{ EventId: "ev-1" }, { EventId: "ev-2" }, { EventId: "ev-3" }] });
    await bus.putEvents([toBusEntry(details[3]!, "lookout")]);

    const got = await lines(join(dir, "data", "events.ndjson"));
    expect(got).toHaveLength(4);
    expect(got[0]).toEqual({
      version: "0",
      id: "ev-1",
      "detail-type": "Deployment Failed",
      source: "lookout",
      account: "000000000000",
      time: "2026-03-02T14:08:02Z",
      region: "us-east-1",
      resources: [],
      detail: details[0],
    });
    expect(got.map((e) => e["detail-type"])).toEqual(["Deployment Failed", "Deployment Still Failing", "Deployment Recovered", "Deployment Cancelled"]);
    expect(got.map((e) => e.detail)).toEqual(details.slice(0, 4));
  });

  it("rejects more than 10 entries in one call, as PutEvents does, and writes nothing", async () => {
    const bus = new LocalBus({ dataDir: dir });
    const entry = toBusEntry(EXAMPLE_DETAILS["Cluster Error"], "lookout");
    await expect(bus.putEvents(Array(11).fill(entry))).rejects.toMatchObject({ name: "ValidationException" });
    expect(existsSync(join(dir, "events.ndjson"))).toBe(false);
  });

  it("fails a malformed entry on its own and accepts the others", async () => {
    const bus = new LocalBus({ dataDir: dir });
    const good = toBusEntry(EXAMPLE_DETAILS["Cluster Error"], "lookout");
    const res = await bus.putEvents([good, { ...good, Detail: "{not json" }, { ...good, DetailType: "Deployment Failed" }]);
    expect(res.FailedEntryCount).toBe(2);
    expect(res.Entries[1]).toMatchObject({ ErrorCode: "MalformedDetail" });
    expect(res.Entries[2]).toMatchObject({ ErrorCode: "InvalidArgument" });
    expect(await lines(bus.file)).toHaveLength(1);
  });

  it("hands each accepted envelope to subscribers; a failing subscriber fails neither the put nor the others", async () => {
    const errors: unknown[] = [];
    const bus = new LocalBus({ dataDir: dir, onSubscriberError: (e) => errors.push(e) });
    const seen: string[] = [];
    bus.subscribe(() => {
      throw new Error("router down");
    });
    const off = bus.subscribe(async (env) => void seen.push(env.detail.id));
    const r = await publishAlerts(Object.values(EXAMPLE_DETAILS), bus, { busName: "lookout" });
    expect(r.published).toHaveLength(10);
    // In the order they happened, an incident's opening before what follows it at the same instant.
    const happened = Object.values(EXAMPLE_DETAILS)
      .map((d, i) => ({ d, i }))
      .sort((a, b) => Date.parse(a.d.occurred_at) - Date.parse(b.d.occurred_at) || (a.d.incident_id === a.d.id ? 0 : 1) - (b.d.incident_id === b.d.id ? 0 : 1) || a.i - b.i);
    expect(seen).toEqual(happened.map(({ d }) => d.id));
    expect(errors).toHaveLength(10);
    off();
    await bus.putEvents([toBusEntry(EXAMPLE_DETAILS["Lookout Health"], "lookout")]);
    expect(seen).toHaveLength(10);
    // That alert is in the file already: not written twice.
    expect(await lines(bus.file)).toHaveLength(10);
  });

  it("writes each alert once, across restarts, and still tells subscribers of a replay", async () => {
    const health = EXAMPLE_DETAILS["Lookout Health"];
    const failed = EXAMPLE_DETAILS["Deployment Failed"];
    await new LocalBus({ dataDir: dir }).putEvents([toBusEntry(health, "lookout")]);
    // The next run (a crash came before the stream checkpoint) puts it again, beside a new one.
    const again = new LocalBus({ dataDir: dir });
    const told: string[] = [];
    again.subscribe((env) => void told.push(env.detail.id));
    const res = await again.putEvents([toBusEntry(health, "lookout"), toBusEntry(failed, "lookout")]);
    expect(res.FailedEntryCount).toBe(0);
    expect(told).toEqual([health.id, failed.id]);
    await again.putEvents([toBusEntry(failed, "lookout")]);
    expect((await lines(again.file)).map((e) => e.detail.id)).toEqual([health.id, failed.id]);
  });

  it("starts a line of its own after one a crash cut short, and writes that alert again whole", async () => {
    const health = EXAMPLE_DETAILS["Lookout Health"];
    const bus = new LocalBus({ dataDir: dir });
    await bus.putEvents([toBusEntry(EXAMPLE_DETAILS["Deployment Failed"], "lookout")]);
    const whole = JSON.stringify({ detail: health });
    await appendFile(bus.file, whole.slice(0, 40), "utf8");
    await new LocalBus({ dataDir: dir }).putEvents([toBusEntry(health, "lookout")]);
    const text = await readFile(bus.file, "utf8");
    const parsed = text.split("\n").filter(Boolean).flatMap((l) => {
      try {
        return [JSON.parse(l) as LookoutEventEnvelope];
      } catch {
        return [];
      }
    });
    expect(parsed.map((e) => e.detail.id)).toEqual([EXAMPLE_DETAILS["Deployment Failed"].id, health.id]);
    expect(text.endsWith("\n")).toBe(true);
  });

  it("keeps lines whole when puts run concurrently", async () => {
    const bus = new LocalBus({ dataDir: dir });
    const big = { ...EXAMPLE_DETAILS["Cluster Error"], error: { message: "e".repeat(50_000) } };
    await Promise.all(Array.from({ length: 20 }, (_, i) => bus.putEvents([toBusEntry({ ...big, id: `c-${i}` }, "lookout")])));
    const got = await lines(bus.file);
    expect(got.map((e) => e.detail.id).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `c-${i}`).sort());
  });
});
