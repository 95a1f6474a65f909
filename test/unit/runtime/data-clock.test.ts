import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dataClockLine, dataClockNow, writeDataClock } from "../../../local/runtime/data-clock.js";

describe("a data folder's own clock (the demo's)", () => {
  const T = Date.parse("2026-03-02T10:00:00Z");
  const MIN = 60_000;

  it("runs at its speed from where it was written, and at the wall clock's once the demo wrote speed 1", () => {
    const dir = mkdtempSync(join(tmpdir(), "lookout-data-clock-"));
    try {
      expect(dataClockNow(dir, T)).toBeUndefined(); // a folder written on the wall clock
      writeDataClock(dir, { at: new Date(T + 2 * MIN), speed: 5 }, new Date(T));
      expect(dataClockNow(dir, T + MIN)).toBe(T + 7 * MIN);
      writeDataClock(dir, { at: new Date(T + 7 * MIN), speed: 1 }, new Date(T + MIN));
      expect(dataClockNow(dir, T + 3 * MIN)).toBe(T + 9 * MIN);
      writeFileSync(join(dir, "clock.json"), '{"at": "soon", "speed": 5}');
      expect(dataClockNow(dir, T)).toBeUndefined();
      // A folder that cannot take it: nothing thrown, nothing written.
      writeDataClock(join(dir, "no-such-folder"), { at: new Date(T), speed: 1 });
      expect(dataClockNow(join(dir, "no-such-folder"), T)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("says how far it is from the wall clock", () => {
    expect(dataClockLine(T + 6 * MIN, T)).toBe("lookout: this folder's data was written on the demo's clock, read on it: 2026-03-02 10:06:00 UTC there, 6 min ahead of yours");
  });
});
