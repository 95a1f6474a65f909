/**
 * The Slack sender against a local receiver that speaks Slack's contract (local/receivers/slack-receiver.ts):
 * both forms, 429 after Retry-After, 5xx backoff, 4xx not retried, the Web API's ts and thread_ts, and
 * no secret in any error. Waits are recorded by an injected sleep, so nothing here sleeps for real.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DETAIL_TYPES } from "../../../../lib/model/event.js";
import { renderSlackAlert, renderSlackDigest } from "../../../../lib/notify/slack/render.js";
import { slackSender, type SlackSenderOptions } from "../../../../lib/notify/slack/sender.js";
import { SLACK_ALERT_EVENT, SlackDeliveryError, type SlackMessage, type SlackTarget } from "../../../../lib/notify/types.js";
import { slackChannel } from "../../../../lib/notify/slack/channel.js";
import { exampleOf } from "../../../golden/slack-incident-inputs.js";
import { DIGEST_WINDOW, FIRST, RECOVERED, STILL, heldForDigest } from "../../../golden/inputs.js";
import { type SlackReceiver, startSlackReceiver } from "../../../../local/receivers/slack-receiver.js";

const SECRET = "T0LOOKOUT/B0LOOKOUT/sUpErSeCrEtHoOk";
const TOKEN = "xoxb-1111-2222-sUpErSeCrEtToKeN";

let slack: SlackReceiver;
let webhook: SlackTarget;
let api: SlackTarget;

beforeAll(async () => {
  slack = await startSlackReceiver();
  slack.tokens = new Set([TOKEN]);
  slack.channels = new Set(["C0ALERTS"]);
  webhook = { kind: "webhook", url: slack.webhookUrl(SECRET) };
  api = { kind: "api", token: TOKEN, channel: "C0ALERTS" };
});
afterAll(async () => slack?.close());
beforeEach(() => slack.reset());

/** A sender whose sleeps are recorded, not slept; random fixed so waits are exact. */
function sender(opts: SlackSenderOptions = {}) {
  const waits: number[] = [];
  const s = slackSender({ slackApiUrl: slack.apiUrl, sleep: async (ms) => void waits.push(ms), random: () => 1, ...opts });
  return { s, waits };
}

const msg: SlackMessage = renderSlackAlert(FIRST);

async function rejection(p: Promise<unknown>): Promise<SlackDeliveryError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SlackDeliveryError);
  const e = err as SlackDeliveryError;
  expect(e.message).not.toContain("sUpErSeCrEt");
  expect(e.message).not.toContain(slack.url);
  return e;
}

