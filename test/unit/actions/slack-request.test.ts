/**
 * A click from Slack, verified as Slack signs it (lib/actions/slack-request.ts): valid, stale, forged,
 * malformed and unsigned requests. The example is Slack's own, from its documentation of request
 * signing, so the HMAC is checked against a value this code did not produce.
 */
import { describe, expect, it } from "vitest";
import { SLACK_REQUEST_WINDOW_S, slackSignature, verifySlackRequest } from "../../../lib/actions/slack-request.js";

// https://api.slack.com/authentication/verifying-requests-from-slack (its worked example).
const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const TIMESTAMP = "1531420618";
const BODY = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
const SIGNATURE = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
const AT = Number(TIMESTAMP) * 1000;

describe("a request from Slack", () => {
  it("is accepted when signed with the signing secret over the raw body, within five minutes", () => {
    expect(slackSignature(SECRET, TIMESTAMP, BODY)).toBe(SIGNATURE);
    expect(verifySlackRequest({ timestamp: TIMESTAMP, signature: SIGNATURE, rawBody: BODY }, SECRET, AT + 60_000)).toEqual({ ok: true, timestamp: Number(TIMESTAMP) });
    expect(verifySlackRequest({ timestamp: TIMESTAMP, signature: SIGNATURE, rawBody: BODY }, SECRET, AT - 60_000).ok).toBe(true);
  });

  it("is refused as stale past the window, either way (a replay later, a clock far ahead)", () => {
    for (const now of [AT + (SLACK_REQUEST_WINDOW_S + 1) * 1000, AT - (SLACK_REQUEST_WINDOW_S + 1) * 1000]) {
      expect(verifySlackRequest({ timestamp: TIMESTAMP, signature: SIGNATURE, rawBody: BODY }, SECRET, now)).toMatchObject({ ok: false, reason: "stale" });
    }
  });

  it("is refused as forged when the body, the timestamp or the secret differ", () => {
    const forged = [
      { timestamp: TIMESTAMP, signature: SIGNATURE, rawBody: `${BODY}&x=1` },
      { timestamp: String(Number(TIMESTAMP) + 1), signature: SIGNATURE, rawBody: BODY },
      { timestamp: TIMESTAMP, signature: slackSignature("another secret", TIMESTAMP, BODY), rawBody: BODY },
      { timestamp: TIMESTAMP, signature: SIGNATURE.toUpperCase().replace("V0=", "v0="), rawBody: BODY },
    ];
    for (const req of forged) expect(verifySlackRequest(req, SECRET, AT)).toMatchObject({ ok: false });
    expect(verifySlackRequest(forged[0]!, SECRET, AT)).toMatchObject({ reason: "forged" });
    expect(verifySlackRequest(forged[2]!, SECRET, AT)).toMatchObject({ reason: "forged" });
  });

  it("is refused, saying which header is wrong, when unsigned or malformed", () => {
    expect(verifySlackRequest({ timestamp: undefined, signature: SIGNATURE, rawBody: BODY }, SECRET, AT)).toMatchObject({ ok: false, reason: "unsigned" });
    expect(verifySlackRequest({ timestamp: TIMESTAMP, signature: undefined, rawBody: BODY }, SECRET, AT)).toMatchObject({ ok: false, reason: "unsigned" });
    expect(verifySlackRequest({ timestamp: "12.5", signature: SIGNATURE, rawBody: BODY }, SECRET, AT)).toMatchObject({ ok: false, reason: "malformed", detail: expect.stringContaining("Timestamp") });
    expect(verifySlackRequest({ timestamp: TIMESTAMP, signature: "v1=abc", rawBody: BODY }, SECRET, AT)).toMatchObject({ ok: false, reason: "malformed", detail: expect.stringContaining("Signature") });
  });
});
