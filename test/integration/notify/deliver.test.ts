/**
 * The delivery core on DynamoDB Local: once per (alert, receiver), mutes, storm digests, threading
 * lookups, failures. The channel is a recording adapter of our own port; the store is real.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { PutCommand, DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { deliver, flushHeld, type Channel, type DeliverDeps } from "../../../lib/notify/deliver.js";
import { markCarriedStage } from "../../../lib/notify/delivery/carry.js";
import { DIGEST_GATHER_MS } from "../../../lib/notify/delivery/rate.js";
import type { Mute } from "../../../lib/model/notify-store.js";
import { DynamoNotifyStore } from "../../../lib/store/notify-store.js";
import { newAlertItem } from "../../../lib/alerts/outbox-item.js";
import { DeliveryError, type IncidentRef } from "../../../lib/notify/types.js";
import type { LookoutEventDetail } from "../../../lib/model/event.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";

const examples = { failed: EXAMPLE_DETAILS["Deployment Failed"] };
import { freshTable, TEST_RETENTION_MS } from "../../support/dynamodb.js";

let store: DynamoNotifyStore;
let doc: DynamoDBDocumentClient;
let tableName: string;
let clock = Date.parse("2026-03-01T10:00:00Z");
const now = () => new Date(clock);
const log = { info() {}, warn() {}, error() {} };

beforeAll(async () => {
  const t = await freshTable("deliver");
  tableName = t.tableName;
  doc = DynamoDBDocumentClient.from(t.client);
  store = new DynamoNotifyStore({ client: t.client, tableName, retentionMs: TEST_RETENTION_MS, now });
});

function recordingChannel(id: string, opts: { fail?: () => DeliveryError | undefined; readBack?: boolean; readFails?: boolean; afterDigest?: () => Promise<void> } = {}) {
  const sent: Array<{ detail: LookoutEventDetail; incident?: IncidentRef }> = [];
  const digests: LookoutEventDetail[][] = [];
  const digestIds: string[] = [];
  let n = 0;
  const channel: Channel = {
    id, label: `test ${id}`,
    async send(detail, incident) {
      const err = opts.fail?.();
      if (err) throw err;
      sent.push({ detail, ...(incident ? { incident } : {}) });
      return { ts: `${++n}.000100`, channel: "C1" };
    },
    async sendDigest(held, window) {
      digests.push(held);
      digestIds.push(window.id);
      const ts = `${++n}.000200`;
      await opts.afterDigest?.(); // the receiver took it; what happens to its sender next
      return { ts };
    },
  };
  // Like Slack's history: what was sent for an id (a send may have got through and still thrown).
  const reads: Array<{ id: string; since: string }> = [];
  if (opts.readBack) {
    channel.findSent = async (alertId, since) => {
      reads.push({ id: alertId, since: since.toISOString() });
      if (opts.readFails) throw new DeliveryError("missing_scope", false);
      const d = digestIds.indexOf(alertId);
      if (d !== -1) return { ts: `d${d}` };
      const i = sent.findIndex((s) => s.detail.id === alertId);
      return i === -1 ? undefined : { ts: `${i + 1}.000100`, channel: "C1" };
    };
  }
  return { channel, sent, digests, reads };
}

/** A storm at `channel`: `n` alerts past a burst of 3, held for its digest. */
async function heldStorm(channel: Channel, d: DeliverDeps, n: number): Promise<LookoutEventDetail[]> {
  const storm = Array.from({ length: n }, () => alert());
  for (const a of storm) await deliver(a, "route", channel, [], d);
  return storm;
}

let seq = 0;
const alert = (over: Partial<LookoutEventDetail> = {}): LookoutEventDetail => ({ ...examples.failed, id: `alert-${++seq}`, ...over });
const deps = (over: Partial<DeliverDeps> = {}): DeliverDeps => ({ store, now, rate: { perSecond: 1, burst: 10 }, log, ...over });

