/**
 * The Slack actions function (lib/app/lambda/slack-actions.ts): a signed click is answered 200 at once
 * and handed to an asynchronous invocation, which acts on it; what Slack did not sign is refused; a body
 * API Gateway base64-encodes is read as sent; without notify.slack_actions it answers 404.
 */
import { describe, expect, it } from "vitest";
import type { APIGatewayProxyEventV2, Context } from "aws-lambda";
import { createSlackActionsHandler, type SlackActionEvent } from "../../../../lib/app/lambda/slack-actions.js";
import type { ActionPorts } from "../../../../lib/actions/act.js";
import { MemoryNotifyStore } from "../../../support/memory-notify-store.js";
import { slackSignature } from "../../../../lib/actions/slack-request.js";
import { buttonValue, INCIDENT_ACTIONS } from "../../../../lib/model/incident-action.js";
import { EXAMPLE_DETAILS } from "../../../fixtures/event-examples.js";

const SECRET = "s3cret";
const NOW = Date.parse("2026-03-02T14:10:00Z");
const context = { awsRequestId: "r", functionName: "lookout-test-slack-actions" } as Context;
const silent = { info() {}, warn() {}, error() {} };

function setup(configured = true) {
  const signingSecret = configured ? SECRET : undefined;
  const store = new MemoryNotifyStore({ now: () => new Date(NOW) });
  store.putAlert({ ...EXAMPLE_DETAILS["Deployment Failed"], id: "open-1", incident_id: "open-1" });
  const handed: SlackActionEvent[] = [];
  const ports: ActionPorts = {
    store, now: () => new Date(NOW), log: silent, shownBy: async () => undefined,
    slack: { post: async () => ({}), update: async () => ({}), findPosted: async () => undefined },
  };
  const h = createSlackActionsHandler({ signingSecret, ports, later: async (e) => void handed.push(e), now: () => NOW });
  return { h, handed, store };
}

function request(body: string, secret = SECRET, base64 = false): APIGatewayProxyEventV2 {
  const ts = String(NOW / 1000);
  return {
    version: "2.0", routeKey: "POST /slack/actions", rawPath: "/slack/actions", rawQueryString: "",
    headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": ts, "x-slack-signature": slackSignature(secret, ts, body) },
    body: base64 ? Buffer.from(body).toString("base64") : body, isBase64Encoded: base64,
    requestContext: {} as APIGatewayProxyEventV2["requestContext"],
  };
}
const click = new URLSearchParams({ payload: JSON.stringify({
  type: "block_actions", user: { id: "U0ANN", name: "ann" }, team: { id: "T1" },
  container: { channel_id: "C042", message_ts: "1.0001" },
  actions: [{ action_id: INCIDENT_ACTIONS.mute_1h, value: buttonValue("open-1", "open-1"), action_ts: "1772460600.000100" }],
}) }).toString();

describe("the Slack actions function", () => {
  it("answers a signed click at once and hands it on; the handed-on invocation acts on it", async () => {
    const { h, handed, store } = setup();
    expect(await h(request(click), context)).toMatchObject({ statusCode: 200, body: "" });
    expect(handed).toEqual([{ lookout: "slack-action", request: expect.objectContaining({ kind: "mute_1h", incidentId: "open-1", user: { id: "U0ANN", name: "ann" } }) }]);
    expect(await store.listMutes()).toEqual([]); // nothing done before the answer
    expect(await h(handed[0]!, context)).toMatchObject({ outcome: "muted" });
    expect(await store.listMutes()).toHaveLength(1);
    expect(await h(handed[0]!, context)).toEqual({ outcome: "duplicate" }); // Lambda's retry of it
  });

  it("reads a body API Gateway base64-encoded, as signed", async () => {
    const { h, handed } = setup();
    expect(await h(request(click, SECRET, true), context)).toMatchObject({ statusCode: 200 });
    expect(handed).toHaveLength(1);
  });

  it("refuses what Slack did not sign, and answers 404 where Slack actions are not configured", async () => {
    const { h, handed } = setup();
    expect(await h(request(click, "another secret"), context)).toMatchObject({ statusCode: 401, body: expect.stringContaining("forged") });
    expect(await h(request("payload=%7B%7D"), context)).toMatchObject({ statusCode: 200 }); // signed, and asks nothing
    expect(await h(request("nothing"), context)).toMatchObject({ statusCode: 400, body: expect.stringContaining("payload: missing") });
    expect(handed).toEqual([]);
    expect(await setup(false).h(request(click), context)).toMatchObject({ statusCode: 404 });
  });
});
