/**
 * Incidents in Slack, end to end through the delivery core (docs/events.md, "Incidents"): the Slack
 * sender against the Slack test receiver, the notify store on DynamoDB Local. A webhook target (and a
 * cluster) failing five times and recovering gives one channel message, its follow-ups in the thread
 * (repeats counted), one chat.update to green and one broadcast resolution; the incoming-webhook form
 * quotes instead and records repeats as suppressed; redelivering everything posts nothing twice.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { LookoutEventDetail } from "../../../lib/model/event.js";
import { newAlertItem } from "../../../lib/alerts/outbox-item.js";
import { DynamoNotifyStore } from "../../../lib/store/notify-store.js";
import { deliver, type DeliverDeps, type DeliveryOutcome } from "../../../lib/notify/deliver.js";
import { slackChannel } from "../../../lib/notify/slack/channel.js";
import { slackSender } from "../../../lib/notify/slack/sender.js";
import { SEVERITY_COLOR } from "../../../lib/notify/slack/render.js";
import type { Channel, SlackTarget } from "../../../lib/notify/types.js";
import { CHANGES, CLUSTER_OPEN, CLUSTER_RECOVERED, FIRST, HOOK_OPEN, HOOK_RECOVERED } from "../../golden/slack-incident-inputs.js";
import { slackMessageProblem } from "../../../local/receivers/block-kit.js";
import { freshTable, TEST_RETENTION_MS } from "../../support/dynamodb.js";
import { type SlackReceiver, startSlackReceiver } from "../../../local/receivers/slack-receiver.js";

let slack: SlackReceiver;
let store: DynamoNotifyStore;
let doc: DynamoDBDocumentClient;
let tableName: string;
let clock = Date.parse("2026-03-02T14:00:00Z");
const now = () => new Date(clock);
const log = { info() {}, warn() {}, error() {} };
// A wait for an opening on its way looks again at once: the looks are counted, so it still ends.
const deps = (): DeliverDeps => ({ store, now, rate: { perSecond: 1000, burst: 1000 }, log, leaseMs: 60_000, sleep: async () => {} });

beforeAll(async () => {
  slack = await startSlackReceiver({ now: () => clock });
  const t = await freshTable("incident-slack");
  tableName = t.tableName;
  doc = DynamoDBDocumentClient.from(t.client);
  store = new DynamoNotifyStore({ client: t.client, tableName, retentionMs: TEST_RETENTION_MS, now });
});
afterAll(async () => slack.close());
beforeEach(() => slack.reset());

let n = 0;
/** Both Slack forms, as fresh receivers (their own delivery records). */
function receivers(): { api: Channel; hook: Channel } {
  n += 1;
  const s = slackSender({ slackApiUrl: slack.apiUrl, sleep: async () => {}, random: () => 0 });
  const api: SlackTarget = { kind: "api", token: "xoxb-test", channel: `#oncall-${n}` };
  return {
    api: slackChannel({ id: `api-${n}`, label: `slack #oncall-${n}` }, api, s),
    hook: slackChannel({ id: `hook-${n}`, label: `slack webhook ${n}` }, { kind: "webhook", url: slack.webhookUrl(`T/B/hook${n}`) }, s),
  };
}

/** An incident's alerts: the opening failure, four more (the 3rd and 4th repeat the 2nd), its close. */
function incident(open: LookoutEventDetail, close: LookoutEventDetail, tag: string): LookoutEventDetail[] {
  const id = (s: string) => `${tag}-${s}`;
  const at = (min: number) => new Date(Date.parse(open.occurred_at) + min * 60_000).toISOString();
  const facts = (failures: number, repeat = false) => ({ ...open.incident!, failures, ...(repeat ? { repeat } : {}) });
  const follow = (k: number, repeat: boolean, status: string): LookoutEventDetail => ({
    ...open, id: id(`f${k}`), incident_id: id("f1"), occurred_at: at(k), status, summary: `${open.summary} (${k})`, incident: facts(k, repeat),
  });
  return [
    { ...open, id: id("f1"), incident_id: id("f1"), incident: facts(1) },
    follow(2, false, "500"),
    follow(3, true, "500"),
    follow(4, true, "500"),
    follow(5, false, "503"),
    { ...close, id: id("closed"), incident_id: id("f1"), incident: { ...close.incident!, opened_at: open.occurred_at, failures: 5 } },
  ];
}

