/**
 * Escalation (docs/actions.md, "Escalation"): the pure decisions — what schedules one, what a tick does
 * with a due one, what the close does — the `escalate` configuration with the path of each bad field,
 * and the notifier's flow on the in-memory NotifyStore (held to the DynamoDB adapter's contract) with the
 * real Slack and email channels over recording senders, on a simulated clock: escalated when nobody
 * acknowledged it, not when acknowledged or closed in time, once under racing ticks, the close reaching
 * whoever was paged, and a receiver that refuses it sending it to the fallback with receiver_failing.
 */
import { describe, expect, it } from "vitest";
import { checkConfig, parseConfig } from "../../../lib/config/load.js";
import { escalationPresentation, newEscalation, nextStep, onClose, schedules } from "../../../lib/notify/escalation.js";
import { flushEscalations, notifyEvent, type NotifierDeps, type RouteDecision } from "../../../lib/notify/notifier.js";
import { MemoryNotifyStore } from "../../support/memory-notify-store.js";
import { emailChannel } from "../../../lib/notify/email/channel.js";
import { slackChannel } from "../../../lib/notify/slack/channel.js";
import { receiverId, receiverLabel } from "../../../lib/config/receivers.js";
import { escalationKinds, escalationReceivers, type Receiver, type Route } from "../../../lib/config/route-types.js";
import { presenterFor } from "../../../lib/notify/presentation.js";
import { DeliveryError, type EmailMessage, type SlackMessage, type SlackSender, type SlackTarget } from "../../../lib/notify/types.js";
import type { AlertItem } from "../../../lib/model/alert-item.js";
import type { Escalation } from "../../../lib/model/notify-store.js";
import type { LookoutEventDetail } from "../../../lib/model/event.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";
import { dueEscalationKinds } from "../../../lib/app/dispatch-tick.js";
import { createNotifyHandler, FLUSH_DIGESTS } from "../../../lib/app/lambda/notify.js";
import { toEnvelope } from "../../../lib/alerts/publish.js";
import type { Context, SQSEvent } from "aws-lambda";
import { configProblem } from "../../support/config-problem.js";

const T0 = Date.parse("2026-03-02T14:10:00Z");
const MIN = 60_000;
const log = { info() {}, warn() {}, error() {} };
const opening: LookoutEventDetail = { ...EXAMPLE_DETAILS["Deployment Failed"], id: "open-1", incident_id: "open-1", severity: "critical" };
const recovered: LookoutEventDetail = { ...EXAMPLE_DETAILS["Deployment Recovered"], id: "rec-1", incident_id: "open-1" };
const ORG = "0b9c3a52-3f9e-4c43-9d5f-1f0f4a2b7c11";
const APP = "6a3c2d1e-5b4f-4a7e-8c9d-0e1f2a3b4c5d";
const head = `
platform: { url: "http://127.0.0.1:4010", token: "env:PLATFORM_API_TOKEN" }
watch: [{ organization: ${ORG}, applications: [${APP}] }]
`;
const ESCALATE = `escalate: { after: 15m, mention: S0ESCALATE, to: { email: { to: pager@example.com } } }`;
const config = (escalate = ESCALATE, notify = "notify: { email: { from: lookout@example.com }, fallback: { slack: { channel: '#platform', token: 'env:B' } } }") =>
  parseConfig(`${head}routes: [{ name: prod, slack: [{ channel: "#oncall", token: "env:B" }, { webhook_url: "env:HOOK" }], ${escalate} }]\n${notify}\n`, "lookout.yaml", {});

const problem = (text: string) => configProblem(text);

