/**
 * What a click asks for (lib/actions/slack-payload.ts): Lookout's buttons read from Slack's block_actions
 * payload as Slack sends it (form-encoded, `payload=<json>`), other clicks and interactions ignored, and a
 * malformed one refused at the path of what is wrong.
 */
import { describe, expect, it } from "vitest";
import { parseSlackAction } from "../../../lib/actions/slack-payload.js";
import { buttonValue, INCIDENT_ACTIONS } from "../../../lib/model/incident-action.js";

const form = (payload: unknown) => new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
const click = (actionId: string, value?: string) => ({
  type: "block_actions",
  user: { id: "U123", username: "ann", name: "ann", team_id: "T1" },
  team: { id: "T1", domain: "acme" },
  container: { type: "message", message_ts: "1795778691.000001", channel_id: "C042", is_ephemeral: false },
  channel: { id: "C042", name: "oncall" },
  message: { ts: "1795778691.000001", text: "…" },
  response_url: "https://hooks.slack.com/actions/T1/1/abc",
  trigger_id: "1.2.3",
  actions: [{ action_id: actionId, block_id: "b", type: "button", action_ts: "1795778700.123456", ...(value !== undefined ? { value } : {}) }],
});

describe("a click on a Lookout message", () => {
  it("asks to acknowledge or mute the incident its button names, by the user who clicked", () => {
    for (const [kind, id] of Object.entries(INCIDENT_ACTIONS)) {
      expect(parseSlackAction(form(click(id, buttonValue("inc-1", "alert-2"))))).toEqual({
        ok: true,
        request: { kind, incidentId: "inc-1", alertId: "alert-2", user: { id: "U123", name: "ann" }, team: "T1", channel: "C042", messageTs: "1795778691.000001", actionTs: "1795778700.123456" },
      });
    }
  });

  it("asks nothing for a link button or another kind of interaction", () => {
    expect(parseSlackAction(form(click("lookout_commit")))).toMatchObject({ ok: true, ignored: expect.stringContaining("lookout_commit") });
    expect(parseSlackAction(form({ type: "view_submission" }))).toMatchObject({ ok: true, ignored: expect.stringContaining("view_submission") });
  });

  it("is refused, saying where, when the body is not Slack's", () => {
    expect(parseSlackAction("text=hello")).toMatchObject({ ok: false, problem: expect.stringMatching(/^payload: missing/) });
    expect(parseSlackAction("payload=%7Bnot")).toMatchObject({ ok: false, problem: "payload: not JSON" });
    expect(parseSlackAction(form({ ...click(INCIDENT_ACTIONS.acknowledge, buttonValue("i", "a")), user: {} }))).toMatchObject({ ok: false, problem: expect.stringMatching(/^payload\.user\.id: /) });
    expect(parseSlackAction(form(click(INCIDENT_ACTIONS.acknowledge, "plain")))).toMatchObject({ ok: false, problem: expect.stringMatching(/^actions\[0\]\.value/) });
    const { container: _, channel: __, message: ___, ...nowhere } = click(INCIDENT_ACTIONS.acknowledge, buttonValue("i", "a"));
    expect(parseSlackAction(form(nowhere))).toMatchObject({ ok: false, problem: expect.stringMatching(/^container:/) });
    // Hostile sizes: a value past what a button may hold is not Lookout's.
    expect(parseSlackAction(form(click(INCIDENT_ACTIONS.acknowledge, buttonValue("i".repeat(3_000), "a"))))).toMatchObject({ ok: false });
  });
});