describe("incoming webhook form", () => {
  it("posts the message; no ts comes back and no thread_ts is sent", async () => {
    const { s, waits } = sender();
    await expect(s.post(webhook, { ...msg, thread_ts: "1.2" })).resolves.toEqual({});
    expect(slack.messages).toHaveLength(1);
    const got = slack.messages[0]!;
    expect(got.form).toBe("webhook");
    expect(got.path).toBe(`/services/${SECRET}`);
    expect(got.text).toBe(msg.text);
    expect(got.blocks).toEqual(msg.blocks);
    expect(got.thread_ts).toBeUndefined();
    expect(got.body.unfurl_links).toBe(false);
    expect(waits).toEqual([]);
  });

  it("429: waits what Retry-After says (plus jitter), then succeeds", async () => {
    slack.fail({ form: "webhook", status: 429, retryAfterSec: 3, times: 2 });
    const { s, waits } = sender({ random: () => 0 });
    await s.post(webhook, msg);
    expect(waits).toEqual([3000, 3000]);
    expect(slack.requests.map((r) => r.status)).toEqual([429, 429, 200]);
    expect(slack.messages).toHaveLength(1);
  });

  it("429 asking for longer than we wait: gives up at once, retryable, with retryAfterMs", async () => {
    slack.fail({ form: "webhook", status: 429, retryAfterSec: 120 });
    const { s, waits } = sender();
    const e = await rejection(s.post(webhook, msg));
    expect(e).toMatchObject({ retryable: true, status: 429, retryAfterMs: 120_000 });
    expect(waits).toEqual([]);
    expect(slack.requests).toHaveLength(1);
  });

  it("5xx: retried with jittered exponential backoff, then succeeds", async () => {
    slack.fail({ form: "webhook", status: 500, times: 2 });
    const { s, waits } = sender();
    await s.post(webhook, msg);
    expect(waits).toEqual([500, 1000]); // random()=1: the full backoff ceiling, base 500 doubling
    expect(slack.messages).toHaveLength(1);
  });

  it("5xx that never ends: a bounded number of attempts, then a retryable error", async () => {
    slack.fail({ form: "webhook", status: 503, times: 100 });
    const { s, waits } = sender();
    const e = await rejection(s.post(webhook, msg));
    expect(e).toMatchObject({ retryable: true, status: 503 });
    expect(slack.requests).toHaveLength(4);
    expect(waits).toEqual([500, 1000, 2000]);
  });

  it.each([
    ["no_service", 404],
    ["channel_not_found", 404],
    ["invalid_token", 403],
    ["action_prohibited", 403],
    ["channel_is_archived", 410],
    ["invalid_payload", 400],
  ])("%s (%i) is not retried", async (error, status) => {
    slack.fail({ form: "webhook", error });
    const { s, waits } = sender();
    const e = await rejection(s.post(webhook, msg));
    expect(e).toMatchObject({ retryable: false, status });
    expect(e.message).toContain(error);
    expect(slack.requests).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it("a receiver that is not there: retryable network error, without the URL", async () => {
    const gone = await startSlackReceiver();
    const url = gone.webhookUrl(SECRET);
    await gone.close();
    const { s, waits } = sender({ retry: { maxAttempts: 2 } });
    const e = await rejection(s.post({ kind: "webhook", url }, msg));
    expect(e.retryable).toBe(true);
    expect(e.status).toBeUndefined();
    expect(e.message).toMatch(/request failed \(ECONNREFUSED\)/);
    expect(waits).toHaveLength(1);
  });

  it("the total wait is capped", async () => {
    slack.fail({ form: "webhook", status: 429, retryAfterSec: 20, times: 5 });
    const { s, waits } = sender({ random: () => 0, retry: { maxTotalWaitMs: 30_000 } });
    const e = await rejection(s.post(webhook, msg));
    expect(waits).toEqual([20_000]);
    expect(e).toMatchObject({ retryable: true, status: 429, retryAfterMs: 20_000 });
  });
});

describe("Web API form (chat.postMessage)", () => {
  it("returns the ts and channel; a reply goes in the thread with thread_ts", async () => {
    const { s } = sender();
    const first = await s.post(api, msg);
    expect(first.channel).toBe("C0ALERTS");
    expect(first.ts).toMatch(/^\d+\.\d{6}$/);
    const reply = renderSlackAlert(RECOVERED, { mode: "thread", incident: { first: FIRST, ts: first.ts! } });
    const second = await s.post(api, { ...reply, thread_ts: first.ts! });
    expect(second.ts).not.toBe(first.ts);
    expect(slack.messages.map((m) => [m.form, m.channel, m.thread_ts])).toEqual([
      ["api", "C0ALERTS", undefined],
      ["api", "C0ALERTS", first.ts],
    ]);
    expect(slack.messages[0]!.token).toBe(TOKEN);
    expect(slack.messages[0]!.blocks).toEqual(msg.blocks);
    expect(slack.messages[1]!.text).toBe(reply.text);
  });

  it("429 ratelimited: waits Retry-After, then succeeds", async () => {
    slack.fail({ form: "api", status: 429, retryAfterSec: 2 });
    const { s, waits } = sender({ random: () => 0 });
    const posted = await s.post(api, msg);
    expect(posted.ts).toBeDefined();
    expect(waits).toEqual([2000]);
    expect(slack.requests.map((r) => r.status)).toEqual([429, 200]);
  });

  it("5xx: backoff, then succeeds", async () => {
    slack.fail({ form: "api", status: 503 });
    const { s, waits } = sender();
    await expect(s.post(api, msg)).resolves.toMatchObject({ channel: "C0ALERTS" });
    expect(waits).toEqual([500]);
  });

  it("a transient ok:false error (internal_error) is retried", async () => {
    slack.fail({ form: "api", error: "internal_error" });
    const { s, waits } = sender();
    await expect(s.post(api, msg)).resolves.toHaveProperty("ts");
    expect(waits).toHaveLength(1);
  });

  it.each([
    ["channel_not_found", { kind: "api", token: TOKEN, channel: "C0NOWHERE" }],
    ["invalid_auth", { kind: "api", token: "xoxb-sUpErSeCrEt-wrong", channel: "C0ALERTS" }],
    ["not_authed", { kind: "api", token: "", channel: "C0ALERTS" }],
  ] as [string, SlackTarget][])("%s is not retried, and the token is not in the error", async (code, target) => {
    const { s, waits } = sender();
    const e = await rejection(s.post(target, msg));
    expect(e).toMatchObject({ retryable: false, status: 200 });
    expect(e.message).toBe(`Slack chat.postMessage failed: ${code}`);
    expect(slack.requests).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it("a thread_ts Slack does not know: thread_not_found, not retried", async () => {
    const { s } = sender();
    const e = await rejection(s.post(api, { ...msg, thread_ts: "1.000001" }));
    expect(e.message).toContain("thread_not_found");
    expect(e.retryable).toBe(false);
  });
});

describe("reading back what an earlier attempt posted (Web API form)", () => {
  const who = { id: "slack-oncall", label: "slack #oncall" };

  it("each message carries its alert id; findSent finds it in the channel's history, or in the thread for a follow-up", async () => {
    const { s } = sender();
    const channel = slackChannel(who, api, s);
    const since = new Date(Date.now() - 60_000);
    const first = await channel.send(FIRST);
    expect(slack.messages[0]!.metadata).toEqual({ event_type: SLACK_ALERT_EVENT, event_payload: { alert_id: FIRST.id } });
    const incident = { first: FIRST, ts: first.ts! };
    // (a follow-up that does not close the incident: a closing reply is broadcast, so in the history too)
    const reply = await channel.send(STILL, incident);
    expect(await channel.findSent!(FIRST.id, since)).toEqual({ ts: first.ts, channel: "C0ALERTS" });
    // A reply is not in the channel's history: it is looked for in its thread.
    expect(await channel.findSent!(STILL.id, since)).toBeUndefined();
    expect(await channel.findSent!(STILL.id, since, incident)).toEqual({ ts: reply.ts, channel: "C0ALERTS" });
    expect(await channel.findSent!("another-alert", since)).toBeUndefined();
    // Only what was posted since the first attempt counts.
    expect(await channel.findSent!(FIRST.id, new Date(Date.now() + 60_000))).toBeUndefined();
    expect(slack.reads).toEqual(["conversations.history", "conversations.history", "conversations.replies", "conversations.history", "conversations.history"]);
  });

  it("a channel given by name is looked up once, and history is read page by page", async () => {
    slack.channels = new Set(["C0ALERTS", "#oncall", "#other"]);
    try {
      const { s } = sender();
      const byName: SlackTarget = { kind: "api", token: TOKEN, channel: "#oncall" };
      const channel = slackChannel(who, byName, s);
      const since = new Date(Date.now() - 60_000);
      const first = await channel.send(FIRST);
      for (let i = 0; i < 250; i++) await s.post(byName, msg); // the alert's message is on the second page
      expect(await channel.findSent!(FIRST.id, since)).toEqual({ ts: first.ts, channel: slack.messages[0]!.channelId });
      expect(await channel.findSent!(FIRST.id, since)).toBeDefined();
      expect(slack.reads.filter((r) => r === "conversations.list")).toHaveLength(1);
      expect(slack.reads.filter((r) => r === "conversations.history")).toHaveLength(4);
    } finally {
      slack.channels = new Set(["C0ALERTS"]);
    }
  });

  it("a post Slack took but answered 5xx or too late for is found, not posted again; one it did not take is posted again", async () => {
    const { s } = sender({ timeoutMs: 200 });
    const channel = slackChannel(who, api, s);
    slack.fail({ form: "api", status: 500, afterPosting: true });
    await expect(channel.send(FIRST)).resolves.toMatchObject({ channel: "C0ALERTS" });
    slack.fail({ form: "api", afterPosting: true, delayMs: 1_000 });
    await expect(channel.send(STILL)).resolves.toMatchObject({ channel: "C0ALERTS" });
    expect(slack.messages.map((m) => m.metadata?.event_payload?.alert_id)).toEqual([FIRST.id, STILL.id]);
    // A 5xx before posting: looked for, not found, posted again.
    slack.fail({ form: "api", status: 503 });
    await channel.send(RECOVERED);
    expect(slack.messages.map((m) => m.metadata?.event_payload?.alert_id)).toEqual([FIRST.id, STILL.id, RECOVERED.id]);
    expect(slack.reads).toEqual(["conversations.history", "conversations.history", "conversations.history"]);
  });

  it("an incoming webhook that took a post but answered too late: posted again once at most, then a retryable failure for the delivery to retry later", async () => {
    // One slow answer: sent again, and the second gets through (no fallback for one slow answer).
    slack.fail({ form: "webhook", afterPosting: true, delayMs: 1_000 });
    const once = sender({ timeoutMs: 200 });
    await expect(once.s.post(webhook, msg)).resolves.toEqual({});
    expect(slack.messages).toHaveLength(2);
    expect(once.waits).toHaveLength(1);
    // Slack slow on every post: two at most, never the four the retry policy allows.
    slack.reset();
    slack.fail({ form: "webhook", afterPosting: true, delayMs: 1_000, times: 4 });
    const slow = sender({ timeoutMs: 200 });
    const e = await rejection(slow.s.post(webhook, msg));
    expect(e.retryable).toBe(true);
    expect(e.message).toContain("it may have arrived");
    expect(slack.messages).toHaveLength(2);
  });

  it("the incoming-webhook form cannot be read back: no findSent", () => {
    expect(slackChannel(who, webhook, sender().s).findSent).toBeUndefined();
  });

  it("a read Slack refuses (missing_scope) is an error naming the method, without the token", async () => {
    slack.fail({ form: "api", method: "conversations.history", error: "missing_scope" });
    const e = await rejection(sender().s.findPosted(api as SlackTarget & { kind: "api" }, { alertId: FIRST.id, sinceMs: 0 }));
    expect(e.message).toBe("Slack conversations.history failed: missing_scope");
    expect(e.message).not.toContain(TOKEN);
  });
});

describe("what the renderers make, Slack accepts", () => {
  it("every detail-type, every mode, and a digest, through both forms", async () => {
    const { s } = sender();
    const messages: SlackMessage[] = [];
    for (const type of Object.values(DETAIL_TYPES)) {
      for (const mode of ["full", "thread", "quote"] as const) messages.push(renderSlackAlert(exampleOf(type), { mode, incident: { first: FIRST } }));
    }
    messages.push(renderSlackDigest(heldForDigest(), { channelLabel: "#ops", ...DIGEST_WINDOW }));
    for (const m of messages) {
      await s.post(webhook, m);
      await s.post(api, m);
    }
    expect(slack.messages).toHaveLength(messages.length * 2);
    expect(slack.requests.every((r) => r.status === 200)).toBe(true);
  });
});