describe("the escalate configuration", () => {
  it("reads after, mention and to, in the shape a route's receivers take", () => {
    const route = config().routes[0]!;
    expect(route.escalate).toEqual({ afterMs: 15 * MIN, after: "15m", mention: ["S0ESCALATE"], to: { email: { type: "email", to: ["pager@example.com"] } } });
    expect(escalationReceivers(route)).toEqual([{ type: "email", to: ["pager@example.com"] }]);
  });

  it("names the bad field's path", () => {
    const at = (escalate: string, notify = "notify: { email: { from: lookout@example.com } }") =>
      problem(`${head}routes: [{ name: prod, slack: { channel: "#oncall", token: "env:B" }, escalate: ${escalate} }]\n${notify}\n`);
    expect(at("{ after: 30s, mention: S0ESCALATE }")).toBe("lookout.yaml: routes[0].escalate.after: is not a duration from 1m to 7d (like 15m): dispatch's tick comes once a minute");
    expect(at("{ after: soon, mention: S0ESCALATE }")).toMatch(/^lookout\.yaml: routes\[0\]\.escalate\.after: is not a duration from 1m to 7d/);
    expect(at(`{ after: 15m, mention: "<!subteam^S0ESCALATE>" }`)).toBe(
      "lookout.yaml: routes[0].escalate.mention: must be @here, @channel, a user group id (S0123ABCD) or a user id (U0123ABCD, W0123ABCD): write S0ESCALATE, not Slack's token");
    expect(at(`{ after: 15m, mention: "@oncall-leads" }`)).toBe(
      "lookout.yaml: routes[0].escalate.mention: must be @here, @channel, a user group id (S0123ABCD) or a user id (U0123ABCD, W0123ABCD)");
    expect(at("{ after: 15m, mention: [S0ESCALATE, oncall] }")).toMatch(/^lookout\.yaml: routes\[0\]\.escalate\.mention\[1\]: must be @here/);
    expect(at("{ after: 15m }")).toBe("lookout.yaml: routes[0].escalate: needs mention or to: whom the escalation calls");
    expect(at("{ after: 15m, to: {} }")).toBe("lookout.yaml: routes[0].escalate.to: needs slack or email: who is paged");
    expect(at("{ after: 15m, to: { slack: { channel: oncall, token: 'env:B' } } }")).toMatch(/^lookout\.yaml: routes\[0\]\.escalate\.to\.slack\.channel: must be a channel name/);
    expect(at("{ aftr: 15m, mention: S0ESCALATE }")).toMatch(/^lookout\.yaml: routes\[0\]\.escalate\.aftr: unknown field/);
    expect(at("{ after: 15m, to: { email: { to: pager@example.com } } }", "")).toBe("lookout.yaml: notify.email.from: is required: routes[0].escalate.to sends email");
  });
});

describe("the escalation's decisions", () => {
  const route = config().routes[0]! as Route & { escalate: NonNullable<Route["escalate"]> };
  const pending = newEscalation(opening, route, new Date(T0));
  const ack = { incident_id: "open-1", by: { id: "U0ANN", name: "ann" }, at: new Date(T0 + MIN).toISOString(), alert_id: "open-1" };

  it("a critical incident a route told someone of schedules one, due `after` from then, to the route's kinds and to's", () => {
    expect(pending).toMatchObject({ incident_id: "open-1", route: "prod", alert_id: "open-1", state: "pending", kinds: ["email", "slack"], due_at: new Date(T0 + 15 * MIN).toISOString() });
    expect(schedules(opening, route, "critical", ["sent"])).toBe(true);
    expect(schedules(opening, route, "critical", ["held", "muted"])).toBe(true);
    expect(schedules(opening, route, "error", ["sent"])).toBe(false);
    expect(schedules(opening, route, "critical", ["muted"])).toBe(false);
    expect(schedules(opening, route, "critical", [])).toBe(false);
    expect(schedules(recovered, route, "critical", ["sent"])).toBe(false);
    expect(schedules({ ...opening, amends: "x" }, route, "critical", ["sent"])).toBe(false);
    expect(schedules({ ...opening, incident_id: undefined } as LookoutEventDetail, route, "critical", ["sent"])).toBe(false);
    expect(schedules(opening, { ...route, escalate: undefined } as Route, "critical", ["sent"])).toBe(false);
  });

  it("a tick: waits until due, escalates unless acknowledged or muted, delivers what went out, releases what was cancelled", () => {
    const due = new Date(T0 + 15 * MIN);
    const mute = { id: "m1", scope: { service: "svc" }, until: new Date(T0 + 60 * MIN).toISOString(), reason: "migration", created_by: "slack:U0BOB (bob)", created_at: new Date(T0).toISOString() };
    expect(nextStep(pending, route, {}, new Date(T0 + 15 * MIN - 1))).toEqual({ step: "wait" });
    expect(nextStep(pending, route, { ack }, new Date(T0 + 15 * MIN - 1))).toEqual({ step: "wait" });
    expect(nextStep(pending, route, {}, due)).toEqual({ step: "escalate" });
    expect(nextStep(pending, route, { alertGone: true }, due)).toEqual({ step: "cancel", reason: `its alert ${pending.alert_id} is no longer stored` });
    expect(nextStep(pending, route, { ack }, due)).toEqual({ step: "cancel", reason: `acknowledged by ann at ${ack.at}` });
    expect(nextStep(pending, route, { mute }, due)).toEqual({ step: "cancel", reason: `muted until ${mute.until} by slack:U0BOB (bob): migration` });
    expect(nextStep(pending, { ...route, escalate: undefined } as Route, {}, due)).toEqual({ step: "cancel", reason: "route prod no longer escalates" });
    const escalated: Escalation = { ...pending, state: "escalated" };
    expect(nextStep(escalated, route, { ack }, new Date(T0 + 20 * MIN))).toEqual({ step: "deliver" });
    expect(nextStep({ ...pending, state: "cancelled" }, route, {}, new Date(T0 + 20 * MIN))).toEqual({ step: "release" });
    expect(nextStep(undefined, route, {}, new Date(T0 + 20 * MIN))).toEqual({ step: "release" });
  });

  it("the close: cancels a pending one, tells whoever was paged of one that went out", () => {
    expect(onClose(pending, recovered)).toEqual({ cancel: "closed by alert rec-1 (recovered)" });
    expect(onClose({ ...pending, state: "escalated" }, recovered)).toBe("tell_paged");
    expect(onClose({ ...pending, state: "cancelled" }, recovered)).toBe("nothing");
  });

  it("its presentation is critical and mentions the escalation's mentions, not the route's", () => {
    expect(escalationPresentation({ severity: "error", mentions: ["<!here>"], links: [] }, ["<!subteam^S0ESCALATE>"])).toEqual({ severity: "critical", mentions: ["<!subteam^S0ESCALATE>"], links: [] });
  });
});

