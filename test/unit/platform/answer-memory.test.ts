/**
 * Room for the platform's answers in one process (lib/platform/answer-memory.ts): small answers always,
 * one large answer at a time, held by its poll until the poll ends.
 */
import { describe, expect, it } from "vitest";
import { AnswerRoom, mayHoldAnswer } from "../../../lib/platform/answer-memory.js";

const MB = 1024 * 1024;

describe("AnswerRoom", () => {
  it("admits small answers to every poll and one large answer at a time", async () => {
    const room = new AnswerRoom(MB);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = room.run(async () => {
      expect(mayHoldAnswer(MB)).toBe(true);
      expect(mayHoldAnswer(5 * MB)).toBe(true);
      await held;
      // The holder reads on: its lease is its own.
      return mayHoldAnswer(20 * MB);
    });
    const second = await room.run(async () => [mayHoldAnswer(MB), mayHoldAnswer(MB + 1)]);
    expect(second).toEqual([true, false]);
    expect(room.deferred).toBe(1);
    release();
    expect(await first).toBe(true);
    // Given back when its poll ended: the next large answer may be held.
    expect(await room.run(async () => mayHoldAnswer(30 * MB))).toBe(true);
  });

  it("gives a poll known to bring a large answer the lease before it reads: another's large answer is deferred instead", async () => {
    const room = new AnswerRoom(MB);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const reserved = room.run(async () => {
      await held;
      return mayHoldAnswer(40 * MB);
    }, { reserve: true });
    // The other poll's answer comes first, and is large: the reserved poll holds the room.
    expect(await room.run(async () => mayHoldAnswer(2 * MB))).toBe(false);
    release();
    expect(await reserved).toBe(true);
    expect(room.deferred).toBe(1);
    expect(await room.run(async () => mayHoldAnswer(2 * MB))).toBe(true);
  });

  it("gives the lease back when the poll that held it throws", async () => {
    const room = new AnswerRoom(MB);
    await expect(room.run(async () => {
      expect(mayHoldAnswer(2 * MB)).toBe(true);
      throw new Error("store unreachable");
    })).rejects.toThrow("store unreachable");
    expect(await room.run(async () => mayHoldAnswer(2 * MB))).toBe(true);
  });

  it("limits nothing outside a poll's room, and each room only its own polls", async () => {
    expect(mayHoldAnswer(500 * MB)).toBe(true);
    const a = new AnswerRoom(MB);
    const b = new AnswerRoom(MB);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const holding = a.run(async () => {
      mayHoldAnswer(2 * MB);
      await held;
    });
    expect(await b.run(async () => mayHoldAnswer(2 * MB))).toBe(true);
    expect(await a.run(async () => mayHoldAnswer(2 * MB))).toBe(false);
    release();
    await holding;
  });
});
