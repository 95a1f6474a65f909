/**
 * The delivery decisions on the in-memory NotifyStore (held to the DynamoDB adapter's contract by
 * test/support/notify-store-contract.ts): mutes, claims already held, storms, records, the fallback.
 * The end-to-end paths on DynamoDB Local are test/integration/notify/deliver.test.ts and
 * test/integration/notify/notifier.failures.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { LookoutEventDetail } from "../../../lib/model/event.js";
import type { Mute } from "../../../lib/model/notify-store.js";
import { deliver, flushHeld, type Channel, type DeliverDeps } from "../../../lib/notify/deliver.js";
import { OPENING_WAIT_MS, PREDECESSOR_WINDOW_MS } from "../../../lib/notify/delivery/incident.js";
import { DIGEST_GATHER_MS, INCIDENT_FOLLOW_UPS } from "../../../lib/notify/delivery/rate.js";
import { notifyEvent, unfinished, type NotifierDeps } from "../../../lib/notify/notifier.js";
import { DeliveryError, type IncidentRef } from "../../../lib/notify/types.js";
import type { Receiver } from "../../../lib/config/route-types.js";
import { receiverId } from "../../../lib/config/receivers.js";
import type { AlertItem } from "../../../lib/model/alert-item.js";
import { MemoryNotifyStore } from "../../support/memory-notify-store.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";

const T0 = Date.parse("2026-03-01T10:00:00Z");
const log = { info() {}, warn() {}, error() {} };

function world(rate = { perSecond: 1, burst: 10 }) {
  let clock = T0;
  const now = () => new Date(clock);
  const store = new MemoryNotifyStore({ now });
  /** What happens while a delivery waits (another sender's delivery, say); the clock moves on. */
  const meanwhile: Array<() => Promise<unknown>> = [];
  const slept: number[] = [];
  const sleep = async (ms: number) => {
    slept.push(ms);
    clock += ms;
    await meanwhile.shift()?.();
  };
  const deps = (over: Partial<DeliverDeps> = {}): DeliverDeps => ({ store, now, rate, log, sleep, ...over });
  return { store, now, deps, meanwhile, slept, tick: (ms: number) => (clock += ms) };
}

function recordingChannel(id: string, fail?: () => DeliveryError | undefined) {
  const sent: Array<{ detail: LookoutEventDetail; incident?: IncidentRef }> = [];
  const digests: string[][] = [];
  const channel: Channel = {
    id, label: `test ${id}`,
    async send(detail, incident) {
      const err = fail?.();
      if (err) throw err;
      sent.push({ detail, ...(incident ? { incident } : {}) });
      return { ts: `${sent.length}.0001`, channel: "C1" };
    },
    async sendDigest(held) {
      digests.push(held.map((d) => d.id));
      return { ts: `${digests.length}.0002` };
    },
  };
  return { channel, sent, digests };
}

let seq = 0;
const alert = (over: Partial<LookoutEventDetail> = {}): LookoutEventDetail => ({ ...EXAMPLE_DETAILS["Deployment Failed"], id: `alert-${++seq}`, ...over });

