/**
 * A request from Slack to the interactivity endpoint (a button clicked on a Lookout message), verified
 * as Slack signs it (docs/actions.md): `X-Slack-Signature` is `v0=` and the hex HMAC-SHA256, keyed by
 * the app's signing secret, of `v0:<X-Slack-Request-Timestamp>:<raw body>`; a timestamp more than five
 * minutes from now is refused, so a captured request cannot be replayed later. Written here rather than taken from
 * @slack/bolt: these twenty lines are all Lookout needs of a framework that brings an HTTP server,
 * OAuth and a dependency tree into a Lambda bundle.
 */
import { hmacHex, sameSignature } from "../model/hash.js";

/** How far a request's timestamp may be from now, in seconds (Slack's own advice: five minutes). */
export const SLACK_REQUEST_WINDOW_S = 300;

export type SlackRequestVerdict =
  | { ok: true; timestamp: number }
  | { ok: false; reason: "unsigned" | "malformed" | "stale" | "forged"; detail: string };

export interface SlackRequest {
  /** The `X-Slack-Request-Timestamp` header: Unix seconds. */
  timestamp: string | undefined;
  /** The `X-Slack-Signature` header. */
  signature: string | undefined;
  /** The body exactly as received: the signature is over its bytes, before any parsing. */
  rawBody: string;
}

/** The signature Slack sends for a body at a timestamp; the local Slack signs its clicks with it too. */
export function slackSignature(signingSecret: string, timestamp: string | number, rawBody: string): string {
  return `v0=${hmacHex(signingSecret, `v0:${timestamp}:${rawBody}`)}`;
}

export function verifySlackRequest(req: SlackRequest, signingSecret: string, nowMs: number): SlackRequestVerdict {
  if (!req.timestamp || !req.signature) return { ok: false, reason: "unsigned", detail: "X-Slack-Request-Timestamp or X-Slack-Signature is missing" };
  if (!/^\d{1,12}$/.test(req.timestamp)) return { ok: false, reason: "malformed", detail: "X-Slack-Request-Timestamp is not Unix seconds" };
  if (!/^v0=[0-9a-f]{64}$/.test(req.signature)) return { ok: false, reason: "malformed", detail: "X-Slack-Signature is not v0=<64 hex digits>" };
  const timestamp = Number(req.timestamp);
  const skew = nowMs / 1000 - timestamp;
  if (Math.abs(skew) > SLACK_REQUEST_WINDOW_S) {
    const when = skew > 0 ? `${Math.round(skew)} s ago` : `${Math.round(-skew)} s ahead of this clock`;
    return { ok: false, reason: "stale", detail: `signed ${when}; at most ${SLACK_REQUEST_WINDOW_S} s either way` };
  }
  if (!sameSignature(slackSignature(signingSecret, req.timestamp, req.rawBody), req.signature)) return { ok: false, reason: "forged", detail: "the signature does not match the body" };
  return { ok: true, timestamp };
}
