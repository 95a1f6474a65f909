/**
 * What a list source has stored, by id (lib/poll/seen.ts): the cursor keeps the latest ids, older
 * ones are sealed into parts that each fit a DynamoDB item, and what is no longer listed goes.
 */
import { describe, expect, it } from "vitest";
import { SEEN_INLINE_BYTES, SEEN_PART_BYTES, addSeen, emptySeen, hasSeen, listDigest, seenId, type Seen } from "../../../lib/poll/seen.js";
import { contentHash, contentHashOf } from "../../../lib/model/hash.js";

const hashes = (n: number, from = 0) => Array.from({ length: n }, (_, i) => contentHash("entry", from + i));
const bytes = (ids: string[]) => Buffer.byteLength(JSON.stringify(ids), "utf8");
const all = (s: Seen) => [...s.inline, ...s.parts.flatMap((p) => p.ids)];

describe("seen ids of a list source", () => {
  it("a few new ids stay in the cursor: no part written", () => {
    const ids = hashes(10);
    const { seen, put, dropped } = addSeen(emptySeen(), ids, new Set(ids));
    expect(seen.inline).toEqual(ids);
    expect([put, dropped, seen.parts]).toEqual([[], [], []]);
  });

  it("50,000 ids are sealed into parts that each fit an item; the cursor keeps the rest, under its own bound", () => {
    const ids = hashes(50_000);
    const listed = new Set(ids);
    let seen = emptySeen();
    const put: string[] = [];
    // As a flood is stored: a chunk of 1,000 at a time.
    for (let i = 0; i < ids.length; i += 1_000) {
      const change = addSeen(seen, ids.slice(i, i + 1_000), listed);
      expect(change.dropped).toEqual([]);
      put.push(...change.put.map((p) => p.part));
      seen = change.seen;
    }
    expect(bytes(seen.inline)).toBeLessThanOrEqual(SEEN_INLINE_BYTES + 100);
    for (const p of seen.parts) {
      expect(bytes(p.ids)).toBeLessThanOrEqual(SEEN_PART_BYTES + 100);
      expect(p.part).toBe(contentHashOf(p.ids));
    }
    expect(seen.parts.map((p) => p.part)).toEqual(put);
    expect(all(seen).toSorted()).toEqual(ids.toSorted());
    const known = hasSeen(seen);
    expect(ids.every(known)).toBe(true);
    expect(known(contentHash("entry", -1))).toBe(false);
  });

  it("a new run replaces the list: every part goes, and the cursor keeps only what is listed", () => {
    const first = hashes(20_000);
    const { seen } = addSeen(emptySeen(), first, new Set(first));
    expect(seen.parts.length).toBeGreaterThan(0);
    const next = hashes(5, 1e6);
    const change = addSeen(seen, next, new Set(next));
    expect(change.seen).toEqual({ inline: next, parts: [], missing: [] });
    expect(change.dropped.toSorted()).toEqual(seen.parts.map((p) => p.part).toSorted());
  });

  it("a part is kept whole while some of its ids are listed, and sealed again once most are not", () => {
    const ids = hashes(20_000);
    const { seen } = addSeen(emptySeen(), ids, new Set(ids));
    const [oldest] = seen.parts;
    // The list drops its oldest 1,000: the parts stay as they are.
    const later = new Set(ids.slice(1_000));
    const kept = addSeen(seen, [], later);
    expect(kept.put).toEqual([]);
    expect(kept.seen.parts).toEqual(seen.parts);
    // Three quarters gone: what is listed is sealed again, the old parts dropped.
    const left = ids.slice(15_000);
    const resealed = addSeen(seen, [], new Set(left));
    expect(resealed.dropped).toContain(oldest!.part);
    expect(all(resealed.seen).toSorted()).toEqual(left.toSorted());
  });

  it("an id of any length is kept within a key's bound; a list's digest does not depend on its order", () => {
    expect(Buffer.byteLength(seenId("x".repeat(100_000)))).toBeLessThanOrEqual(200);
    expect(seenId("a-uuid")).toBe("a-uuid");
    expect(listDigest(["b", "a"])).toBe(listDigest(["a", "b"]));
    expect(listDigest(["a"])).not.toBe(listDigest(["a", "b"]));
  });
});