/** The notifier over the memory store, with Slack and email recorded as their senders were asked. */
function world(opts: { refuse?: (r: Receiver) => boolean } = {}) {
  let clock = T0;
  const now = () => new Date(clock);
  const store = new MemoryNotifyStore({ now });
  store.putAlert(opening);
  store.putAlert(recovered);
  const cfg = config();
  const posted: Array<{ target: SlackTarget; message: SlackMessage }> = [];
  const updated: SlackMessage[] = [];
  const mails: EmailMessage[] = [];
  const raised: AlertItem[] = [];
  const slack: SlackSender = {
    post: async (target, message) => (posted.push({ target, message }), { ts: `${posted.length}.0001`, ...(target.kind === "api" ? { channel: "C042" } : {}) }),
    update: async (_t, at, message) => (updated.push(message), at),
    findPosted: async () => undefined,
  };
  const channelFor = async (r: Receiver) => {
    const who = { id: receiverId(r), label: receiverLabel(r) };
    if (opts.refuse?.(r)) {
      const refuse = () => Promise.reject(new DeliveryError("Slack answered channel_not_found", false, 404));
      return { ...who, send: refuse, sendDigest: refuse, sendEscalation: refuse };
    }
    if (r.type === "email") return emailChannel(who, { from: "lookout@example.com", to: r.to }, { send: async (m) => (mails.push(m), { messageId: m.headers!["Message-ID"]! }) });
    if (r.type !== "slack") throw new Error(`no ${r.type} receiver in these tests`);
    const target: SlackTarget = r.form === "api" ? { kind: "api", token: "xoxb", channel: r.channel } : { kind: "webhook", url: "https://hooks.slack.test/x" };
    return slackChannel(who, target, slack);
  };
  const deps: NotifierDeps = {
    settings: cfg.notify, routes: cfg.routes, store, now, log, channelFor, present: presenterFor(cfg),
    outbox: { raiseAlert: async (item) => (raised.push(item), true), expiresAt: () => 0 },
  };
  const route = cfg.routes[0]!;
  const decisions: RouteDecision[] = [{ route: "prod", receivers: route.slack, escalateTo: escalationReceivers(route) }];
  const escalations = () => posted.filter((p) => /Escalated/.test(p.message.text));
  return {
    store, deps, posted, updated, mails, raised, escalations,
    advance: (ms: number) => void (clock += ms),
    notify: (d: LookoutEventDetail) => notifyEvent(d, decisions, deps),
    tick: () => flushEscalations(["slack", "email"], deps),
  };
}

