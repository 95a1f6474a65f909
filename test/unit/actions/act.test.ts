/**
 * Acting on a click (lib/actions/act.ts) on the in-memory NotifyStore (held to the DynamoDB adapter's
 * contract by test/support/notify-store-contract.ts) and a Slack sender that records what it was asked:
 * an acknowledgement edits the message and replies once, the first stands; a mute is the scoped mute
 * `lookout mute` would set, said in the thread; a click Slack sends again does nothing twice; a mute
 * until resolved is lifted by the incident's close, which is still delivered.
 */
import { describe, expect, it } from "vitest";
import { actOn, clickId, MUTE_FOR_MS, muteScopeOf, type ActionPorts } from "../../../lib/actions/act.js";
import type { IncidentActionRequest } from "../../../lib/actions/slack-payload.js";
import type { SlackMessage, SlackSender, SlackTarget } from "../../../lib/notify/types.js";
import { MemoryNotifyStore } from "../../support/memory-notify-store.js";
import type { Channel } from "../../../lib/notify/deliver.js";
import { slackChannel } from "../../../lib/notify/slack/channel.js";
import { notifyEvent, type NotifierDeps } from "../../../lib/notify/notifier.js";
import type { Receiver } from "../../../lib/config/route-types.js";
import type { IncidentActionRecord, Mute } from "../../../lib/model/notify-store.js";
import type { AuditRow } from "../../../lib/model/audit-row.js";
import { activeMute } from "../../../lib/notify/mutes.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";
import { changesAlertId } from "../../../lib/alerts/changes-listed.js";

const T0 = Date.parse("2026-03-02T14:10:00Z");
const log = { info() {}, warn() {}, error() {} };
const opening = { ...EXAMPLE_DETAILS["Deployment Failed"], id: "open-1", incident_id: "open-1" };
const target: SlackTarget & { kind: "api" } = { kind: "api", token: "xoxb", channel: "#oncall", actions: true };

function world() {
  const now = () => new Date(T0);
  const store = new MemoryNotifyStore({ now });
  store.putAlert(opening);
  const posted: SlackMessage[] = [];
  const updated: Array<{ at: { channel: string; ts: string }; message: SlackMessage }> = [];
  const slack: SlackSender = {
    post: async (_t, m) => (posted.push(m), { ts: `${posted.length}.0002`, channel: "C042" }),
    update: async (_t, at, message) => (updated.push({ at, message }), { ts: at.ts, channel: at.channel }),
    findPosted: async () => undefined,
  };
  const ports: ActionPorts = { store, slack, now, log, shownBy: async (_alert, channel) => (channel === "C042" ? { target } : undefined) };
  return { store, posted, updated, ports };
}

const click = (over: Partial<IncidentActionRequest> = {}): IncidentActionRequest => ({
  kind: "acknowledge", incidentId: "open-1", alertId: "open-1", user: { id: "U0ANN", name: "ann" }, team: "T1",
  channel: "C042", messageTs: "1.0001", actionTs: "1772460600.000100", ...over,
});
const text = (m: SlackMessage) => JSON.stringify([m.blocks, m.attachments]);

