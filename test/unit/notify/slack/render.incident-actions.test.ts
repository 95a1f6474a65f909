/**
 * The incident's buttons (docs/actions.md): on the message that stands for an incident in the Web API
 * form when Slack actions are configured — acknowledge (until someone has), mute an hour, mute until
 * resolved — each carrying the incident and the alert; who acknowledged it, once someone did; none on
 * replies, on the webhook form or once resolved. Every message stays valid Block Kit.
 */
import { describe, expect, it } from "vitest";
import { renderSlackAlert } from "../../../../lib/notify/slack/render.js";
import { slackMessageFor, slackUpdateFor } from "../../../../lib/notify/slack/channel.js";
import type { SlackMessage, SlackTarget } from "../../../../lib/notify/types.js";
import { buttonValue, INCIDENT_ACTIONS } from "../../../../lib/model/incident-action.js";
import { slackMessageProblem } from "../../../../local/receivers/block-kit.js";
import { EXAMPLE_DETAILS } from "../../../fixtures/event-examples.js";

const opening = { ...EXAMPLE_DETAILS["Deployment Failed"], id: "open-1", incident_id: "open-1" };
const blocksOf = (m: SlackMessage): Array<Record<string, unknown>> => [...m.blocks, ...(m.attachments ?? []).flatMap((a) => a.blocks)] as Array<Record<string, unknown>>;
const buttons = (m: SlackMessage) =>
  blocksOf(m).filter((b) => b.block_id === "lookout_incident").flatMap((b) => b.elements as Array<{ action_id: string; value: string }>);

describe("the incident's buttons", () => {
  it("acknowledge, mute 1h and mute until resolved, each naming the incident and the alert", () => {
    const m = renderSlackAlert(opening, { incidentActions: { incidentId: "open-1" } });
    expect(slackMessageProblem(m)).toBeUndefined();
    expect(buttons(m).map((b) => b.action_id)).toEqual([INCIDENT_ACTIONS.acknowledge, INCIDENT_ACTIONS.mute_1h, INCIDENT_ACTIONS.mute_until_resolved]);
    expect(new Set(buttons(m).map((b) => b.value))).toEqual(new Set([buttonValue("open-1", "open-1")]));
  });

  it("once acknowledged: who did, mentioned as Slack writes a user, and no acknowledge button", () => {
    const m = renderSlackAlert(opening, { incidentActions: { incidentId: "open-1", acknowledged: { userId: "U0123ABC", at: "2026-03-02T14:10:00Z" } } });
    expect(slackMessageProblem(m)).toBeUndefined();
    expect(buttons(m).map((b) => b.action_id)).toEqual([INCIDENT_ACTIONS.mute_1h, INCIDENT_ACTIONS.mute_until_resolved]);
    expect(JSON.stringify(blocksOf(m))).toContain("👀 Acknowledged by <@U0123ABC> <!date^");
    // Anything that is not a Slack user id is shown escaped, never as a mention.
    const hostile = renderSlackAlert(opening, { incidentActions: { incidentId: "open-1", acknowledged: { userId: "<!channel>", at: "2026-03-02T14:10:00Z" } } });
    expect(JSON.stringify(blocksOf(hostile))).toContain("Acknowledged by &lt;!channel&gt;");
  });

  it("only on the message that stands for the incident, in the Web API form, with Slack actions configured", () => {
    const api: SlackTarget = { kind: "api", token: "t", channel: "#oncall", actions: true };
    expect(buttons(slackMessageFor(opening, api))).toHaveLength(3);
    expect(buttons(slackMessageFor(opening, { ...api, actions: false }))).toEqual([]);
    expect(buttons(slackMessageFor(opening, { kind: "webhook", url: "https://hooks.slack.com/services/x" }))).toEqual([]);
    const still = { ...EXAMPLE_DETAILS["Deployment Still Failing"], incident_id: "open-1" };
    expect(buttons(slackMessageFor(still, api, { first: opening, shown: true, ts: "1.1" }))).toEqual([]);
    // A follow-up standing in for an opening this receiver never showed carries them.
    expect(buttons(slackMessageFor(still, api))).toHaveLength(3);
    const recovered = { ...EXAMPLE_DETAILS["Deployment Recovered"], incident_id: "open-1" };
    expect(buttons(renderSlackAlert(recovered, { incidentActions: { incidentId: "open-1" } }))).toEqual([]);
  });

  it("what changed, added to an acknowledged message, keeps who acknowledged it and no Acknowledge button", () => {
    const api: SlackTarget = { kind: "api", token: "t", channel: "#oncall", actions: true };
    const changes = { ...EXAMPLE_DETAILS["Deployment Changes Listed"], id: "changes-1", amends: "open-1", incident_id: "open-1" };
    const update = slackUpdateFor(changes, { first: opening, shown: true, ts: "1.1", amended: { alert: opening, ts: "1.1" }, acknowledged: { userId: "U0ANN", at: "2026-03-02T14:10:00Z" } }, undefined, api)!;
    expect(JSON.stringify(blocksOf(update.message))).toContain("Acknowledged by <@U0ANN>");
    expect(buttons(update.message).map((b) => b.action_id)).toEqual([INCIDENT_ACTIONS.mute_1h, INCIDENT_ACTIONS.mute_until_resolved]);
  });
});
