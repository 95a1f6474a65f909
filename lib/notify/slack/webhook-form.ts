/**
 * The incoming-webhook form, through `@slack/webhook`: one attempt a call (the retries are sender.ts's).
 * Loaded on the first message to a webhook (./sender.ts), so a function that posts through the Web API
 * only never loads it.
 */
import { IncomingWebhook, IncomingWebhookHTTPError, IncomingWebhookRequestError } from "@slack/webhook";
import { parseRetryAfter } from "../../model/backoff.js";
import { AttemptFailed, type Failure, mayHaveArrivedAfter } from "../receiver-retry.js";
import type { SlackMessage, SlackPosted } from "../types.js";
import { codeOf, networkCode } from "./codes.js";

export function webhookForm(opts: { timeout: number; now: () => number }) {
  const { timeout, now } = opts;
  return async function viaWebhook(url: string, message: SlackMessage): Promise<SlackPosted> {
    let last: Response | undefined;
    const hook = new IncomingWebhook(url, {
      timeout,
      retryConfig: { retries: 0 },
      // Its errors do not carry the response headers: Retry-After is read through the fetch it lets us supply.
      fetch: async (input, init) => (last = await fetch(input, init)),
    });
    try {
      // Incoming webhooks cannot reply in a thread: thread_ts is not sent (renderers quote instead).
      await hook.send({
        text: message.text,
        blocks: message.blocks as never,
        ...(message.attachments ? { attachments: message.attachments as never } : {}),
        unfurl_links: message.unfurl_links ?? false,
        unfurl_media: message.unfurl_media ?? false,
      });
      return {};
    } catch (err) {
      if (err instanceof IncomingWebhookHTTPError) {
        const status = err.statusCode;
        const code = codeOf(err.body);
        const failure: Failure = {
          // A 5xx is Slack saying it failed (rollup_error): posted again at once, as Slack suggests.
          retryable: status === 429 || status >= 500,
          status,
          reason: `Slack incoming webhook answered HTTP ${status}${code ? ` ${code}` : ""}`,
        };
        const retryAfterMs = last ? parseRetryAfter(last.headers.get("retry-after"), now()) : undefined;
        if (status === 429 && retryAfterMs !== undefined) failure.retryAfterMs = retryAfterMs;
        throw new AttemptFailed(failure);
      }
      const code = err instanceof IncomingWebhookRequestError ? networkCode(err.original) : networkCode(err);
      throw new AttemptFailed({ retryable: true, mayHaveArrived: mayHaveArrivedAfter(code), reason: `Slack incoming webhook request failed (${code})` });
    }
  };
}
