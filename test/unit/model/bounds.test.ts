/** Size bounds (lib/model/bounds.ts; docs/platform.md, "Field sizes"): keys, records, clipping. */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { CLIP_MARKER, MAX_KEY_PART_BYTES, MAX_RECORD_BYTES, MAX_SHORT_FIELD_BYTES, boundRecord, clipStrings, jsonStringBytes, keyPart } from "../../../lib/model/bounds.js";
import { classifyStatus } from "../../../lib/poll/deployment-status.js";
import { keys } from "../../../lib/model/items.js";
import { dimensionKey } from "../../../lib/model/audit-index.js";

describe("keyPart", () => {
  it("keeps short values whole and bounds long ones, stably and distinctly", () => {
    expect(keyPart("3f2e1d0c-9b8a-4765-8432-10fedcba9876")).toBe("3f2e1d0c-9b8a-4765-8432-10fedcba9876");
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("a", "é", "😀", "#", "\ud800"), minLength: 150, maxLength: 5_000 }), fc.string({ maxLength: 3 }), (v, w) => {
        const k = keyPart(v);
        expect(Buffer.byteLength(k, "utf8")).toBeLessThanOrEqual(Math.max(MAX_KEY_PART_BYTES, 300));
        expect(keyPart(v)).toBe(k);
        if (w) expect(keyPart(v + w)).not.toBe(k);
      }),
      { numRuns: 200 },
    );
  });

  it("bounds every table and index key built from platform values", () => {
    const long = "s".repeat(300_000);
    for (const k of [keys.execution(long, long), keys.record("webhook_delivery", long), keys.service(long), keys.directory(long), keys.quarantine(long, "ingest")]) {
      expect(Buffer.byteLength(k.pk)).toBeLessThan(1024);
    }
    for (const dim of ["actor", "status", "service", "webhook"] as const) expect(Buffer.byteLength(dimensionKey(dim, long).key)).toBeLessThan(1024);
    expect(dimensionKey("actor", long).key).toBe(dimensionKey("actor", long.toUpperCase()).key); // normalized before hashing
  });
});

describe("boundRecord", () => {
  it("keeps two ids that differ only past the cut apart: a clipped id carries a hash of the whole", () => {
    const stem = "D".repeat(300_000);
    const [a, b] = [1, 2].map((i) => boundRecord({ id: `${stem}-${i}`, message: "x" }));
    expect(a!.id).not.toBe(b!.id);
    expect(a!.clipped).toEqual(["id"]);
    const { clipped: _, ...stored } = a!;
    expect(Buffer.byteLength(JSON.stringify(stored))).toBeLessThanOrEqual(MAX_RECORD_BYTES);
    expect(boundRecord({ id: `${stem}-1`, message: "x" }).id).toBe(a!.id);
  });

  it("clips short fields to 1 KB and the whole to its budget, ids last, and lists what it clipped", () => {
    const r = boundRecord({
      id: "i".repeat(3_000), service_id: "s".repeat(3_000), status: "E".repeat(300_000), triggered_by: "t".repeat(2_000),
      error: { message: "m".repeat(200_000) }, request: { payload: { note: "p".repeat(150_000) } },
    });
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(MAX_RECORD_BYTES + 1_000);
    expect(r.id).toHaveLength(3_000);
    expect(r.service_id).toHaveLength(3_000);
    expect(Buffer.byteLength(r.status)).toBeLessThanOrEqual(1_024);
    expect(r.status).toContain(CLIP_MARKER.slice(0, -1)); // with a hash of the whole, and its end after it
    expect(r.clipped).toEqual(expect.arrayContaining(["status", "triggered_by", "error.message", "request.payload.note"]));
  });

  it("returns the record itself when nothing is too long", () => {
    const rec = { id: "x", status: "DEPLOYED", error: { message: "short" } };
    expect(boundRecord(rec)).toBe(rec);
  });

  it("fits any shape of strings in the budget when enough of it is text", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "\n", '"', "é", "😀"), maxLength: 4_000 });
    fc.assert(
      fc.property(fc.array(fc.tuple(text, fc.integer({ min: 1, max: 60 })), { minLength: 1, maxLength: 8 }), fc.integer({ min: 2_000, max: 40_000 }), (parts, limit) => {
        const value = Object.fromEntries(parts.map(([s, n], i) => [`f${i}`, s.repeat(n)]));
        const r = clipStrings(value, { maxBytes: limit, minKeptBytes: 16 });
        const size = Buffer.byteLength(JSON.stringify(r.value));
        expect(r.bytes).toBe(size);
        if (parts.length * 40 < limit) expect(size).toBeLessThanOrEqual(limit);
      }),
      { numRuns: 100 },
    );
  });
});

describe("a status longer than a kilobyte", () => {
  const status = (value: string) => boundRecord({ id: "e-1", status: value });

  it("is left as it is up to a kilobyte", () => {
    expect(status("DEPLOYMENT_ERROR")).toEqual({ id: "e-1", status: "DEPLOYMENT_ERROR" });
  });

  it("keeps both of its ends, so that it is classified as the whole is, and stays distinct from another", () => {
    for (const n of [3_000, 300_000]) {
      const failed = `QUANTUM${"_X".repeat(n / 2)}_ERROR`;
      const bounded = status(failed);
      expect(bounded.clipped).toEqual(["status"]);
      expect(jsonStringBytes(bounded.status)).toBeLessThanOrEqual(MAX_SHORT_FIELD_BYTES);
      expect(classifyStatus(bounded.status)).toBe("failure");
      expect(bounded.status.startsWith("QUANTUM_X")).toBe(true);
      expect(status(failed.replace("QUANTUM_X_X", "QUANTUM_Y_X")).status).not.toBe(bounded.status);
      expect(classifyStatus(status(`${"A".repeat(n)}_RUNNING`).status)).toBe("in_progress");
    }
    // A tail of multi-byte characters is cut between code points.
    expect(status(`${"A".repeat(2000)}${"😀".repeat(100)}`).status).toMatch(/😀+$/u);
  });
});