describe("delivery decisions", () => {
  it("a follow-up told before its incident's opening delivers the opening first, then threads under it; the opening's own message is then a duplicate", async () => {
    const { store, deps, slept } = world();
    const { channel, sent } = recordingChannel("r");
    const observed = new Date(T0).toISOString();
    const opening = alert({ observed_at: observed });
    opening.incident_id = opening.id;
    const followUp = alert({ transition: "still_failing", incident_id: opening.id, observed_at: observed });
    store.putAlert(opening);
    // Events reach the notifiers in no promised order (stream shards, EventBridge): the follow-up first.
    expect(await deliver(followUp, "route", channel, [], deps({ routedHere: (d, route, id) => d.id === opening.id && route === "route" && id === "r" }))).toBe("sent");
    expect(slept).toEqual([]);
    expect(sent.map((s) => s.detail.id)).toEqual([opening.id, followUp.id]);
    expect(sent[0]!.incident).toBeUndefined(); // the opening as itself
    expect(sent[1]!.incident).toMatchObject({ shown: true, ts: "1.0001" }); // in the opening's thread
    expect(await store.getRoot(opening.id, channel.id)).toMatchObject({ alert_id: opening.id, ts: "1.0001" });
    expect(await deliver(opening, "route", channel, [], deps())).toBe("duplicate");
    expect(sent).toHaveLength(2);
  });

  it("an opening another sender is sending holds a follow-up seconds at most: it threads under it once sent, else it is the receiver's opening", async () => {
    const { store, deps, meanwhile, slept } = world();
    const { channel, sent } = recordingChannel("r");
    const observed = new Date(T0).toISOString();
    const opening = alert({ observed_at: observed });
    opening.incident_id = opening.id;
    store.putAlert(opening);
    const { record } = await store.claim(opening.id, channel.id, { receiver_label: channel.label, route: "route" }, 60_000);
    meanwhile.push(() => store.settle(record, { state: "sent", ts: "9.0001" }));
    const followUp = alert({ transition: "still_failing", incident_id: opening.id, observed_at: observed });
    expect(await deliver(followUp, "route", channel, [], deps())).toBe("sent");
    expect(slept).toEqual([500]);
    expect(sent[0]!.incident).toMatchObject({ shown: true, ts: "9.0001" });

    // A sender that never finishes: past the wait the follow-up is this receiver's opening.
    const other = recordingChannel("other");
    const stuck = alert({ observed_at: observed });
    stuck.incident_id = stuck.id;
    store.putAlert(stuck);
    await store.claim(stuck.id, other.channel.id, { receiver_label: other.channel.label, route: "route" }, 600_000);
    slept.length = 0;
    expect(await deliver(alert({ transition: "still_failing", incident_id: stuck.id, observed_at: observed }), "route", other.channel, [], deps())).toBe("sent");
    expect(slept.reduce((n, ms) => n + ms, 0)).toBe(OPENING_WAIT_MS);
    expect(other.sent[0]!.incident).toBeUndefined(); // a message of its own, not a quote of what it never showed
  });

  it("without the routes to ask (the fallback, a delivery core given none), nothing is delivered ahead", async () => {
    const { store, deps, slept } = world();
    const opening = alert({ observed_at: new Date(T0).toISOString() });
    opening.incident_id = opening.id;
    store.putAlert(opening);
    const { channel, sent } = recordingChannel("fallback");
    const followUp = alert({ transition: "still_failing", incident_id: opening.id, observed_at: opening.observed_at });
    expect(await deliver(followUp, "fallback", channel, [], deps())).toBe("sent");
    expect([sent.map((s) => s.detail.id), slept]).toEqual([[followUp.id], []]);
  });

  it("an opening not routed to this receiver, or read before the window, is not delivered ahead: the follow-up is its opening at once", async () => {
    for (const [why, observedAt, routedHere] of [
      ["routed elsewhere", T0, () => false],
      ["read before the window (the receiver is newer than the incident)", T0 - PREDECESSOR_WINDOW_MS - 1, () => true],
    ] as const) {
      const { store, deps, slept } = world();
      const opening = alert({ observed_at: new Date(observedAt).toISOString() });
      opening.incident_id = opening.id;
      store.putAlert(opening);
      const { channel, sent } = recordingChannel("r");
      const followUp = alert({ transition: "still_failing", incident_id: opening.id, observed_at: new Date(T0).toISOString() });
      expect(await deliver(followUp, "route", channel, [], deps({ routedHere })), why).toBe("sent");
      expect(slept, why).toEqual([]);
      expect(sent.map((s) => s.detail.id), why).toEqual([followUp.id]);
      expect(sent[0]!.incident, why).toBeUndefined();
      expect(await store.getRoot(opening.id, channel.id), why).toMatchObject({ alert_id: followUp.id, ts: "1.0001" });
    }
  });

  it("a follow-up of an opening the receiver does not show is its opening at once; later ones, the opening too, reply to it", async () => {
    const cases: Array<[string, (store: MemoryNotifyStore, opening: LookoutEventDetail, channel: Channel) => Promise<void>]> = [
      ["backfilled (never raised)", async () => {}],
      ["another route took it", async (store, opening) => store.putAlert(opening)],
      ["held for a digest", async (store, opening, channel) => {
        store.putAlert(opening);
        const { record } = await store.claim(opening.id, channel.id, { receiver_label: channel.label, route: "route" }, 60_000);
        await store.settle(record, { state: "held", suppression: { reason: "storm", detail: "held" } });
      }],
      ["failed", async (store, opening, channel) => {
        store.putAlert(opening);
        const { record } = await store.claim(opening.id, channel.id, { receiver_label: channel.label, route: "route" }, 60_000);
        await store.settle(record, { state: "failed", error: "503" });
      }],
      ["muted", async (store, opening, channel) => {
        store.putAlert(opening);
        await store.recordSuppressed(opening.id, channel.id, { receiver_label: channel.label, route: "route", state: "suppressed", suppression: { reason: "mute", detail: "m" } });
      }],
    ];
    for (const [why, given] of cases) {
      const { store, deps, slept } = world();
      const { channel, sent } = recordingChannel("r");
      channel.threads = true; // the repeats are counted replies under the root
      // Read a minute before: whatever became of it, it is not on its way now.
      const opening = alert({ observed_at: new Date(T0 - 60_000).toISOString() });
      opening.incident_id = opening.id;
      await given(store, opening, channel);
      const again = alert({ transition: "still_failing", incident_id: opening.id, incident: { subject: "s", opened_at: opening.occurred_at, failures: 2, repeat: true } });
      // Another route took it: the routes do not send it here, so it is not on its way here.
      const routedHere = () => why !== "another route took it";
      expect(await deliver(again, "route", channel, [], deps({ routedHere })), why).toBe("sent");
      expect(slept, why).toEqual([]);
      expect(sent[0]!.incident, why).toBeUndefined();
      const third = alert({ transition: "still_failing", incident_id: opening.id, incident: { subject: "s", opened_at: opening.occurred_at, failures: 3, repeat: true } });
      store.putAlert(again);
      expect(await deliver(third, "route", channel, [], deps()), why).toBe("sent");
      expect(sent[1]!.incident, why).toMatchObject({ shown: true, ts: "1.0001", first: { id: why.startsWith("backfilled") ? again.id : opening.id } });
      // The opening coming after its stand-in (a slow sender) replies in the stand-in's thread too.
      if (why === "another route took it") {
        expect(await deliver(opening, "route", channel, [], deps()), why).toBe("sent");
        expect(sent[2]!.incident, why).toMatchObject({ shown: true, ts: "1.0001", first: { id: again.id } });
      }
    }
  });

  it("a follow-up of an opening kept quiet just now (backfill at first sight) does not wait: nothing of it is on its way", async () => {
    const { store, deps, slept } = world();
    const { channel, sent } = recordingChannel("r");
    const opening = alert({ observed_at: new Date(T0).toISOString() });
    opening.incident_id = opening.id;
    store.putAlert(opening, true);
    const followUp = alert({ transition: "still_failing", incident_id: opening.id });
    expect(await deliver(followUp, "route", channel, [], deps())).toBe("sent");
    expect(slept).toEqual([]);
    expect(sent[0]!.incident).toBeUndefined();
  });

  it("a repeat where the receiver shows the incident but keeps no thread is counted, not posted again", async () => {
    const { store, deps } = world();
    const { channel, sent } = recordingChannel("email");
    const opening = alert();
    opening.incident_id = opening.id;
    store.putAlert(opening);
    expect(await deliver(opening, "route", channel, [], deps())).toBe("sent");
    const again = alert({ transition: "still_failing", incident_id: opening.id, incident: { subject: "s", opened_at: opening.occurred_at, failures: 2, repeat: true } });
    expect(await deliver(again, "route", channel, [], deps())).toBe("suppressed");
    expect(sent).toHaveLength(1);
    expect(await store.getDelivery(again.id, channel.id)).toMatchObject({ suppression: { reason: "repeat" } });
    // Where it keeps a thread, the repeat is a counted reply in it.
    const slack = recordingChannel("slack");
    slack.channel.threads = true;
    expect(await deliver(opening, "route", slack.channel, [], deps())).toBe("sent");
    expect(await deliver(again, "route", slack.channel, [], deps())).toBe("sent");
    expect(slack.sent[1]!.incident).toMatchObject({ shown: true, ts: "1.0001" });
  });

  it("an amendment delivers the alert it amends first and then edits it, goes alone where that alert was held, and is suppressed only where it was muted", async () => {
    const { store, deps, slept } = world();
    const { channel, sent } = recordingChannel("r");
    const failed = alert({ observed_at: new Date(T0).toISOString() });
    failed.incident_id = failed.id;
    store.putAlert(failed);
    const amendment = (of: LookoutEventDetail) => alert({ transition: "changes_listed", incident_id: of.id, amends: of.id, id: `changes-${of.id}` });
    // Told first: the alert it amends goes ahead of it, and the amendment follows it (the Slack adapter edits its message).
    expect(await deliver(amendment(failed), "route", channel, [], deps({ routedHere: () => true }))).toBe("sent");
    expect(slept).toEqual([]);
    expect(sent.map((s) => s.detail.id)).toEqual([failed.id, `changes-${failed.id}`]);
    expect(sent[1]!.incident).toMatchObject({ amended: { alert: { id: failed.id }, ts: "1.0001" } });

    // Never shown here (held for a digest: no message to wait for): the amendment goes on its own at once, never lost.
    const held = alert({ observed_at: new Date(T0).toISOString() });
    held.incident_id = held.id;
    store.putAlert(held);
    const { record } = await store.claim(held.id, channel.id, { receiver_label: channel.label, route: "route" }, 60_000);
    await store.settle(record, { state: "held", suppression: { reason: "storm", detail: "held" } });
    const waited = slept.length;
    expect(await deliver(amendment(held), "route", channel, [], deps())).toBe("sent");
    expect(sent.at(-1)!.detail.id).toBe(`changes-${held.id}`);
    expect(slept.length).toBe(waited);

    // Muted for this receiver: what amends it is not shown either.
    const muted = alert();
    muted.incident_id = muted.id;
    store.putAlert(muted);
    await store.recordSuppressed(muted.id, channel.id, { receiver_label: channel.label, route: "route", state: "suppressed", suppression: { reason: "mute", detail: "m" } });
    expect(await deliver(amendment(muted), "route", channel, [], deps())).toBe("suppressed");
    expect(await store.getDelivery(`changes-${muted.id}`, channel.id)).toMatchObject({ suppression: { reason: "not_told" } });
  });

  it("mute: a muted alert is recorded as suppressed, naming the mute, and not sent; health is never muted", async () => {
    const { store, deps } = world();
    const { channel, sent } = recordingChannel("r");
    const mute: Mute = {
      id: "m1", scope: { service: EXAMPLE_DETAILS["Deployment Failed"].service!.id }, until: new Date(T0 + 3_600_000).toISOString(),
      reason: "maintenance", created_by: "ann@example.com", created_at: new Date(T0 - 1_000).toISOString(),
    };
    const a = alert();
    expect(await deliver(a, "route", channel, [mute], deps())).toBe("muted");
    expect(await deliver(a, "route", channel, [mute], deps())).toBe("duplicate");
    expect(sent).toHaveLength(0);
    expect(await store.getDelivery(a.id, channel.id)).toMatchObject({
      state: "suppressed", attempts: 0, route: "route",
      suppression: { reason: "mute", mute_id: "m1", detail: `muted until ${mute.until} by ann@example.com: maintenance` },
    });
    const health = alert({ ...EXAMPLE_DETAILS["Lookout Health"], id: `health-${++seq}` });
    expect(await deliver(health, "route", channel, [{ ...mute, scope: {} }], deps())).toBe("sent");
  });

  it("claim already held: in flight while another sender's lease runs, duplicate once settled", async () => {
    const { store, deps, tick } = world();
    const { channel, sent } = recordingChannel("r");
    const a = alert();
    const { record } = await store.claim(a.id, channel.id, { receiver_label: channel.label, route: "route" }, 60_000);
    expect(await deliver(a, "route", channel, [], deps())).toBe("in_flight");
    await store.settle(record, { state: "sent", ts: "9.9" });
    tick(120_000);
    expect(await deliver(a, "route", channel, [], deps())).toBe("duplicate");
    expect(sent).toHaveLength(0);
  });

  it("hold during a storm: over the budget alerts are held, then go out as one digest before the next alert; digests at most one a minute", async () => {
    const { store, deps, tick } = world({ perSecond: 1, burst: 2 });
    const { channel, sent, digests } = recordingChannel("r");
    const storm = [alert(), alert(), alert(), alert()];
    const outcomes = [];
    for (const a of storm) outcomes.push(await deliver(a, "route", channel, [], deps()));
    expect(outcomes).toEqual(["sent", "sent", "held", "held"]);
    expect(await store.getDelivery(storm[2]!.id, channel.id)).toMatchObject({
      state: "held", suppression: { reason: "storm", detail: "over 1/s (burst 2) for test r: held for a digest" },
    });
    expect((await store.heldFor(channel.id)).map((h) => h.detail.id)).toEqual([storm[2]!.id, storm[3]!.id]);
    // Asked before an alert's delivery, a digest gathers the storm: none before the first held alert has
    // waited DIGEST_GATHER_MS (a scheduled flush, after the pass, sends at once: below).
    tick(DIGEST_GATHER_MS - 1);
    expect(await flushHeld(channel, deps(), { gather: true })).toBe(0);
    tick(1);
    const next = alert();
    expect(await deliver(next, "route", channel, [], deps())).toBe("sent");
    expect(digests).toEqual([[storm[2]!.id, storm[3]!.id]]);
    expect(sent.map((s) => s.detail.id)).toEqual([storm[0]!.id, storm[1]!.id, next.id]);
    const digestId = (await store.getDelivery(storm[2]!.id, channel.id))!.digest_id!;
    expect(digestId).toMatch(/^digest-/);
    for (const a of storm.slice(2)) expect(await store.getDelivery(a.id, channel.id)).toMatchObject({ state: "sent", digest_id: digestId, ts: "1.0002" });
    expect(await store.getDelivery(digestId, channel.id)).toMatchObject({ state: "sent", route: "digest" });
    expect(await store.heldFor(channel.id)).toEqual([]);

    // The storm goes on: the next digest waits a minute after the last, however much budget the receiver has.
    const more = [alert(), alert(), alert()];
    for (const a of more) await deliver(a, "route", channel, [], deps());
    tick(30_000);
    expect(await flushHeld(channel, deps())).toBe(0);
    tick(30_000);
    expect(await flushHeld(channel, deps())).toBe(3);
    expect(digests).toHaveLength(2);
  });

  it("a flood in one incident: the root, five follow-ups in its thread, then one every five minutes; the rest in digests, none lost; the close is never held", async () => {
    const { store, deps, tick } = world({ perSecond: 1000, burst: 1000 });
    const { channel, sent, digests } = recordingChannel("slack");
    channel.threads = true;
    const opening = alert({ transition: "cluster_error" });
    opening.incident_id = opening.id;
    store.putAlert(opening);
    const errors = Array.from({ length: 200 }, (_, i) => alert({ transition: "cluster_error", incident_id: opening.id, incident: { subject: "cluster:c", opened_at: opening.occurred_at, failures: i + 2 } }));
    expect(await deliver(opening, "route", channel, [], deps())).toBe("sent");
    const outcomes = [];
    for (const e of errors) outcomes.push(await deliver(e, "route", channel, [], deps()));
    expect(outcomes.filter((o) => o === "sent")).toHaveLength(INCIDENT_FOLLOW_UPS.burst);
    expect(outcomes.filter((o) => o === "held")).toHaveLength(200 - INCIDENT_FOLLOW_UPS.burst);
    tick(INCIDENT_FOLLOW_UPS.everyMs);
    const later = alert({ transition: "cluster_error", incident_id: opening.id, incident: { subject: "cluster:c", opened_at: opening.occurred_at, failures: 202 } });
    expect(await deliver(later, "route", channel, [], deps())).toBe("sent");
    const close = alert({ ...EXAMPLE_DETAILS["Cluster Recovered"], id: `close-${++seq}`, incident_id: opening.id });
    tick(1_000);
    expect(await deliver(close, "route", channel, [], deps())).toBe("sent");
    // Every failure is shown: as the root, a reply, or a line of a digest; the digests a minute apart at most.
    while ((await store.heldFor(channel.id)).length) {
      tick(60_000);
      await flushHeld(channel, deps());
    }
    const shown = new Set([...sent.map((s) => s.detail.id), ...digests.flat()]);
    for (const e of [opening, ...errors, later, close]) expect(shown.has(e.id)).toBe(true);
    expect(sent).toHaveLength(1 + INCIDENT_FOLLOW_UPS.burst + 2);
    expect(digests.length).toBeLessThanOrEqual(2);
  });

  it("a thread's replies have a budget of their own: repeats of one incident never hold back another incident's opening", async () => {
    const { store, deps, tick } = world({ perSecond: 1, burst: 2 });
    const { channel, sent, digests } = recordingChannel("slack");
    channel.threads = true;
    const opening = alert();
    opening.incident_id = opening.id;
    store.putAlert(opening);
    expect(await deliver(opening, "route", channel, [], deps())).toBe("sent");
    const repeats = Array.from({ length: 4 }, (_, i) =>
      alert({ transition: "still_failing", incident_id: opening.id, incident: { subject: "service:api", opened_at: opening.occurred_at, failures: i + 2, repeat: true } }));
    const outcomes = [];
    for (const r of repeats) outcomes.push(await deliver(r, "route", channel, [], deps()));
    // The replies' burst (2), then held: the incident's own allowance (5) is not what stopped them.
    expect(outcomes).toEqual(["sent", "sent", "held", "held"]);
    expect(await store.getDelivery(repeats[2]!.id, channel.id)).toMatchObject({
      state: "held", suppression: { reason: "storm", detail: "over 1/s (burst 2) for replies at test slack: held for a digest" },
    });
    // Another service fails in the same second: its opening has the openings' budget left.
    const other = alert({ subject: "service:web" } as Partial<LookoutEventDetail>);
    expect(await deliver(other, "route", channel, [], deps())).toBe("sent");
    expect(sent.map((s) => s.detail.id)).toEqual([opening.id, repeats[0]!.id, repeats[1]!.id, other.id]);
    expect(digests).toEqual([]);
    // The held repeats, a second on (a token for the digest): not yet before a delivery (the storm is
    // gathering), at once at a scheduled flush.
    tick(1_000);
    expect(await flushHeld(channel, deps(), { gather: true })).toBe(0);
    expect(await flushHeld(channel, deps())).toBe(2);
    expect(digests).toEqual([[repeats[2]!.id, repeats[3]!.id]]);
  });

  it("record: a send is recorded with the receiver's ids; a failure with its error, counting the receiver's run", async () => {
    const { store, deps } = world();
    let failing = true;
    const { channel } = recordingChannel("r", () => (failing ? new DeliveryError("503 from receiver", true, 503) : undefined));
    const runs: number[] = [];
    const d = deps({ onReceiverFailed: async (_a, _c, _e, run) => void runs.push(run.consecutive_failures) });
    const a = alert();
    expect(await deliver(a, "route", channel, [], d)).toBe("failed");
    expect(await deliver(a, "route", channel, [], d)).toBe("failed");
    expect(runs).toEqual([1, 2]);
    expect(await store.getDelivery(a.id, channel.id)).toMatchObject({ state: "failed", error: "503 from receiver", attempts: 2 });
    expect(await store.getDelivery(a.id, channel.id)).not.toHaveProperty("permanent");
    failing = false;
    expect(await deliver(a, "route", channel, [], d)).toBe("sent");
    expect(await store.getDelivery(a.id, channel.id)).toMatchObject({ state: "sent", ts: "1.0001", channel: "C1", attempts: 3 });
    expect(await store.receiverFailures(channel.id)).toBeUndefined();
  });

  it("an onlooker (a receiver that tells nobody) has every delivery record say so: sent, muted, held and its digest", async () => {
    const { store, deps, tick } = world({ perSecond: 1, burst: 1 });
    const onlooker = { ...recordingChannel("wall").channel, onlooker: true };
    const plain = recordingChannel("oncall").channel;
    const [sent, held] = [alert(), alert()];
    expect(await deliver(sent, "wallboard", onlooker, [], deps())).toBe("sent");
    expect(await deliver(held, "wallboard", onlooker, [], deps())).toBe("held");
    const mute: Mute = { id: "m1", scope: {}, until: new Date(T0 + 3_600_000).toISOString(), reason: "r", created_by: "ann", created_at: new Date(T0).toISOString() };
    const muted = alert();
    expect(await deliver(muted, "wallboard", onlooker, [mute], deps())).toBe("muted");
    expect(await deliver(sent, "prod", plain, [], deps())).toBe("sent");
    for (const a of [sent, held, muted]) expect(await store.getDelivery(a.id, onlooker.id), a.id).toMatchObject({ route: "wallboard", onlooker: true });
    expect(await store.getDelivery(sent.id, plain.id)).not.toHaveProperty("onlooker");
    tick(120_000);
    expect(await flushHeld(onlooker, deps())).toBe(1);
    const digestId = (await store.getDelivery(held.id, onlooker.id))!.digest_id!;
    expect(await store.getDelivery(digestId, onlooker.id)).toMatchObject({ state: "sent", route: "digest", onlooker: true });
  });

  it("a receiver shown every event besides the routes (one machine's terminal preview) gets an opening ahead of its follow-up, as a route's receiver does", async () => {
    for (const shownEveryEvent of [true, false]) {
      const { store, now } = world();
      const preview: Receiver = { type: "slack", form: "api", channel: "#preview", tokenRef: "env:PREVIEW" };
      const { channel, sent } = recordingChannel(receiverId(preview));
      const deps: NotifierDeps = {
        settings: { slackRate: { perSecond: 1, burst: 10, perHour: 60 }, digestWithinMs: 120_000 },
        routes: [],
        ...(shownEveryEvent ? { everyEventTo: [{ route: "preview", receivers: [preview] }] } : {}),
        store,
        outbox: { raiseAlert: async () => true, expiresAt: () => 0 },
        channelFor: async () => channel,
        now,
        log,
      };
      const observed = now().toISOString();
      const opening = alert({ observed_at: observed });
      opening.incident_id = opening.id;
      const followUp = alert({ transition: "still_failing", incident_id: opening.id, observed_at: observed });
      store.putAlert(opening);
      await notifyEvent(followUp, [{ route: "preview", receivers: [preview] }], deps);
      // Not shown every event, nothing routes the opening there: the follow-up is its opening.
      expect(sent.map((m) => m.detail.id), String(shownEveryEvent)).toEqual(shownEveryEvent ? [opening.id, followUp.id] : [followUp.id]);
    }
  });

  it("fallback on rejected: a receiver that refuses for good gets a health event raised and the fallback told, not retried", async () => {
    const { store, now } = world();
    const refusing = recordingChannel("slack-deploys", () => new DeliveryError("Slack incoming webhook answered HTTP 404 no_service", false, 404));
    const fallback = recordingChannel("email-fallback");
    const raised: AlertItem[] = [];
    const deps: NotifierDeps = {
      settings: { slackRate: { perSecond: 1, burst: 10, perHour: 60 }, digestWithinMs: 120_000, fallback: { email: { type: "email", to: ["fallback@example.com"] } } },
      store,
      outbox: { raiseAlert: async (item) => (raised.push(item), true), expiresAt: () => 0 },
      channelFor: async (r: Receiver) => (r.type === "email" ? fallback.channel : refusing.channel),
      now,
      log,
    };
    const slack: Receiver = { type: "slack", form: "webhook", webhookUrlRef: "env:HOOK" };
    const a = alert();
    const deliveries = await notifyEvent(a, [{ route: "deploys", receivers: [slack] }], deps);
    expect(deliveries).toEqual([
      { route: "fallback", receiver: "test email-fallback", outcome: "sent" },
      { route: "deploys", receiver: "test slack-deploys", outcome: "rejected" },
    ]);
    expect(unfinished(deliveries)).toBe(false);
    expect(fallback.sent.map((s) => s.detail.id)).toEqual([a.id]);
    expect(raised).toHaveLength(1);
    const health = raised[0]!.detail;
    expect(health).toMatchObject({ kind: "health", transition: "receiver_failing" });
    expect(await store.getDelivery(a.id, refusing.channel.id)).toMatchObject({
      state: "failed", permanent: true, health_id: health.id, error: "Slack incoming webhook answered HTTP 404 no_service",
    });
    expect(await store.getDelivery(a.id, fallback.channel.id)).toMatchObject({ state: "sent", route: "fallback" });
  });
});