describe("escalating on a simulated clock", () => {
  it("nobody acknowledged it: at `after`, a reply in the thread shown in the channel, a message quoting it elsewhere, and the pager mailed — once", async () => {
    const w = world();
    await w.notify(opening);
    w.advance(14 * MIN);
    expect(await w.tick()).toEqual([]);
    w.advance(MIN);
    const out = await w.tick();
    expect(out.map((d) => [d.receiver, d.outcome])).toEqual([
      ["slack #oncall", "sent"], ["slack webhook env:HOOK", "sent"], ["email pager@example.com", "sent"],
    ]);
    const [api, hook] = w.escalations();
    expect(api!.message).toMatchObject({ thread_ts: "1.0001", reply_broadcast: true });
    expect(api!.message.text).toContain("<!subteam^S0ESCALATE>");
    expect(api!.message.text).toContain("not acknowledged within 15m");
    expect(hook!.message.thread_ts).toBeUndefined();
    expect(JSON.stringify(hook!.message.blocks)).toContain("<!subteam^S0ESCALATE>");
    expect(w.mails.map((m) => m.headers?.["X-Lookout-State"])).toEqual(["ESCALATED"]);
    expect(await w.store.getEscalation("open-1", "prod")).toMatchObject({ state: "escalated" });
    // Later ticks, and a redelivery of the opening, add nothing.
    w.advance(MIN);
    await w.notify(opening);
    expect(await w.tick()).toEqual([]);
    expect([w.escalations().length, w.mails.length]).toEqual([2, 1]);
    // Recorded with the escalated alert, apart from its own deliveries.
    const records = (await w.store.deliveriesOf("open-1")).filter((d) => d.escalation);
    expect(records.map((d) => [d.receiver_label, d.state, d.route])).toEqual([
      ["email pager@example.com", "sent", "prod"], ["slack #oncall", "sent", "prod"], ["slack webhook env:HOOK", "sent", "prod"],
    ]);
  });

  it("an acknowledgement before `after` cancels it, saying who", async () => {
    const w = world();
    await w.notify(opening);
    w.advance(5 * MIN);
    await w.store.acknowledge({ incident_id: "open-1", by: { id: "U0ANN", name: "ann" }, at: new Date(T0 + 5 * MIN).toISOString(), alert_id: "open-1" });
    w.advance(20 * MIN);
    expect(await w.tick()).toEqual([]);
    expect([w.escalations().length, w.mails.length]).toEqual([0, 0]);
    expect(await w.store.getEscalation("open-1", "prod")).toMatchObject({ state: "cancelled", reason: expect.stringContaining("acknowledged by ann") });
    expect(await w.store.dueEscalations("slack", new Date(T0 + 60 * MIN).toISOString())).toEqual([]);
  });

  it("muted before `after` (Mute 1h from the message, lookout mute): cancelled, saying by whom", async () => {
    const w = world();
    await w.notify(opening);
    w.advance(5 * MIN);
    await w.store.putMute({ id: "m1", scope: { service: opening.service!.id }, until: new Date(T0 + 65 * MIN).toISOString(), reason: "rollback under way", created_by: "slack:U0BOB (bob)", created_at: new Date(T0 + 5 * MIN).toISOString() });
    w.advance(10 * MIN);
    expect(await w.tick()).toEqual([]);
    expect(await w.store.getEscalation("open-1", "prod")).toMatchObject({ state: "cancelled", reason: expect.stringContaining("rollback under way") });
  });

  it("a close before `after` cancels it; nothing reaches the pager", async () => {
    const w = world();
    await w.notify(opening);
    w.advance(10 * MIN);
    await w.notify(recovered);
    w.advance(10 * MIN);
    expect(await w.tick()).toEqual([]);
    expect([w.escalations().length, w.mails.length]).toEqual([0, 0]);
    expect(await w.store.getEscalation("open-1", "prod")).toMatchObject({ state: "cancelled", reason: "closed by alert rec-1 (recovered)" });
  });

  it("two ticks racing escalate it once", async () => {
    const w = world();
    await w.notify(opening);
    w.advance(15 * MIN);
    const [a, b] = await Promise.all([w.tick(), w.tick()]);
    expect([...a!, ...b!].filter((d) => d.outcome === "sent")).toHaveLength(3);
    expect([w.escalations().length, w.mails.length]).toEqual([2, 1]);
  });

  it("a close after it went out reaches the pager too, in reply to the escalation", async () => {
    const w = world();
    await w.notify(opening);
    w.advance(15 * MIN);
    await w.tick();
    w.advance(5 * MIN);
    const deliveries = await w.notify(recovered);
    expect(deliveries.map((d) => [d.receiver, d.outcome])).toContainEqual(["email pager@example.com", "sent"]);
    const [escalation, close] = w.mails;
    expect(close!.headers?.["X-Lookout-State"]).toMatch(/^RECOVERED/);
    expect(close!.headers?.["In-Reply-To"]).toBe(escalation!.headers?.["Message-ID"]);
  });

  it("a receiver that refuses it for good: the fallback gets the escalation, and receiver_failing is raised", async () => {
    const w = world({ refuse: (r) => r.type === "email" });
    await w.notify(opening);
    w.advance(15 * MIN);
    const out = await w.tick();
    expect(out.map((d) => [d.route, d.receiver, d.outcome])).toContainEqual(["prod", "email pager@example.com", "rejected"]);
    expect(out.map((d) => [d.route, d.receiver, d.outcome])).toContainEqual(["fallback", "slack #platform", "sent"]);
    expect(w.posted.filter((p) => p.target.kind === "api" && p.target.channel === "#platform").map((p) => p.message.text)).toEqual([expect.stringContaining("not acknowledged within 15m")]);
    expect(w.raised.map((r) => r.detail.transition)).toEqual(["receiver_failing"]);
    // Settled for good: the next tick does not try again.
    w.advance(MIN);
    expect(await w.tick()).toEqual([]);
  });
});