/** What the poller does first: the alert in the outbox, where a follow-up finds its first alert. */
const raise = (d: LookoutEventDetail) => doc.send(new PutCommand({ TableName: tableName, Item: newAlertItem(d, now().toISOString(), 0) }));

async function deliverAll(events: LookoutEventDetail[], channels: Channel[]): Promise<DeliveryOutcome[]> {
  const out: DeliveryOutcome[] = [];
  for (const d of events) {
    await raise(d);
    for (const c of channels) out.push(await deliver(d, "route", c, [], deps()));
  }
  return out;
}

const inChannel = (channel: Channel, form: "api" | "webhook") =>
  slack.messages.filter((m) => (form === "api" ? m.form === "api" && m.channel === `#${channel.label.split("#")[1]}` : m.form === "webhook" && m.path?.endsWith(`/hook${channel.id.split("-")[1]}`)));

function expectIncidentInSlack(events: LookoutEventDetail[], api: Channel) {
  const messages = inChannel(api, "api");
  const top = messages.filter((m) => !m.thread_ts);
  expect(top, "one channel message").toHaveLength(1);
  const first = top[0]!;
  const replies = messages.filter((m) => m.thread_ts === first.ts);
  expect(replies, "every follow-up in the thread").toHaveLength(events.length - 1);
  expect(replies.filter((m) => m.text?.startsWith("🔁 Same error again")).map((m) => m.text!.split(":")[0])).toEqual([
    "🔁 Same error again — 3rd time",
    "🔁 Same error again — 4th time",
  ]);
  expect(replies.filter((m) => m.reply_broadcast), "one broadcast resolution").toHaveLength(1);
  expect(replies.at(-1)!.reply_broadcast).toBe(true);
  expect(slack.updates.filter((u) => u.ts === first.ts), "one chat.update").toHaveLength(1);
  expect(first.edits).toBe(1);
  expect(first.attachments![0]!.color).toBe(SEVERITY_COLOR.info);
  expect(first.text).toContain("Resolved after");
  for (const m of messages) expect(slackMessageProblem({ text: m.text, blocks: m.blocks, attachments: m.attachments })).toBeUndefined();
}

describe("the Slack test receiver's chat.update", () => {
  it("keeps the ts, and answers message_not_found for a ts it never gave", async () => {
    const s = slackSender({ slackApiUrl: slack.apiUrl, sleep: async () => {}, random: () => 0 });
    const target = { kind: "api" as const, token: "xoxb-test", channel: "#updates" };
    const posted = await s.post(target, { text: "first", blocks: [] });
    const edited = await s.update(target, { channel: posted.channel!, ts: posted.ts! }, { text: "second", blocks: [] });
    expect(edited).toEqual(posted);
    expect(slack.messages).toHaveLength(1);
    expect(slack.messages[0]).toMatchObject({ text: "second", edits: 1, ts: posted.ts });
    await expect(s.update(target, { channel: posted.channel!, ts: "1.000001" }, { text: "x", blocks: [] })).rejects.toThrow(/message_not_found/);
  });
});

