/**
 * SlackSender adapters: the incoming-webhook form through `@slack/webhook` (./webhook-form.ts), the Web
 * API form (chat.postMessage, which returns the message ts for threads) through `@slack/web-api`
 * (./api-form.ts). Each form's library is loaded when the first message of that form is sent: a function
 * whose receivers post one way does not load the other's at its cold start (`@slack/web-api` and what it
 * brings is a seventh of what the Slack function loads at import).
 *
 * RETRIES are ours, not the libraries', for both forms: one bounded policy (a few attempts and a cap
 * on the total wait, so a Lambda never sleeps for minutes), the project's one jittered backoff
 * (`backoffDelay` of lib/model/backoff.ts), and an injectable sleep and random source so tests do
 * not wait. So each library is configured not to retry: `@slack/web-api` with `retryConfig: { retries:
 * 0 }` and `rejectRateLimitedCalls: true` (left to itself it sleeps for whatever Retry-After says, up to
 * ten times in thirty minutes); `@slack/webhook` retries nothing by default, but its errors do not carry
 * the response headers, so Retry-After is read through the `fetch` it lets us supply.
 *
 * What is retried: HTTP 429 after Retry-After (a little jitter added); 5xx and network failures with
 * backoff; the Web API's transient `ok:false` errors (internal_error, service_unavailable,
 * request_timeout). A post that may have arrived unanswered is looked for before it is posted again (Web
 * API), or posted again once at most (incoming webhooks): `postedAlready`. Not retried: other 4xx
 * (webhook 404 no_service / channel_not_found, 403 invalid_token / action_prohibited, 410
 * channel_is_archived, 400 invalid_payload) and the Web API's
 * other `ok:false` errors (invalid_auth, channel_not_found, not_in_channel, invalid_blocks, …).
 *
 * SECRETS. The webhook URL and the token never appear in an error message: messages are built here
 * from the status and Slack's short error code only, never from a library's message or the request.
 */
import { onFirstUse } from "../../model/first-use.js";
import { defaultRetryPolicy, type RetryOptions, type RetryPolicy, type RetrySettings, retryLoop, withRetries } from "../receiver-retry.js";
import { type PostedQuery, READ_BACK_SKEW_MS, type SlackMessage, type SlackPosted, type SlackSender, type SlackTarget } from "../types.js";
import { SlackDeliveryError } from "../types.js";

/** Slack's usual answer for chat.postMessage's Retry-After is 1-30 s: the shared policy waits that long. */
export type SlackRetryPolicy = RetryPolicy;
export const defaultSlackRetryPolicy: SlackRetryPolicy = defaultRetryPolicy;

export interface SlackSenderOptions extends RetrySettings {
  now?: () => number;
  /** The Web API's base URL (default https://slack.com/api/); tests point it at a local receiver. */
  slackApiUrl?: string;
  /** Per request, ms (default 10 s). */
  timeoutMs?: number;
  /** Called before each wait, for metrics and tests. */
  onRetry?: (info: { attempt: number; delayMs: number; status?: number; form: SlackTarget["kind"] }) => void;
}

export function slackSender(opts: SlackSenderOptions = {}): SlackSender {
  const loop = retryLoop(opts);
  const now = opts.now ?? Date.now;
  const timeout = opts.timeoutMs ?? 10_000;
  const webhook = onFirstUse(async () => (await import("./webhook-form.js")).webhookForm({ timeout, now }));
  const api = onFirstUse(async () => (await import("./api-form.js")).apiForm({ timeout, ...(opts.slackApiUrl ? { slackApiUrl: opts.slackApiUrl } : {}) }));

  /** One Slack call with the retry policy: 429 after Retry-After, 5xx and network errors with backoff. */
  const withSlackRetries = (form: SlackTarget["kind"], call: () => Promise<SlackPosted>, unsure?: RetryOptions<SlackPosted>["unsure"]): Promise<SlackPosted> =>
    withRetries(
      {
        ...loop,
        ...(opts.onRetry ? { onRetry: (info: { attempt: number; delayMs: number; status?: number }) => opts.onRetry!({ ...info, form }) } : {}),
        giveUp: (f, why) => new SlackDeliveryError(`${f.reason}${why}`, f.retryable, f.status, f.retryAfterMs),
        ...(unsure ? { unsure } : {}),
      },
      call,
    );

  const findPosted = async (target: SlackTarget & { kind: "api" }, q: PostedQuery) => (await api()).findPosted(target, q);

  /**
   * A post is not idempotent. After a failure that may have arrived (no answer in time, the connection
   * lost, a Web API 5xx), the Web API form looks for the message by the alert id it carries before
   * posting again (a look that fails posts again: a repeat is better than a miss). An incoming webhook
   * cannot be read: it is posted again once at most, then its delivery fails and is retried later.
   */
  const postedAlready = (target: SlackTarget, message: SlackMessage, sinceMs: number): RetryOptions<SlackPosted>["unsure"] => {
    if (target.kind === "webhook") return "once";
    const alertId = message.metadata?.event_payload.alert_id;
    if (!alertId) return undefined; // every message Lookout posts carries one
    return () => findPosted(target, { alertId, sinceMs, ...(message.thread_ts ? { threadTs: message.thread_ts } : {}) }).catch(() => undefined);
  };

  return {
    findPosted,
    post: (target: SlackTarget, message: SlackMessage) =>
      withSlackRetries(
        target.kind,
        async () => (target.kind === "webhook" ? (await webhook())(target.url, message) : (await api()).viaApi(target.token, target.channel, message)),
        postedAlready(target, message, now() - READ_BACK_SKEW_MS),
      ),
    update: (target: SlackTarget & { kind: "api" }, at: { channel: string; ts: string }, message: SlackMessage) =>
      withSlackRetries("api", async () => (await api()).viaUpdate(target.token, at, message)),
  };
}