describe("in the cloud: dispatch's tick and the notify function of each kind", () => {
  const context = { functionName: "notify", awsRequestId: "r", invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:notify" } as unknown as Context;
  const sqs = (detail: LookoutEventDetail): SQSEvent => ({
    Records: [{
      messageId: `m-${detail.id}`, receiptHandle: "h", messageAttributes: {}, md5OfBody: "", eventSource: "aws:sqs", eventSourceARN: "arn", awsRegion: "us-east-1",
      attributes: { MessageGroupId: "open-1", MessageDeduplicationId: `prod/${detail.id}` } as never,
      body: JSON.stringify({ route: "prod", group: "open-1", dedup: `prod/${detail.id}`, event: toEnvelope(detail, { account: "123456789012", region: "us-east-1", time: new Date(T0).toISOString(), eventId: `e-${detail.id}` }) }),
    }],
  });

  it("dispatch finds the kinds with an escalation due (a key read a kind), and the flush of one kind escalates to its receivers only", async () => {
    const w = world();
    const due = dueEscalationKinds(w.store, w.deps.routes!);
    await w.notify(opening);
    expect(await due(T0 + 14 * MIN)).toEqual([]);
    expect(await due(T0 + 15 * MIN)).toEqual(["email", "slack"]);
    w.advance(15 * MIN);
    const email = createNotifyHandler("email", { routes: w.deps.routes!, notifier: w.deps });
    await email({ lookout: FLUSH_DIGESTS }, context);
    expect([w.escalations().length, w.mails.length]).toEqual([0, 1]);
    expect(await due(T0 + 15 * MIN)).toEqual(["slack"]);
    await createNotifyHandler("slack", { routes: w.deps.routes!, notifier: w.deps })({ lookout: FLUSH_DIGESTS }, context);
    expect([w.escalations().length, w.mails.length]).toEqual([2, 1]);
    expect(await due(T0 + 16 * MIN)).toEqual([]);
    // The route's close reaches the email function (its rule targets escalate.to's kind), which tells the pager.
    w.advance(5 * MIN);
    expect(await email(sqs(recovered), context)).toEqual({ batchItemFailures: [] });
    expect(w.mails.map((m) => m.headers?.["X-Lookout-State"])).toEqual(["ESCALATED", expect.stringMatching(/^RECOVERED/)]);
  });
});

describe("an escalating route with PagerDuty beside Slack", () => {
  it("re-announces in Slack only: PagerDuty escalates by its own policies, so no due entry for the HTTP receivers' function", () => {
    const cfg = checkConfig({
      platform: { url: "http://127.0.0.1:1", token: "env:T" }, watch: [{ organization: "3a29f3d0-303f-40cd-b7ae-61d8adf98156" }],
      routes: [{ name: "prod", match: { kind: "deployment" }, slack: { channel: "#oncall", token: "env:SLACK" }, pagerduty: { routing_key: "env:PD" }, escalate: { after: "15m", mention: "S0LEADS" } }],
    }, "test", {});
    const route = cfg.routes[0]!;
    expect(route.http?.map((r) => r.type)).toEqual(["pagerduty"]);
    expect(escalationKinds(route)).toEqual(["slack"]);
  });
});
