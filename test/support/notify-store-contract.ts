/**
 * What every NotifyStore adapter must do (lib/model/notify-store.ts), as one suite each adapter runs:
 * the DynamoDB one on DynamoDB Local (test/integration/store/notify-store.test.ts), the in-memory one
 * (test/unit/store/memory/notify-store.test.ts). The records each returns are compared whole, so both give
 * the delivery stages the same answers.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { LookoutEventDetail } from "../../lib/model/event.js";
import type { DeliveryRecord, DueEscalation, Escalation, HeldAlert, Mute, NotifyStore } from "../../lib/model/notify-store.js";
import { EXAMPLE_DETAILS } from "../fixtures/event-examples.js";

export interface NotifyStoreUnderTest {
  store: NotifyStore;
  /** Puts an alert in the outbox as the ingest side raises it (what `getAlert` reads). */
  raiseAlert(detail: LookoutEventDetail): Promise<void>;
}

const T0 = Date.parse("2026-03-01T10:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();
const LEASE = 60_000;

export function notifyStoreContract(adapter: string, open: (now: () => Date) => Promise<NotifyStoreUnderTest>): void {
  describe(`NotifyStore contract: ${adapter}`, () => {
    let clock = T0;
    let store: NotifyStore;
    let raiseAlert: NotifyStoreUnderTest["raiseAlert"];
    beforeAll(async () => {
      ({ store, raiseAlert } = await open(() => new Date(clock)));
    });
    // The DynamoDB adapter's table is shared by the file: every test takes ids of its own.
    let seq = 0;
    const fresh = (what: string) => {
      clock = T0;
      return `${what}-${++seq}`;
    };
    const init = { receiver_label: "slack #ops", route: "deploys" };

    it("claims once: the record says sending, with its lease, first attempt and labels", async () => {
      const a = fresh("alert");
      const first = await store.claim(a, "r1", init, LEASE);
      const record: DeliveryRecord = {
        alert_id: a, receiver_id: "r1", receiver_label: "slack #ops", route: "deploys", state: "sending",
        attempts: 1, lease_until: T0 + LEASE, first_attempt_at: iso(T0), updated_at: iso(T0),
      };
      expect(first).toEqual({ claimed: true, record });
      clock += 1_000;
      expect(await store.claim(a, "r1", init, LEASE)).toEqual({ claimed: false, record });
      expect(await store.getDelivery(a, "r1")).toEqual(record);
      expect(await store.getDelivery(a, "r2")).toBeUndefined();
    });

    it("records an onlooker's claim as one, and it stays so when settled", async () => {
      const a = fresh("alert");
      const { record } = await store.claim(a, "r1", { ...init, onlooker: true }, LEASE);
      expect(record).toMatchObject({ route: "deploys", onlooker: true });
      expect(await store.settle(record, { state: "sent", ts: "1.1" })).toBe(true);
      expect(await store.getDelivery(a, "r1")).toMatchObject({ state: "sent", onlooker: true });
    });

    it("grants one of many concurrent claims", async () => {
      const a = fresh("alert");
      const claims = await Promise.all(Array.from({ length: 5 }, () => store.claim(a, "r1", init, LEASE)));
      expect(claims.filter((c) => c.claimed)).toHaveLength(1);
    });

    it("takes over a lease that ran out, counting the attempt and keeping the first attempt's time", async () => {
      const a = fresh("alert");
      await store.claim(a, "r1", init, LEASE);
      clock = T0 + LEASE; // not yet: the lease runs until then
      expect((await store.claim(a, "r1", init, LEASE)).claimed).toBe(false);
      clock = T0 + LEASE + 1;
      const next = await store.claim(a, "r1", { receiver_label: "slack #ops-2", route: "fallback" }, LEASE);
      expect(next).toEqual({
        claimed: true,
        record: {
          alert_id: a, receiver_id: "r1", receiver_label: "slack #ops-2", route: "fallback", state: "sending",
          attempts: 2, lease_until: clock + LEASE, first_attempt_at: iso(T0), updated_at: iso(clock),
        },
      });
    });

    it("renews a lease only while the claim is still held as claimed", async () => {
      const a = fresh("alert");
      const { record } = await store.claim(a, "r1", init, LEASE);
      clock = T0 + LEASE - 1;
      expect(await store.renewLease(record, LEASE)).toBe(true);
      clock = T0 + LEASE + 1; // past the first lease, within the renewed one
      expect((await store.claim(a, "r1", init, LEASE)).claimed).toBe(false);
      clock = T0 + 2 * LEASE; // the renewed lease ran out: another sender takes it over
      expect((await store.claim(a, "r1", init, LEASE)).claimed).toBe(true);
      expect(await store.renewLease(record, LEASE)).toBe(false); // no longer this attempt's
    });

    it("claims a failed delivery again, keeping what the failure recorded; never a settled one", async () => {
      const a = fresh("alert");
      const { record } = await store.claim(a, "r1", init, LEASE);
      expect(await store.settle(record, { state: "failed", error: "503", permanent: true })).toBe(true);
      clock += 5_000;
      const again = await store.claim(a, "r1", init, LEASE);
      expect(again).toEqual({
        claimed: true,
        record: { ...record, state: "sending", attempts: 2, error: "503", permanent: true, lease_until: clock + LEASE, updated_at: iso(clock) },
      });
      expect(await store.settle(again.record, { state: "sent", ts: "1.0001" })).toBe(true);
      for (const state of ["sent", "held"] as const) {
        const b = fresh(`alert-${state}`);
        const held = (await store.claim(b, "r1", init, LEASE)).record;
        await store.settle(held, { state });
        clock += 10 * LEASE;
        expect(await store.claim(b, "r1", init, LEASE)).toMatchObject({ claimed: false, record: { state, attempts: 1 } });
      }
    });

    it("settles only while the record is still the one held; the lease goes", async () => {
      const a = fresh("alert");
      const mine = (await store.claim(a, "r1", init, LEASE)).record;
      clock += 2_000;
      expect(await store.settle(mine, { state: "sent", ts: "1.1", channel: "C1", message_id: "m-1" })).toBe(true);
      const { lease_until: _lease, ...rest } = mine;
      const sent = { ...rest, state: "sent", ts: "1.1", channel: "C1", message_id: "m-1", updated_at: iso(clock) };
      expect(await store.getDelivery(a, "r1")).toEqual(sent);
      // Settled already: the same holder cannot settle again.
      expect(await store.settle(mine, { state: "failed", error: "late" })).toBe(false);
      expect(await store.getDelivery(a, "r1")).toEqual(sent);

      // A sender whose lease ran out and was taken over does not overwrite its successor's record.
      const b = fresh("alert");
      const dead = (await store.claim(b, "r1", init, LEASE)).record;
      clock += LEASE + 1;
      const successor = (await store.claim(b, "r1", init, LEASE)).record;
      expect(await store.settle(dead, { state: "failed", error: "stale" })).toBe(false);
      expect(await store.getDelivery(b, "r1")).toEqual(successor);

      // A record that is not there is written whole.
      const c = fresh("alert");
      const ghost: DeliveryRecord = { ...successor, alert_id: c, state: "held", attempts: 3 };
      expect(await store.settle(ghost, { state: "sent", digest_id: "digest-1" })).toBe(true);
      const { lease_until: _l, ...ghostRest } = ghost;
      expect(await store.getDelivery(c, "r1")).toEqual({ ...ghostRest, state: "sent", digest_id: "digest-1", updated_at: iso(clock) });
    });

    it("records a suppressed delivery once, never over another record", async () => {
      const a = fresh("alert");
      const suppressed = {
        receiver_label: "email ops", route: "deploys", state: "suppressed" as const,
        suppression: { reason: "mute" as const, mute_id: "m1", detail: "maintenance" },
      };
      expect(await store.recordSuppressed(a, "r1", suppressed)).toBe(true);
      expect(await store.getDelivery(a, "r1")).toEqual({ alert_id: a, receiver_id: "r1", attempts: 0, ...suppressed, updated_at: iso(T0) });
      expect(await store.recordSuppressed(a, "r1", { ...suppressed, route: "other" })).toBe(false);
      const b = fresh("alert");
      await store.claim(b, "r1", init, LEASE);
      expect(await store.recordSuppressed(b, "r1", suppressed)).toBe(false);
      expect(await store.getDelivery(b, "r1")).toMatchObject({ state: "sending" });
    });

    it("lists an alert's deliveries by receiver id", async () => {
      const a = fresh("alert");
      for (const r of ["r-b", "r-a", "r-c"]) await store.claim(a, r, init, LEASE);
      await store.claim(fresh("other"), "r-a", init, LEASE);
      expect((await store.deliveriesOf(a)).map((d) => d.receiver_id)).toEqual(["r-a", "r-b", "r-c"]);
      expect(await store.deliveriesOf(fresh("none"))).toEqual([]);
    });

    it("keeps mutes, lifted ones too, listed by id", async () => {
      const id = fresh("mute");
      const mute: Mute = {
        id, scope: { environment: "production", service: "api" }, until: iso(T0 + 3_600_000), reason: "maintenance",
        created_by: "ann@example.com", created_at: iso(T0),
      };
      await store.putMute(mute);
      await store.putMute({ ...mute, id: `${id}-b`, scope: {} });
      expect(await store.getMute(id)).toEqual(mute);
      await store.putMute({ ...mute, lifted_at: iso(T0 + 60_000) });
      expect(await store.getMute(id)).toEqual({ ...mute, lifted_at: iso(T0 + 60_000) });
      const listed = (await store.listMutes()).filter((m) => m.id.startsWith(id));
      expect(listed.map((m) => m.id)).toEqual([id, `${id}-b`]);
      expect(await store.getMute(`${id}-none`)).toBeUndefined();
    });

    it("gives a receiver its burst, then a token per 1/perSecond, never more than the burst", async () => {
      const r = fresh("receiver");
      const take = () => store.takeToken(r, 2, 3);
      expect([await take(), await take(), await take(), await take()]).toEqual([true, true, true, false]);
      clock += 499;
      expect(await take()).toBe(false);
      clock += 1; // half a second at 2/s: one token
      expect([await take(), await take()]).toEqual([true, false]);
      clock += 60_000; // refilled to the burst, not beyond
      expect([await take(), await take(), await take(), await take()]).toEqual([true, true, true, false]);
      // Each receiver has a bucket of its own.
      expect(await store.takeToken(fresh("receiver"), 2, 3)).toBe(true);
    });

    it("holds alerts for a receiver's digest, oldest first, until released", async () => {
      const r = fresh("receiver");
      const detail = (id: string): LookoutEventDetail => ({ ...EXAMPLE_DETAILS["Deployment Failed"], id });
      const held: HeldAlert[] = [
        { receiver_id: r, held_at: iso(T0 + 2_000), detail: detail("a-2"), route: "deploys" },
        { receiver_id: r, held_at: iso(T0), detail: detail("a-1"), route: "deploys" },
        { receiver_id: r, held_at: iso(T0 + 2_000), detail: detail("a-0"), route: "default" },
      ];
      for (const h of held) await store.hold(h);
      await store.hold(held[0]!); // the same hold again
      await store.hold({ ...held[0]!, receiver_id: `${r}-other` });
      expect(await store.heldFor(r)).toEqual([held[1], held[2], held[0]]);
      await store.release(held[2]!);
      expect(await store.heldFor(r)).toEqual([held[1], held[0]]);
      expect(await store.heldFor(`${r}-other`)).toHaveLength(1);
      expect(await store.heldFor(fresh("receiver"))).toEqual([]);
    });

    it("a held alert is carried by one digest: marked once, kept through a second hold, unmarkable once released", async () => {
      const r = fresh("receiver");
      const h: HeldAlert = { receiver_id: r, held_at: iso(T0), detail: { ...EXAMPLE_DETAILS["Deployment Failed"], id: "m-1" }, route: "deploys" };
      await store.hold(h);
      expect(await store.markHeld(h, "digest-a")).toBe(true);
      expect(await store.markHeld(h, "digest-a")).toBe(true); // the same digest again
      expect(await store.markHeld(h, "digest-b")).toBe(false); // another digest carries it
      await store.hold(h); // held again: the mark stays
      expect(await store.heldFor(r)).toEqual([{ ...h, digest_id: "digest-a" }]);
      await store.release(h);
      expect(await store.markHeld(h, "digest-a")).toBe(false);
      expect(await store.heldFor(r)).toEqual([]);
    });

    it("counts a receiver's failures in a row from the first of the run, until one gets through", async () => {
      const r = fresh("receiver");
      expect(await store.receiverFailures(r)).toBeUndefined();
      await store.receiverSucceeded(r); // no run: nothing to end
      const first = await store.receiverFailed(r, "slack #ops", "503");
      expect(first).toEqual({ receiver_id: r, receiver_label: "slack #ops", consecutive_failures: 1, since: iso(T0), last_error: "503", updated_at: iso(T0) });
      clock += 30_000;
      const second = await store.receiverFailed(r, "slack #ops", "timeout");
      expect(second).toEqual({ ...first, consecutive_failures: 2, last_error: "timeout", updated_at: iso(clock) });
      expect(await store.receiverFailures(r)).toEqual(second);
      await store.receiverSucceeded(r);
      expect(await store.receiverFailures(r)).toBeUndefined();
      clock += 30_000;
      expect(await store.receiverFailed(r, "slack #ops", "503")).toMatchObject({ consecutive_failures: 1, since: iso(clock) });
    });

    it("keeps the first root message recorded for an incident and receiver, per receiver", async () => {
      const incident = fresh("incident");
      expect(await store.getRoot(incident, "r1")).toBeUndefined();
      const root = { incident_id: incident, receiver_id: "r1", alert_id: fresh("follow-up"), ts: "171.0001", channel: "C1", at: iso(clock) };
      expect(await store.putRoot(root)).toBe(true);
      expect(await store.putRoot({ ...root, alert_id: fresh("later"), ts: "172.0001" })).toBe(false);
      expect(await store.getRoot(incident, "r1")).toEqual(root);
      expect(await store.getRoot(incident, "r2")).toBeUndefined();
      const email = { incident_id: incident, receiver_id: "r2", alert_id: root.alert_id, message_id: "<m@x>", at: iso(clock) };
      expect(await store.putRoot(email)).toBe(true);
      expect(await store.getRoot(incident, "r2")).toEqual(email);
    });

    it("keeps the first acknowledgement of an incident: a later one is told who was first", async () => {
      const incident = fresh("incident");
      expect(await store.getAcknowledgement(incident)).toBeUndefined();
      const ann = { incident_id: incident, by: { id: "U1", name: "ann" }, at: iso(clock), alert_id: "a1" };
      expect(await store.acknowledge(ann)).toEqual({ ack: ann, first: true });
      const bob = { ...ann, by: { id: "U2", name: "bob" }, at: iso(clock + 1_000) };
      expect(await store.acknowledge(bob)).toEqual({ ack: ann, first: false });
      expect(await store.getAcknowledgement(incident)).toEqual(ann);
    });

    it("records an incident's close once: the first stands", async () => {
      const incident = fresh("incident");
      expect(await store.getClosed(incident)).toBeUndefined();
      const first = { incident_id: incident, alert_id: "c1", at: iso(clock) };
      expect(await store.markClosed(first)).toBe(true);
      expect(await store.markClosed({ ...first, alert_id: "c2", at: iso(clock + 1) })).toBe(false);
      expect(await store.getClosed(incident)).toEqual(first);
    });

    it("records a click once: the same click again (Slack's retry, a replay) is refused; an incident's clicks are read oldest first", async () => {
      const id = fresh("click");
      const incident = fresh("incident");
      const click = { id, kind: "mute_1h" as const, incident_id: incident, alert_id: "a1", by: { id: "U1", name: "ann" }, at: iso(clock + 10), channel: "C1", message_ts: "171.0001" };
      expect(await store.getAction(incident, id)).toBeUndefined();
      expect(await store.recordAction(click)).toBe(true);
      expect(await store.getAction(incident, id)).toEqual(click);
      expect(await store.getAction(fresh("other"), id)).toBeUndefined();
      expect(await store.recordAction({ ...click, at: iso(clock + 5) })).toBe(false);
      const earlier = { ...click, id: fresh("click"), kind: "acknowledge" as const, at: iso(clock) };
      expect(await store.recordAction(earlier)).toBe(true);
      expect(await store.actionsOn(incident)).toEqual([earlier, click]);
      expect(await store.actionsOn(fresh("quiet"))).toEqual([]);
    });

    it("keeps one escalation per incident and route, lists it by due time per kind, and lets it leave pending once", async () => {
      const incident = fresh("incident");
      const mine = (d: DueEscalation[]) => d.filter((x) => x.incident_id === incident);
      const e: Escalation = {
        incident_id: incident, route: "prod", alert_id: "a1", due_at: iso(T0 + 15 * 60_000), kinds: ["email", "slack"],
        state: "pending", scheduled_at: iso(T0),
      };
      expect(await store.scheduleEscalation(e)).toEqual(e);
      // A redelivery, or the other kind's notify function, scheduling again later: the first stands.
      expect(await store.scheduleEscalation({ ...e, alert_id: "a2", due_at: iso(T0 + 20 * 60_000) })).toEqual(e);
      // Both kinds' notify functions scheduling at once: one stands, and both are told it.
      const racing = { ...e, incident_id: fresh("incident") };
      const kept = await Promise.all([store.scheduleEscalation(racing), store.scheduleEscalation({ ...racing, alert_id: "a9", due_at: iso(T0 + 16 * 60_000) })]);
      expect(kept[0]).toEqual(kept[1]);
      expect(await store.escalationsOf(racing.incident_id)).toEqual([kept[0]]);
      const other = { ...e, route: "team", due_at: iso(T0 + 5 * 60_000), kinds: ["slack" as const] };
      await store.scheduleEscalation(other);
      expect(await store.escalationsOf(incident)).toEqual([e, other]);
      expect(mine(await store.dueEscalations("slack", iso(T0 + 14 * 60_000)))).toEqual([{ kind: "slack", due_at: other.due_at, incident_id: incident, route: "team" }]);
      const due = mine(await store.dueEscalations("slack", e.due_at));
      expect(due.map((d) => d.route)).toEqual(["team", "prod"]);
      expect(mine(await store.dueEscalations("email", e.due_at))).toEqual([{ kind: "email", due_at: e.due_at, incident_id: incident, route: "prod" }]);
      // Two ticks racing: one moves it on.
      const settled = await Promise.all([1, 2].map(() => store.settleEscalation(incident, "prod", { state: "escalated", settled_at: iso(clock) })));
      expect(settled.filter(Boolean)).toHaveLength(1);
      expect(await store.settleEscalation(incident, "prod", { state: "cancelled", settled_at: iso(clock), reason: "closed" })).toBe(false);
      expect(await store.getEscalation(incident, "prod")).toEqual({ ...e, state: "escalated", settled_at: iso(clock) });
      expect(await store.settleEscalation(incident, "nowhere", { state: "escalated", settled_at: iso(clock) })).toBe(false);
      // Scheduled again once its entry was released: no due entry comes back.
      await store.releaseDueEscalation(due[1]!);
      await store.scheduleEscalation(e);
      expect(mine(await store.dueEscalations("slack", e.due_at)).map((d) => d.route)).toEqual(["team"]);
      expect(await store.getEscalation(fresh("incident"), "prod")).toBeUndefined();
    });

    it("records an escalation's delivery with the alert it escalates, apart from the alert's own", async () => {
      const a = fresh("alert");
      await store.claim(a, "r1", init, LEASE);
      const { record } = await store.claim(a, "r1#escalation#deploys", { ...init, escalation: "deploys" }, LEASE);
      expect(record).toMatchObject({ alert_id: a, receiver_id: "r1#escalation#deploys", escalation: "deploys", state: "sending" });
      expect((await store.deliveriesOf(a)).map((d) => d.escalation ?? "")).toEqual(["", "deploys"]);
    });

    it("reads an alert as raised, for a follow-up's quote", async () => {
      const detail: LookoutEventDetail = { ...EXAMPLE_DETAILS["Deployment Failed"], id: fresh("raised") };
      await raiseAlert(detail);
      expect(await store.getAlert(detail.id)).toEqual(detail);
      expect(await store.getRaised(detail.id)).toEqual({ detail, quiet: false });
      expect(await store.getAlert(fresh("never-raised"))).toBeUndefined();
    });
  });
}