describe("an incident in Slack", () => {
  for (const [kind, open, close] of [
    ["webhook target", HOOK_OPEN, HOOK_RECOVERED],
    ["cluster", CLUSTER_OPEN, CLUSTER_RECOVERED],
  ] as const) {
    it(`a ${kind} failing five times then recovering: one message, replies in its thread, one update to green, one broadcast`, async () => {
      const events = incident(open, close, `${kind.split(" ")[0]}-${n}`);
      const { api, hook } = receivers();
      const outcomes = await deliverAll(events, [api, hook]);
      expectIncidentInSlack(events, api);

      // The incoming-webhook form: the first in full, follow-ups quoting it, repeats recorded and not posted.
      const posted = inChannel(hook, "webhook");
      expect(posted).toHaveLength(4);
      expect(JSON.stringify(posted[1]!.blocks)).toContain("Follow-up of");
      expect(posted.at(-1)!.text).toBe(events.at(-1)!.summary);
      expect(JSON.stringify(posted.at(-1)!.attachments)).toContain("✅ Resolved after");
      expect(outcomes.filter((o) => o === "suppressed")).toHaveLength(2);
      const repeat = (await store.deliveriesOf(events[2]!.id)).find((r) => r.receiver_id === hook.id)!;
      expect(repeat).toMatchObject({ state: "suppressed", suppression: { reason: "repeat" } });

      // The closing delivery records the message it turned green.
      const closed = (await store.deliveriesOf(events.at(-1)!.id)).find((r) => r.receiver_id === api.id)!;
      const first = inChannel(api, "api").find((m) => !m.thread_ts)!;
      expect(closed.updated_message).toMatchObject({ ts: first.ts, channel: first.channelId });

      // Every event again (a crash, a retry, SQS redelivering): nothing opened or posted twice.
      const before = slack.messages.length;
      const again = await deliverAll(events, [api, hook]);
      expect(again.every((o) => o === "duplicate")).toBe(true);
      expect(slack.messages).toHaveLength(before);
      expectIncidentInSlack(events, api);
    });
  }

  it("a crash after the update or after the post: redelivered, it updates the same message again and posts nothing twice", async () => {
    const events = incident(HOOK_OPEN, HOOK_RECOVERED, `crash-${n}`);
    const { api } = receivers();
    await deliverAll(events.slice(0, -1), [api]);
    const closing = events.at(-1)!;
    await raise(closing);

    // The update went through, the reply did not (Slack refused it once): the delivery failed.
    slack.fail({ form: "api", error: "not_in_channel" });
    expect(await deliver(closing, "route", api, [], deps())).toBe("rejected");
    expect(slack.updates).toHaveLength(1);
    // Redelivered: the same update again (chat.update is idempotent), then the reply, once.
    expect(await deliver(closing, "route", api, [], deps())).toBe("sent");
    const first = inChannel(api, "api").find((m) => !m.thread_ts)!;
    expect(slack.updates.map((u) => u.ts)).toEqual([first.ts, first.ts]);
    expect(inChannel(api, "api").filter((m) => m.reply_broadcast)).toHaveLength(1);

    // A sender that died after posting, before its record: the next one reads the thread back.
    const again = { ...closing, id: `${closing.id}-b` };
    await raise(again);
    const record = await store.claim(again.id, api.id, { receiver_label: api.label, route: "route" }, 60_000);
    expect(record.claimed).toBe(true);
    await api.send(again, { first: events[0]!, ts: first.ts!, channel: first.channelId! });
    clock += 120_000; // the dead sender's lease runs out
    const posts = slack.messages.length;
    // Found in the thread: recorded as sent by the sender that died, not posted again.
    expect(await deliver(again, "route", api, [], deps())).toBe("duplicate");
    expect(slack.messages).toHaveLength(posts);
    expect(await store.getDelivery(again.id, api.id)).toMatchObject({ state: "sent", attempts: 2 });
  });

  it("an amendment updates the amended alert's message where it was posted, is a follow-up elsewhere, and its own message where that alert was never shown", async () => {
    const { api, hook } = receivers();
    const { api: never } = receivers();
    await deliverAll([FIRST], [api, hook]);
    const outcomes = await deliverAll([CHANGES], [api, hook, never]);
    expect(outcomes).toEqual(["sent", "sent", "sent"]);

    const first = inChannel(api, "api");
    expect(first).toHaveLength(1); // updated in place, nothing posted
    expect(first[0]!.edits).toBe(1);
    expect(JSON.stringify(first[0]!.attachments)).toContain("What changed");
    expect(first[0]!.metadata?.event_payload?.alert_id).toBe(FIRST.id);

    const quoted = inChannel(hook, "webhook");
    expect(quoted).toHaveLength(2);
    expect(JSON.stringify(quoted[1]!.attachments)).toContain("What changed");

    // Never told of the failure it amends (another route took it): what changed is not lost, it is a message of its own.
    const alone = inChannel(never, "api");
    expect(alone).toHaveLength(1);
    expect(alone[0]!.thread_ts).toBeUndefined();
    expect(JSON.stringify(alone[0]!.attachments)).toContain("What changed");
  });
});
