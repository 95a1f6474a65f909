import { describe, expect, it } from "vitest";
import { terminalSlack } from "../../../local/runtime/terminal-slack.js";
import { SLACK_ALERT_EVENT, type SlackMessage } from "../../../lib/notify/types.js";
import { slackChannel } from "../../../lib/notify/slack/channel.js";
import { slackSender } from "../../../lib/notify/slack/sender.js";

const target = { kind: "api" as const, token: "t", channel: "#preview" };
const message = (title: string, extra: Partial<SlackMessage> = {}): SlackMessage => ({
  text: title,
  blocks: [],
  attachments: [{ color: "#D62828", blocks: [{ type: "header", text: { type: "plain_text", text: title, emoji: false } }] }],
  metadata: { event_type: SLACK_ALERT_EVENT, event_payload: { alert_id: title } },
  ...extra,
});

describe("Slack in the terminal (the local preview)", () => {
  it("tells nobody: a Slack channel over it is an onlooker (the audit says shown, nobody told); one over Slack's Web API is not", () => {
    const who = { id: "slack-1", label: "slack #preview" };
    expect(slackChannel(who, target, terminalSlack(() => {})).onlooker).toBe(true);
    expect(slackChannel(who, target, slackSender()).onlooker).toBeUndefined();
  });

  it("prints a message, its thread replies indented, a broadcast reply and an edit in place, as Slack shows them", async () => {
    const lines: string[] = [];
    const slack = terminalSlack((l) => lines.push(l), () => new Date("2026-11-23T10:00:00Z"));
    const first = await slack.post(target, message("api deployment failed"));
    expect(first.ts).toMatch(/^\d+\.\d{6}$/);
    await slack.post(target, message("still failing", { thread_ts: first.ts! }));
    await slack.post(target, message("recovered", { thread_ts: first.ts!, reply_broadcast: true }));
    await slack.update(target, { channel: first.channel!, ts: first.ts! }, message("resolved after 14m", { attachments: [{ color: "#2EB67D", blocks: [{ type: "header", text: { type: "plain_text", text: "resolved after 14m", emoji: false } }] }] }));
    const text = lines.join("\n");
    expect(text).toContain("│🟥 api deployment failed"); // the header as written: a platform name keeps its case
    expect(text).toContain('    ┌─ ↳ slack #preview, reply in the thread of "api deployment failed"\n');
    expect(text).toContain('reply in the thread of "api deployment failed" (also sent to the channel)');
    expect(text).toContain('✎ slack #preview, edited in place: "api deployment failed"');
    expect(text).toContain("│🟩 resolved after 14m");
  });

  it("shows Lookout's bold labels as text, and the platform's asterisks as typed", async () => {
    const lines: string[] = [];
    const slack = terminalSlack((l) => lines.push(l));
    await slack.post(target, message("x", { blocks: [{ type: "context", elements: [{ type: "mrkdwn", text: "*Warning*  ·  \u200b*\u200bbold\u200b*\u200b" }] }] }));
    expect(lines.join("\n")).toContain("Warning  ·  *bold*");
  });

  it("finds what it posted for an alert, in the channel or in a thread, as the Web API's read-back does", async () => {
    const slack = terminalSlack(() => {}, () => new Date("2026-11-23T10:00:00Z"));
    const first = await slack.post(target, message("a"));
    const reply = await slack.post(target, message("b", { thread_ts: first.ts! }));
    expect(await slack.findPosted(target, { alertId: "a", sinceMs: 0 })).toEqual(first);
    expect(await slack.findPosted(target, { alertId: "b", sinceMs: 0, threadTs: first.ts! })).toEqual(reply);
    expect(await slack.findPosted(target, { alertId: "b", sinceMs: 0 })).toBeUndefined();
    expect(await slack.findPosted(target, { alertId: "a", sinceMs: Date.parse("2026-11-23T11:00:00Z") })).toBeUndefined();
  });

  it("prints the edit of a message an earlier run printed, rather than failing as a receiver would", async () => {
    const lines: string[] = [];
    const slack = terminalSlack((l) => lines.push(l));
    await expect(slack.update(target, { channel: "#preview", ts: "1.000001" }, message("resolved after 14m"))).resolves.toEqual({ channel: "#preview", ts: "1.000001" });
    expect(lines.join("\n")).toContain("a message of an earlier run");
    expect(lines.join("\n")).toContain("resolved after 14m");
  });
});
