import { describe, expect, it } from "vitest";
import { compareInstants, instantOr, parseTimestamp, plausibleInstant, readPlatformTime } from "../../../lib/model/time.js";

const utc = (iso: string) => Date.parse(iso);

describe("platform timestamps as instants", () => {
  it("reads zones, offsets, a missing zone (UTC) and fractions of any length", () => {
    expect(parseTimestamp("2026-03-02T14:07:31Z")).toEqual({ ms: utc("2026-03-02T14:07:31Z"), nanos: 0 });
    expect(parseTimestamp("2026-03-02T16:07:31+02:00")?.ms).toBe(utc("2026-03-02T14:07:31Z"));
    expect(parseTimestamp("2026-03-02T09:37:31-0430")?.ms).toBe(utc("2026-03-02T14:07:31Z"));
    expect(parseTimestamp("2026-03-02T15:07:31+01")?.ms).toBe(utc("2026-03-02T14:07:31Z"));
    expect(parseTimestamp("2026-03-02T14:07:31")?.ms).toBe(utc("2026-03-02T14:07:31Z"));
    expect(parseTimestamp("2026-03-02 14:07:31.5")?.ms).toBe(utc("2026-03-02T14:07:31.500Z"));
    expect(parseTimestamp("2026-03-02")?.ms).toBe(utc("2026-03-02T00:00:00Z"));
    expect(parseTimestamp("2026-03-02T14:07:31.123456789Z")).toEqual({ ms: utc("2026-03-02T14:07:31.123Z"), nanos: 456789 });
    // Digits beyond nanoseconds are ignored, not misread.
    expect(parseTimestamp("2026-03-02T14:07:31.1234567891234Z")).toEqual({ ms: utc("2026-03-02T14:07:31.123Z"), nanos: 456789 });
    expect(parseTimestamp("9999-01-01T00:00:00Z")?.ms).toBe(utc("9999-01-01T00:00:00Z"));
  });

  it("crosses midnight, months and years with an offset", () => {
    expect(parseTimestamp("2026-01-01T01:30:00+02:00")?.ms).toBe(utc("2025-12-31T23:30:00Z"));
    expect(parseTimestamp("2024-02-29T23:00:00-02:00")?.ms).toBe(utc("2024-03-01T01:00:00Z"));
  });

  it("refuses what is not a timestamp, a day that does not exist included", () => {
    for (const bad of [
      "", "yesterday", "1767225600", "2026-02-31T00:00:00Z", "2026-13-01", "2026-01-01T24:00:00Z", "2026-01-01T10:61:00Z",
      "2026-01-01T10:00:00+25:00", "2026-01-01T10:00:00Zjunk", "x".repeat(100_000), `2026-01-01T00:00:00.${"9".repeat(50_000)}Zx`,
    ]) {
      expect(parseTimestamp(bad), bad.slice(0, 40)).toBeUndefined();
    }
    expect(parseTimestamp(undefined)).toBeUndefined();
    expect(parseTimestamp(null)).toBeUndefined();
  });

  it("orders by instant, not by text", () => {
    const texts = ["2026-03-02T14:00:00.000000002Z", "2026-03-02T15:30:00+02:00", "2026-03-02T14:00:00.000000001Z", "2026-03-02T13:45:00"];
    const sorted = [...texts].sort((a, b) => compareInstants(parseTimestamp(a)!, parseTimestamp(b)!));
    expect(sorted).toEqual(["2026-03-02T15:30:00+02:00", "2026-03-02T13:45:00", "2026-03-02T14:00:00.000000001Z", "2026-03-02T14:00:00.000000002Z"]);
    // As text the offset one would sort last, and the zone-less one after the UTC ones.
    expect([...texts].sort()).not.toEqual(sorted);
  });

  it("finds implausible what is before 1970 or more than a day ahead of Lookout's clock", () => {
    const now = utc("2026-03-02T14:00:00Z");
    expect(plausibleInstant("9999-01-01T00:00:00Z", now)).toBeUndefined();
    expect(plausibleInstant("2026-03-03T15:00:00Z", now)).toBeUndefined();
    expect(plausibleInstant("2026-03-03T13:00:00Z", now)?.ms).toBe(utc("2026-03-03T13:00:00Z"));
    expect(plausibleInstant("0001-01-01T00:00:00Z", now)).toBeUndefined();
    expect(plausibleInstant("garbage", now)).toBeUndefined();
  });

  it("stores the instant, and the platform's text only when it says more or other", () => {
    const seen = "2026-03-02T14:00:00.000Z";
    expect(readPlatformTime("2026-03-02T13:00:00Z", seen)).toEqual({ iso: "2026-03-02T13:00:00.000Z" });
    expect(readPlatformTime("2026-03-02T13:00:00.000Z", seen)).toEqual({ iso: "2026-03-02T13:00:00.000Z" });
    expect(readPlatformTime("2026-03-02T15:00:00+02:00", seen)).toEqual({ iso: "2026-03-02T13:00:00.000Z", raw: "2026-03-02T15:00:00+02:00" });
    expect(readPlatformTime("2026-03-02T13:00:00.000000500Z", seen)).toEqual({ iso: "2026-03-02T13:00:00.000Z", raw: "2026-03-02T13:00:00.000000500Z" });
    expect(readPlatformTime("9999-01-01T00:00:00Z", seen)).toEqual({ raw: "9999-01-01T00:00:00Z" });
    expect(readPlatformTime("soon", seen)).toEqual({ raw: "soon" });
    expect(readPlatformTime(undefined, seen)).toEqual({});
  });

  it("falls back to when Lookout saw it, as an instant", () => {
    const seen = "2026-03-02T14:00:00.000Z";
    expect(instantOr("2026-03-02T15:00:00+02:00", seen)).toBe("2026-03-02T13:00:00.000Z");
    expect(instantOr("9999-01-01T00:00:00Z", seen)).toBe(seen);
    expect(instantOr("not a time", seen)).toBe(seen);
    expect(instantOr(undefined, "2026-03-02T16:00:00+02:00")).toBe(seen);
  });
});
