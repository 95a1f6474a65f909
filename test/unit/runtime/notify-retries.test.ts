/**
 * The one-machine redelivery of unfinished notifications (local/runtime/notify-retries.ts): what is owed is
 * kept on disk across restarts, delivered again at each pass, and dead-lettered after its attempts.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEAD_LETTERS_FILE, NotifyRetries, RETRIES_FILE } from "../../../local/runtime/notify-retries.js";
import { unfinished, type Delivery } from "../../../lib/notify/notifier.js";
import type { DeliveryOutcome } from "../../../lib/notify/deliver.js";
import type { LookoutEventEnvelope } from "../../../lib/model/event.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";

const log = { info() {}, warn() {}, error() {} };
const envelope = (id: string) => ({ "detail-type": "Deployment Failed", source: "lookout", detail: { ...EXAMPLE_DETAILS["Deployment Failed"], id } }) as unknown as LookoutEventEnvelope;
const d = (outcome: DeliveryOutcome, route = "oncall"): Delivery => ({ route, receiver: "slack #oncall", outcome });

/** A receiver whose outcomes are scripted per alert id; records each call. */
function scripted(outcomes: Record<string, DeliveryOutcome[]>) {
  const calls: string[] = [];
  const notify = async (e: LookoutEventEnvelope) => {
    calls.push(e.detail.id);
    return [d(outcomes[e.detail.id]?.shift() ?? "sent")];
  };
  return { notify, calls };
}

describe("unfinished deliveries", () => {
  it("are those another sender holds, and failures that may pass, the fallback's too", () => {
    expect(unfinished([d("sent"), d("duplicate"), d("muted"), d("held")])).toBe(false);
    expect(unfinished([d("sent"), d("in_flight")])).toBe(true);
    expect(unfinished([d("failed")])).toBe(true);
    // A receiver refused it for good and the fallback failed for now: retried until the fallback shows it.
    expect(unfinished([d("failed", "fallback"), d("rejected")])).toBe(true);
    // Failed for a reason retrying cannot fix: the fallback and a health event said so; not retried.
    expect(unfinished([d("sent", "fallback"), d("rejected")])).toBe(false);
  });
});

describe("NotifyRetries", () => {
  it("keeps an event whose delivery broke mid-way (an exception, not an outcome) and delivers it at the next pass", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "lookout-retries-"));
    const errors: string[] = [];
    let broken = 2;
    const notify = async () => {
      if (broken-- > 0) throw new Error("connect ECONNREFUSED 127.0.0.1:8000");
      return [d("sent")];
    };
    const q = new NotifyRetries({ dataDir, notify, now: () => new Date("2026-03-02T14:00:00Z"), log: { ...log, error: (m: string) => errors.push(m) } });
    expect(await q.deliver(envelope("x"))).toEqual([]);
    expect(await q.retry()).toBe(1); // broke again: still owed
    expect(await q.retry()).toBe(0);
    expect(errors).toEqual(["delivery interrupted; it will be retried", "delivery interrupted; it will be retried"]);
  });

  it("keeps what is owed across a restart and delivers it again until it is done", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "lookout-retries-"));
    const { notify, calls } = scripted({ a: ["in_flight", "failed", "duplicate"], b: ["sent"] });
    const opts = { dataDir, notify, now: () => new Date("2026-03-02T14:00:00Z"), log };
    const first = new NotifyRetries(opts);
    await first.deliver(envelope("a"));
    await first.deliver(envelope("b"));
    expect(Object.keys(JSON.parse(readFileSync(join(dataDir, RETRIES_FILE), "utf8")))).toEqual(["a"]);
    // A new process (a restart) finds it and tries again: still failing, then done.
    const second = new NotifyRetries(opts);
    expect(await second.retry()).toBe(1);
    expect(await second.retry()).toBe(0);
    expect(calls).toEqual(["a", "b", "a", "a"]);
    expect(await second.retry()).toBe(0);
    expect(calls).toHaveLength(4);
  });

  it("dead-letters an event after its attempts, saying so", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "lookout-retries-"));
    const errors: string[] = [];
    const { notify } = scripted({ a: Array(10).fill("failed") });
    const retries = new NotifyRetries({ dataDir, notify, now: () => new Date(), log: { ...log, error: (m: string) => void errors.push(m) }, maxAttempts: 3 });
    await retries.deliver(envelope("a"));
    expect(await retries.retry()).toBe(1);
    expect(await retries.retry()).toBe(1);
    expect(existsSync(join(dataDir, DEAD_LETTERS_FILE))).toBe(false);
    expect(await retries.retry()).toBe(0);
    const [dead] = readFileSync(join(dataDir, DEAD_LETTERS_FILE), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { attempts: number; envelope: LookoutEventEnvelope });
    expect(dead).toMatchObject({ attempts: 3, envelope: { detail: { id: "a" } } });
    expect(errors).toEqual(["gave up delivering an event; it is in the dead letters"]);
  });
});