describe("acting on a click", () => {
  it("acknowledge: the message says who is looking and loses its button, a reply tells the thread; the first stands", async () => {
    const { posted, updated, ports } = world();
    expect(await actOn(click(), ports)).toEqual({ outcome: "acknowledged", by: "U0ANN" });
    expect(updated).toHaveLength(1);
    expect(updated[0]!.at).toEqual({ channel: "C042", ts: "1.0001" });
    expect(text(updated[0]!.message)).toContain("Acknowledged by <@U0ANN>");
    expect(text(updated[0]!.message)).not.toContain("lookout_ack");
    expect(posted.map((m) => [m.thread_ts, m.text])).toEqual([["1.0001", "👀 Acknowledged by <@U0ANN>: they are looking at it."]]);
    // Bob presses it too, a second later: Ann stands, nothing more is shown.
    expect(await actOn(click({ user: { id: "U0BOB", name: "bob" }, actionTs: "1772460601.000100" }), ports)).toEqual({ outcome: "already_acknowledged", by: "U0ANN" });
    expect([updated.length, posted.length]).toEqual([1, 1]);
  });

  it("acknowledging a follow-up that stands for the incident keeps what changed before it failed", async () => {
    const { store, updated, ports } = world();
    const standIn = { ...EXAMPLE_DETAILS["Deployment Still Failing"], id: "still-9", incident_id: "open-1" };
    store.putAlert(standIn);
    store.putAlert({ ...EXAMPLE_DETAILS["Deployment Changes Listed"], id: changesAlertId(standIn.id), amends: standIn.id, incident_id: "open-1" });
    expect(await actOn(click({ alertId: standIn.id }), ports)).toMatchObject({ outcome: "acknowledged" });
    expect(text(updated[0]!.message)).toContain("What changed");
  });

  it("the same click again (Slack's retry, a replay) does nothing twice", async () => {
    const { posted, ports } = world();
    const mute = click({ kind: "mute_1h" });
    expect(await actOn(mute, ports)).toMatchObject({ outcome: "muted" });
    expect(await actOn(mute, ports)).toEqual({ outcome: "duplicate" });
    expect(posted).toHaveLength(1);
    expect(clickId(mute)).not.toBe(clickId({ ...mute, kind: "mute_until_resolved" }));
  });

  it("mute 1h: the incident's service in its environment, by who clicked, said in the thread", async () => {
    const { store, posted, ports } = world();
    const out = await actOn(click({ kind: "mute_1h" }), ports);
    expect(out).toMatchObject({ outcome: "muted" });
    const [mute] = await store.listMutes();
    expect(mute).toMatchObject({
      scope: { organization: opening.organization.id, service: opening.service!.id, environment: opening.environment!.id },
      until: new Date(T0 + MUTE_FOR_MS).toISOString(), created_by: "slack:U0ANN (ann)",
    });
    expect(mute!.reason).toContain("from Slack");
    expect(posted[0]!.text).toMatch(/^🔕 Muted .* until 15:10 UTC, by <@U0ANN>\./);
    expect(activeMute(opening, [mute!], new Date(T0 + 60_000))).toEqual(mute);
  });

  it("a cluster's or a webhook's incident mutes that cluster or webhook, by id", () => {
    const cluster = EXAMPLE_DETAILS["Cluster Error"];
    expect(muteScopeOf(cluster)).toEqual({ organization: cluster.organization.id, cluster: cluster.cluster!.id });
    const hook = EXAMPLE_DETAILS["Webhook Delivery Failed"];
    expect(muteScopeOf(hook)).toEqual({ organization: hook.organization.id, webhook: hook.webhook!.id });
    const scope = muteScopeOf(cluster);
    const mute = { id: "m", scope, until: "2999-01-01T00:00:00Z", reason: "r", created_by: "x", created_at: "2000-01-01T00:00:00Z" };
    expect(activeMute(cluster, [mute], new Date(T0))).toBe(mute);
    expect(activeMute({ ...cluster, cluster: { id: "another" } }, [mute], new Date(T0))).toBeUndefined();
  });

  it("mute until resolved: its follow-ups are muted; the incident's close is delivered and lifts it, even where no receiver takes the close", async () => {
    for (const receivers of [1, 0]) {
      const { store, ports } = world();
      await actOn(click({ kind: "mute_until_resolved" }), ports);
      const [mute] = await store.listMutes();
      expect(mute!.until_resolved).toBe("open-1");
      const sent: string[] = [];
      const channel: Channel = { id: "r", label: "slack #oncall", async send(d) { sent.push(d.id); return { ts: "9.9" }; }, async sendDigest() { return {}; } };
      const receiver: Receiver = { type: "slack", form: "api", channel: "#oncall", tokenRef: "env:T" };
      const deps: NotifierDeps = {
        settings: { slackRate: { perSecond: 10, burst: 10, perHour: 600 }, digestWithinMs: 60_000 }, store, outbox: { raiseAlert: async () => true, expiresAt: () => 0 },
        channelFor: async () => channel, now: () => new Date(T0 + 60_000), log,
      };
      const decisions = [{ route: "route", receivers: receivers ? [receiver] : [] }];
      const still = { ...EXAMPLE_DETAILS["Deployment Still Failing"], id: "still-2", incident_id: "open-1" };
      await notifyEvent(still, decisions, deps);
      const recovered = { ...EXAMPLE_DETAILS["Deployment Recovered"], id: "closed-3", incident_id: "open-1" };
      await notifyEvent(recovered, decisions, deps);
      expect(sent).toEqual(receivers ? ["closed-3"] : []);
      expect((await store.getMute(mute!.id))!.lifted_at).toBe(new Date(T0 + 60_000).toISOString());
    }
  });

  it("a click that failed part-way is finished by its retry: the mute written, the message edited", async () => {
    const { store, posted, updated, ports } = world();
    let failures = 1;
    const flaky: ActionPorts = { ...ports, store: Object.assign(Object.create(store) as MemoryNotifyStore, { putMute: async (m: Mute) => { if (failures-- > 0) throw new Error("throttled"); return store.putMute(m); } }) };
    const mute = click({ kind: "mute_1h" });
    await expect(actOn(mute, flaky)).rejects.toThrow("throttled");
    expect(await actOn(mute, flaky)).toMatchObject({ outcome: "muted" });
    expect(await store.listMutes()).toHaveLength(1);
    expect(await actOn(mute, flaky)).toEqual({ outcome: "duplicate" });

    let updates = 1;
    const slackOnce: ActionPorts = { ...ports, slack: { ...ports.slack, update: async (t, at, m) => { if (updates-- > 0) throw new Error("ratelimited"); return ports.slack.update(t, at, m); } } };
    const ack = click({ actionTs: "1772460700.000100" });
    await expect(actOn(ack, slackOnce)).rejects.toThrow("ratelimited");
    expect(await actOn(ack, slackOnce)).toEqual({ outcome: "acknowledged", by: "U0ANN" });
    expect(updated).toHaveLength(1);
    expect(posted.filter((m) => m.text?.startsWith("👀"))).toHaveLength(1);
  });

  it("a click on an alert the table does not hold does nothing, and says so in the log", async () => {
    const { posted, updated, ports } = world();
    expect(await actOn(click({ alertId: "gone", incidentId: "gone" }), ports)).toEqual({ outcome: "unknown_alert" });
    expect([posted.length, updated.length]).toEqual([0, 0]);
  });

  it("after the incident closed: Acknowledge and Mute until resolved do nothing but say so; Mute 1h still mutes", async () => {
    const { store, posted, updated, ports } = world();
    const recovered = { ...EXAMPLE_DETAILS["Deployment Recovered"], id: "closed-3", incident_id: "open-1" };
    store.putAlert(recovered);
    await store.markClosed({ incident_id: "open-1", alert_id: recovered.id, at: new Date(T0 - 60_000).toISOString() });
    expect(await actOn(click(), ports)).toEqual({ outcome: "already_resolved", at: new Date(T0 - 60_000).toISOString() });
    expect(await actOn(click({ kind: "mute_until_resolved" }), ports)).toMatchObject({ outcome: "already_resolved" });
    expect(await store.getAcknowledgement("open-1")).toBeUndefined();
    expect(await store.listMutes()).toEqual([]);
    expect(updated).toEqual([]);
    expect(posted.map((m) => m.text)).toEqual([
      "✅ This incident resolved at 2026-03-02 14:09 UTC: nothing to acknowledge.",
      "✅ This incident resolved at 2026-03-02 14:09 UTC: nothing to mute until it resolves.",
    ]);
    expect(await actOn(click({ kind: "mute_1h" }), ports)).toMatchObject({ outcome: "muted" });
  });

  it("an Acknowledge whose edit races the close draws the resolved form again, so the open form never stays", async () => {
    const { store, updated, ports } = world();
    const recovered = { ...EXAMPLE_DETAILS["Deployment Recovered"], id: "closed-3", incident_id: "open-1" };
    store.putAlert(recovered);
    // The close is taken (and its resolved edit made) while the acknowledgement's edit is on its way.
    const racing: ActionPorts = { ...ports, slack: { ...ports.slack, update: async (t, at, m) => {
      if (!updated.length) await store.markClosed({ incident_id: "open-1", alert_id: recovered.id, at: new Date(T0).toISOString() });
      return ports.slack.update(t, at, m);
    } } };
    expect(await actOn(click(), racing)).toMatchObject({ outcome: "acknowledged" });
    expect(updated.map((u) => u.at.ts)).toEqual(["1.0001", "1.0001"]);
    // What stays on the message is the last edit: resolved, no buttons.
    const last = text(updated.at(-1)!.message);
    expect(last).toContain("Resolved");
    expect(last).not.toMatch(/lookout_ack|lookout_mute/);
  });

  it("the notifier records an incident's close before any receiver turns its message resolved", async () => {
    const { store } = world();
    const order: string[] = [];
    const channel: Channel = { id: "r", label: "slack #oncall", async send(d) { order.push(`send ${d.id} closed=${!!(await store.getClosed("open-1"))}`); return { ts: "9.9" }; }, async sendDigest() { return {}; } };
    const deps: NotifierDeps = {
      settings: { slackRate: { perSecond: 10, burst: 10, perHour: 600 }, digestWithinMs: 60_000 }, store, outbox: { raiseAlert: async () => true, expiresAt: () => 0 },
      channelFor: async () => channel, now: () => new Date(T0), log,
    };
    const receiver: Receiver = { type: "slack", form: "api", channel: "#oncall", tokenRef: "env:T" };
    await notifyEvent({ ...EXAMPLE_DETAILS["Deployment Recovered"], id: "closed-3", incident_id: "open-1" }, [{ route: "route", receivers: [receiver] }], deps);
    expect(order).toEqual(["send closed-3 closed=true"]);
    expect(await store.getClosed("open-1")).toEqual({ incident_id: "open-1", alert_id: "closed-3", at: new Date(T0).toISOString() });
  });

  it("a click that did nothing is kept with its outcome but is no audit row; one that acted is", async () => {
    const { store, ports } = world();
    const rows: Array<[string, string | undefined]> = [];
    const recording: ActionPorts = { ...ports, store: Object.assign(Object.create(store) as MemoryNotifyStore, {
      recordAction: async (a: IncidentActionRecord, row?: AuditRow) => (rows.push([a.outcome!, row?.summary]), store.recordAction(a)),
    }) };
    await actOn(click(), recording);
    await actOn(click({ user: { id: "U0BOB", name: "bob" }, actionTs: "1772460601.000100" }), recording);
    expect(rows).toEqual([["acknowledged", expect.stringMatching(/^Acknowledged by ann in Slack: /)], ["already_acknowledged", undefined]]);
    expect((await store.actionsOn("open-1")).map((a) => a.outcome)).toEqual(["acknowledged", "already_acknowledged"]);
  });

  it("the same person's Acknowledge that failed after it was recorded is finished by their next press (a new click)", async () => {
    const { store, posted, updated, ports } = world();
    let replies = 3;
    const flaky: ActionPorts = { ...ports, slack: { ...ports.slack, post: async (t, m) => { if (replies-- > 0) throw new Error("slack is down"); return ports.slack.post(t, m); } } };
    for (let i = 0; i < 3; i++) await expect(actOn(click(), flaky)).rejects.toThrow("slack is down");
    expect((await store.getAcknowledgement("open-1"))!.by.id).toBe("U0ANN");
    // Ann presses again: her acknowledgement stands and its reply is posted now. Bob's press does nothing.
    expect(await actOn(click({ actionTs: "1772460660.000100" }), flaky)).toEqual({ outcome: "acknowledged", by: "U0ANN" });
    expect(posted.map((m) => m.text)).toEqual(["👀 Acknowledged by <@U0ANN>: they are looking at it."]);
    expect(await actOn(click({ user: { id: "U0BOB", name: "bob" }, actionTs: "1772460661.000100" }), flaky)).toEqual({ outcome: "already_acknowledged", by: "U0ANN" });
    expect(posted).toHaveLength(1);
    expect(updated.length).toBeGreaterThan(0);
  });

  it("a Mute until resolved whose write races the close is lifted at once: nothing stays muted", async () => {
    const { store, posted, ports } = world();
    const recovered = { ...EXAMPLE_DETAILS["Deployment Recovered"], id: "closed-3", incident_id: "open-1" };
    store.putAlert(recovered);
    // The close is taken (its mutes read, this one not yet among them) while the mute is being written.
    const racing: ActionPorts = { ...ports, store: Object.assign(Object.create(store) as MemoryNotifyStore, {
      putMute: async (m: Mute) => (await store.markClosed({ incident_id: "open-1", alert_id: recovered.id, at: new Date(T0).toISOString() }), store.putMute(m)),
    }) };
    expect(await actOn(click({ kind: "mute_until_resolved" }), racing)).toMatchObject({ outcome: "already_resolved" });
    const [mute] = await store.listMutes();
    expect(mute!.lifted_at).toBe(new Date(T0).toISOString());
    expect(activeMute(opening, [mute!], new Date(T0 + 60_000))).toBeUndefined();
    expect(posted.map((m) => m.text)).toEqual(["✅ This incident resolved at 2026-03-02 14:10 UTC, as it was being muted: nothing stays muted."]);
  });

  it("the mute's reply names what is muted as the alert names it", async () => {
    const { posted, ports } = world();
    await actOn(click({ kind: "mute_1h" }), ports);
    expect(posted[0]!.text).toContain(`Muted ${opening.service!.name} in ${opening.environment!.name} until`);
  });

  it("the close's resolved form keeps who acknowledged the incident", async () => {
    const { store, posted, updated, ports } = world();
    const receiver: Receiver = { type: "slack", form: "api", channel: "#oncall", tokenRef: "env:T" };
    const deps: NotifierDeps = {
      settings: { slackRate: { perSecond: 10, burst: 10, perHour: 600 }, digestWithinMs: 60_000 }, store, outbox: { raiseAlert: async () => true, expiresAt: () => 0 },
      channelFor: async () => slackChannel({ id: "slack-1", label: "slack #oncall" }, target, ports.slack), now: () => new Date(T0), log,
    };
    await notifyEvent(opening, [{ route: "route", receivers: [receiver] }], deps);
    expect(posted).toHaveLength(1);
    expect(await actOn(click({ messageTs: "1.0002" }), ports)).toMatchObject({ outcome: "acknowledged" });
    const recovered = { ...EXAMPLE_DETAILS["Deployment Recovered"], id: "closed-3", incident_id: "open-1" };
    store.putAlert(recovered);
    await notifyEvent(recovered, [{ route: "route", receivers: [receiver] }], deps);
    const resolved = text(updated.at(-1)!.message);
    expect(resolved).toContain("Resolved");
    expect(resolved).toContain("Acknowledged by <@U0ANN>");
    expect(resolved).not.toMatch(/lookout_ack|lookout_mute/);
  });
});
