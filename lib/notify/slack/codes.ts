/** What a Slack failure may say of itself: a short error code, never a body, a URL or a token. */
import { networkCode as anyNetworkCode } from "../receiver-retry.js";
import { oneLine } from "../view/format.js";

/** A short, printable Slack error code from a response body (webhooks answer plain text like "no_service"). */
export const codeOf = (body: unknown): string => {
  const s = typeof body === "string" ? body : "";
  const line = oneLine(s).slice(0, 60);
  return /^[\w.-]+$/.test(line) ? line : line ? "error" : "";
};

/** Network failures: the error code only; `slack_…` codes are the library's own. */
export const networkCode = (err: unknown): string => anyNetworkCode(err, (code) => code.startsWith("slack_"));