describe("delivery", () => {
  it("sends once per alert and receiver, however often the alert arrives, even concurrently", async () => {
    const { channel, sent } = recordingChannel("r-once");
    const a = alert();
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => deliver(a, "route", channel, [], deps())));
    expect(outcomes.filter((o) => o === "sent")).toHaveLength(1);
    // The others found it sent, or still being sent (then whoever delivers them comes back).
    expect(outcomes.filter((o) => o === "duplicate" || o === "in_flight")).toHaveLength(4);
    expect(await deliver(a, "route", channel, [], deps())).toBe("duplicate");
    expect(sent).toHaveLength(1);
    const [record] = await store.deliveriesOf(a.id);
    expect(record).toMatchObject({ state: "sent", ts: "1.000100", receiver_label: "test r-once", route: "route", attempts: 1 });
  });

  it("records a muted alert as suppressed, naming the mute, and sends nothing", async () => {
    const { channel, sent } = recordingChannel("r-mute");
    const mute: Mute = {
      id: "m1", scope: { environment: examples.failed.environment!.name! }, until: new Date(clock + 3_600_000).toISOString(),
      reason: "maintenance", created_by: "ann@example.com", created_at: new Date(clock - 1000).toISOString(),
    };
    const a = alert();
    expect(await deliver(a, "route", channel, [mute], deps())).toBe("muted");
    expect(sent).toHaveLength(0);
    const [record] = await store.deliveriesOf(a.id);
    expect(record).toMatchObject({ state: "suppressed", suppression: { reason: "mute", mute_id: "m1" } });
    expect(record!.suppression!.detail).toContain("maintenance");
    // An expired mute no longer applies.
    const b = alert();
    expect(await deliver(b, "route", channel, [{ ...mute, until: new Date(clock - 1).toISOString() }], deps())).toBe("sent");
  });

  it("turns a storm into one digest of what was held back, dropping nothing", async () => {
    const { channel, sent, digests } = recordingChannel("r-storm");
    const d = deps({ rate: { perSecond: 1, burst: 3 } });
    const storm = Array.from({ length: 8 }, () => alert());
    const outcomes = [];
    for (const a of storm) outcomes.push(await deliver(a, "route", channel, [], d));
    expect(outcomes.filter((o) => o === "sent")).toHaveLength(3);
    expect(outcomes.filter((o) => o === "held")).toHaveLength(5);
    clock += DIGEST_GATHER_MS;
    const next = alert();
    expect(await deliver(next, "route", channel, [], d)).toBe("sent");
    expect(digests).toHaveLength(1);
    expect(digests[0]!.map((x) => x.id).sort()).toEqual(storm.slice(3).map((x) => x.id).sort());
    expect(sent.at(-1)!.detail.id).toBe(next.id);
    for (const a of storm.slice(3)) expect((await store.getDelivery(a.id, channel.id))).toMatchObject({ state: "sent" });
    expect(await store.heldFor(channel.id)).toHaveLength(0);
    expect(await flushHeld(channel, d)).toBe(0);
  });

  describe("a digest sent again carries what it did the first time", () => {
    const ids = (xs: readonly LookoutEventDetail[]) => xs.map((x) => x.id).sort();
    /** More alerts than the refilled burst: those held for a digest. */
    const heldLater = async (channel: Channel, d: DeliverDeps) => {
      const out: LookoutEventDetail[] = [];
      for (const a of Array.from({ length: 6 }, () => alert())) if ((await deliver(a, "route", channel, [], d)) === "held") out.push(a);
      return out;
    };
    const shownTwice = (digests: LookoutEventDetail[][]) => {
      const all = digests.flatMap((g) => g.map((x) => x.id));
      return all.filter((x, i) => all.indexOf(x) !== i);
    };

    it("its sender died after the receiver took it, more were held since: read back, then the rest in the next", async () => {
      let die = true;
      const { channel, digests } = recordingChannel("r-digest-crash", { readBack: true, afterDigest: () => (die ? new Promise<void>(() => {}) : Promise.resolve()) });
      const d = deps({ rate: { perSecond: 1, burst: 3 } });
      const first = (await heldStorm(channel, d, 8)).slice(3);
      clock += 61_000;
      void flushHeld(channel, d); // Slack takes the digest; its sender never answers (the worker died)
      await new Promise((r) => setTimeout(r, 200));
      die = false;
      const later = await heldLater(channel, d);
      expect(later.length).toBeGreaterThan(0);
      clock += 61_000; // its lease ran out
      expect(await flushHeld(channel, d)).toBe(5); // found at the receiver: settled, not sent again
      expect(digests.map(ids)).toEqual([ids(first)]);
      for (const a of first) expect(await store.getDelivery(a.id, channel.id)).toMatchObject({ state: "sent" });
      clock += 61_000;
      expect(await flushHeld(channel, d)).toBe(later.length);
      expect(digests.map(ids)).toEqual([ids(first), ids(later)]);
      expect(shownTwice(digests)).toEqual([]);
      expect(await store.heldFor(channel.id)).toEqual([]);
    });

    it("the receiver failed after it may have taken it: where it cannot be read back, the same digest once more, the rest apart", async () => {
      let failing = true;
      const { channel, digests } = recordingChannel("r-digest-blind", { afterDigest: async () => { if (failing) throw new DeliveryError("503 after taking it", true, 503); } });
      const d = deps({ rate: { perSecond: 1, burst: 3 } });
      const first = (await heldStorm(channel, d, 6)).slice(3);
      clock += 61_000;
      expect(await flushHeld(channel, d)).toBe(0);
      failing = false;
      const later = await heldLater(channel, d);
      clock += 61_000;
      expect(await flushHeld(channel, d)).toBe(3);
      clock += 61_000;
      expect(await flushHeld(channel, d)).toBe(later.length);
      expect(digests.map(ids)).toEqual([ids(first), ids(first), ids(later)]);
    });

    it("at an ordered receiver, a close another digest's trigger is ahead of waits for the digest after it", async () => {
      const { channel } = recordingChannel("r-digest-ordered");
      channel.ordered = true;
      const opened = alert();
      const trigger = { ...opened, incident_id: opened.id };
      const close = alert({ transition: "recovered", incident_id: trigger.id });
      const h = (detail: LookoutEventDetail, at: number) => ({ receiver_id: channel.id, held_at: new Date(at).toISOString(), detail, route: "route" });
      await store.hold(h(trigger, clock));
      await store.hold(h(close, clock + 1));
      // Digest A marked the trigger after digest B read both: B may carry the close alone only after A.
      expect(await store.markHeld(h(trigger, clock), "digest-a")).toBe(true);
      const { record } = await store.claim("digest-b", channel.id, { receiver_label: channel.label, route: "digest" }, 60_000);
      const b = { id: "digest-b", route: "digest", channel, deps: deps(), held: [h(trigger, clock), h(close, clock + 1)], claimed: record, incident: async () => undefined };
      expect(await markCarriedStage(b)).toBe(0);
      expect((await store.heldFor(channel.id)).map((x) => [x.detail.id, x.digest_id])).toEqual([[trigger.id, "digest-a"], [close.id, undefined]]);
      // With its trigger in the same digest, the close goes with it.
      const { record: own } = await store.claim("digest-a", channel.id, { receiver_label: channel.label, route: "digest" }, 60_000);
      const a = { ...b, id: "digest-a", claimed: own, held: [h(trigger, clock), h(close, clock + 1)] };
      expect(await markCarriedStage(a)).toBeUndefined();
      expect(a.held.map((x) => x.detail.id)).toEqual([trigger.id, close.id]);
    });

    it("an alert whose sender died after holding it, before recording it, is held and shown once however often it comes", async () => {
      for (const digestDue of [false, true]) {
        const { channel, digests } = recordingChannel(`r-hold-twice-${digestDue}`);
        const d = deps({ rate: { perSecond: 1, burst: 3 }, ...(digestDue ? {} : { digestEveryMs: 3_600_000 }) });
        await heldStorm(channel, d, 4); // the burst spent, one held
        clock += DIGEST_GATHER_MS;
        expect(await flushHeld(channel, d)).toBe(1); // the digest token spent (the next in a minute, or an hour)
        const a = alert();
        const { record } = await store.claim(a.id, channel.id, { receiver_label: channel.label, route: "route" }, 60_000);
        await store.hold({ receiver_id: channel.id, held_at: record.first_attempt_at!, detail: a, route: "route" }); // then the worker died
        clock += 61_000;
        await heldStorm(channel, d, 3); // the refilled burst spent again
        // Redelivered: held again as the same item, or found in the digest that just went out.
        expect(await deliver(a, "route", channel, [], d)).toBe(digestDue ? "duplicate" : "held");
        expect((await store.heldFor(channel.id)).filter((h) => h.detail.id === a.id)).toHaveLength(digestDue ? 0 : 1);
        clock += 3_600_000;
        await flushHeld(channel, d);
        expect(digests.flat().filter((x) => x.id === a.id), `digest due: ${digestDue}`).toHaveLength(1);
      }
    });

    it("one that went out, its sender dead before it released what it carried: released as sent in it", async () => {
      const { channel, digests } = recordingChannel("r-digest-unreleased");
      const d = deps({ rate: { perSecond: 1, burst: 3 } });
      await heldStorm(channel, d, 5);
      const held = await store.heldFor(channel.id);
      const { record } = await store.claim("digest-gone", channel.id, { receiver_label: channel.label, route: "digest" }, 60_000);
      for (const h of held) expect(await store.markHeld(h, "digest-gone")).toBe(true);
      await store.settle(record, { state: "sent", ts: "9.9" });
      clock += 61_000;
      expect(await flushHeld(channel, d)).toBe(2);
      expect(digests).toEqual([]);
      for (const h of held) expect(await store.getDelivery(h.detail.id, channel.id)).toMatchObject({ state: "sent", digest_id: "digest-gone", ts: "9.9" });
      expect(await store.heldFor(channel.id)).toEqual([]);
    });
  });

  it("gives a follow-up the first alert of its incident and that message's ts", async () => {
    const { channel, sent } = recordingChannel("r-thread");
    const first = alert();
    await doc.send(new PutCommand({ TableName: tableName, Item: newAlertItem(first, now().toISOString(), 0) }));
    await deliver(first, "route", channel, [], deps());
    const follow = alert({ transition: "recovered", incident_id: first.id });
    await deliver(follow, "route", channel, [], deps());
    expect(sent.at(-1)!.incident).toMatchObject({ first: { id: first.id }, ts: "1.000100" });
  });

  it("records a failure, tells the owner, and delivers on a later attempt", async () => {
    let failing = true;
    const { channel, sent } = recordingChannel("r-fail", { fail: () => (failing ? new DeliveryError("503 from receiver", true, 503) : undefined) });
    const told: string[] = [];
    const d = deps({ onReceiverFailed: async (detail, ch, err) => void told.push(`${detail.id} ${ch.label} ${err.status}`) });
    const a = alert();
    expect(await deliver(a, "route", channel, [], d)).toBe("failed");
    expect(told).toEqual([`${a.id} test r-fail 503`]);
    expect(await store.getDelivery(a.id, channel.id)).toMatchObject({ state: "failed", error: "503 from receiver" });
    failing = false;
    expect(await deliver(a, "route", channel, [], d)).toBe("sent");
    expect(sent).toHaveLength(1);
    expect(await store.getDelivery(a.id, channel.id)).toMatchObject({ state: "sent", attempts: 2 });
  });

  it("a send slower than the lease keeps it: no other worker takes the sender for dead and sends again", async () => {
    let answer!: () => void;
    const slow = new Promise<void>((ok) => (answer = ok));
    const { channel, sent } = recordingChannel("r-slow");
    const send = channel.send.bind(channel);
    channel.send = async (detail, incident) => (await slow, send(detail, incident));
    const d = deps({ leaseMs: 300 }); // renewed every 100 ms of real time, on the store's clock
    const a = alert();
    const first = deliver(a, "route", channel, [], d);
    while ((await store.getDelivery(a.id, channel.id))?.state !== "sending") await new Promise((r) => setTimeout(r, 10));
    clock += 200;
    await new Promise((r) => setTimeout(r, 250)); // renewed meanwhile: its lease now runs to 500 ms
    clock += 200; // past the first lease
    expect(await deliver(a, "route", channel, [], d)).toBe("in_flight");
    answer();
    expect(await first).toBe("sent");
    expect(sent).toHaveLength(1);
  });

  it("a send stuck for ever keeps its claim five leases at most, then another worker delivers", async () => {
    const { channel, sent } = recordingChannel("r-stuck");
    const send = channel.send.bind(channel);
    let calls = 0;
    channel.send = async (detail, incident) => (++calls === 1 ? new Promise<never>(() => {}) : send(detail, incident));
    const d = deps({ leaseMs: 60 }); // renewed every 20 ms, for 300 ms at most
    const a = alert();
    void deliver(a, "route", channel, [], d);
    while ((await store.getDelivery(a.id, channel.id))?.state !== "sending") await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 600)); // past the renewals
    clock += 1_000; // past its last lease
    expect(await deliver(a, "route", channel, [], d)).toBe("sent");
    expect(sent).toHaveLength(1);
  });

  it("takes over from a sender that died, once its lease ran out", async () => {
    const { channel, sent } = recordingChannel("r-lease");
    const a = alert();
    await store.claim(a.id, channel.id, { receiver_label: channel.label, route: "route" }, 60_000); // claimed, then the worker died
    expect(await deliver(a, "route", channel, [], deps())).toBe("in_flight"); // not done: to be delivered again
    clock += 61_000;
    expect(await deliver(a, "route", channel, [], deps())).toBe("sent");
    expect(sent).toHaveLength(1);
  });

  it("a retry asks the receiver first: what a dead sender posted is recorded as sent, not posted again", async () => {
    const { channel, sent, reads } = recordingChannel("r-readback", { readBack: true });
    const a = alert();
    const claimedAt = now().toISOString();
    const { record } = await store.claim(a.id, channel.id, { receiver_label: channel.label, route: "route" }, 60_000);
    await channel.send(a); // Slack took it, then the worker died before recording it
    expect(reads).toHaveLength(0);
    clock += 61_000;
    expect(await deliver(a, "route", channel, [], deps())).toBe("duplicate");
    expect(sent).toHaveLength(1);
    // Read back from the first attempt on, with a minute's allowance for clock skew.
    expect(reads).toEqual([{ id: a.id, since: new Date(Date.parse(claimedAt) - 60_000).toISOString() }]);
    expect(await store.getDelivery(a.id, channel.id)).toMatchObject({ state: "sent", ts: "1.000100", attempts: 2, first_attempt_at: record.first_attempt_at });
    // A first attempt has nothing to read back.
    expect(await deliver(alert(), "route", channel, [], deps())).toBe("sent");
    expect(reads).toHaveLength(1);
  });

  it("a retry that finds nothing, or cannot read back, sends: a repeat is better than a missed failure", async () => {
    for (const readFails of [false, true]) {
      const { channel, sent, reads } = recordingChannel(`r-noread-${readFails}`, { readBack: true, readFails });
      const a = alert();
      await store.claim(a.id, channel.id, { receiver_label: channel.label, route: "route" }, 60_000);
      clock += 61_000;
      expect(await deliver(a, "route", channel, [], deps())).toBe("sent");
      expect(sent).toHaveLength(1);
      expect(reads).toHaveLength(1);
    }
  });
});
