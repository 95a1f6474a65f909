/**
 * SlackSender adapters: the incoming-webhook form through `@slack/webhook`, the Web API form
 * (chat.postMessage, which returns the message ts for threads) through `@slack/web-api`.
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
 * request_timeout). Not retried: other 4xx (webhook 404 no_service / channel_not_found, 403
 * invalid_token / action_prohibited, 410 channel_is_archived, 400 invalid_payload) and the Web API's
 * other `ok:false` errors (invalid_auth, channel_not_found, not_in_channel, invalid_blocks, …).
 *
 * SECRETS. The webhook URL and the token never appear in an error message: messages are built here
 * from the status and Slack's short error code only, never from a library's message or the request.
 */
import { IncomingWebhook, IncomingWebhookHTTPError, IncomingWebhookRequestError } from "@slack/webhook";
import {
  type Logger,
  LogLevel,
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebAPIRequestError,
  WebClient,
} from "@slack/web-api";
import { parseRetryAfter } from "../../model/backoff.js";
import { AttemptFailed, defaultRetryPolicy, type Failure, networkCode as anyNetworkCode, type RetryPolicy, sleepReal, withRetries } from "../retry.js";
import { oneLine } from "../view/format.js";
import {
  type PostedQuery,
  type SlackMessage,
  type SlackPosted,
  type SlackSender,
  type SlackTarget,
  SLACK_ALERT_EVENT,
  SlackDeliveryError,
} from "../types.js";

/** Slack's usual answer for chat.postMessage's Retry-After is 1-30 s: the shared policy waits that long. */
export type SlackRetryPolicy = RetryPolicy;
export const defaultSlackRetryPolicy: SlackRetryPolicy = defaultRetryPolicy;

export interface SlackSenderOptions {
  retry?: Partial<SlackRetryPolicy>;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  now?: () => number;
  /** The Web API's base URL (default https://slack.com/api/); tests point it at a local receiver. */
  slackApiUrl?: string;
  /** Per request, ms (default 10 s). */
  timeoutMs?: number;
  /** Called before each wait, for metrics and tests. */
  onRetry?: (info: { attempt: number; delayMs: number; status?: number; form: SlackTarget["kind"] }) => void;
}

/** The Web API's `ok:false` errors that say "try again", sent with HTTP 200. */
const TRANSIENT_API_ERRORS = new Set(["internal_error", "service_unavailable", "request_timeout", "ratelimited"]);

/** A short, printable Slack error code from a response body (webhooks answer plain text like "no_service"). */
const codeOf = (body: unknown): string => {
  const s = typeof body === "string" ? body : "";
  const line = oneLine(s).slice(0, 60);
  return /^[\w.-]+$/.test(line) ? line : line ? "error" : "";
};

/** Network failures: the error code only; `slack_…` codes are the library's own. */
const networkCode = (err: unknown): string => anyNetworkCode(err, (code) => code.startsWith("slack_"));

const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  setLevel: () => undefined,
  getLevel: () => LogLevel.ERROR,
  setName: () => undefined,
};

/** One failed Web API call, classified: the method, the status and Slack's error code, nothing else. */
function apiFailure(method: string, err: unknown): Failure {
  if (err instanceof WebAPIRateLimitedError) {
    return { retryable: true, status: 429, retryAfterMs: Math.max(0, err.retryAfter * 1000), reason: `Slack ${method} answered HTTP 429 ratelimited` };
  }
  if (err instanceof WebAPIHTTPError) {
    const status = err.statusCode;
    return { retryable: status === 429 || status >= 500, status, reason: `Slack ${method} answered HTTP ${status}` };
  }
  if (err instanceof WebAPIPlatformError) {
    const code = codeOf(err.data.error) || "error";
    return { retryable: TRANSIENT_API_ERRORS.has(code), status: code === "ratelimited" ? 429 : 200, reason: `Slack ${method} failed: ${code}` };
  }
  const code = err instanceof WebAPIRequestError ? networkCode(err.original) : networkCode(err);
  return { retryable: true, reason: `Slack ${method} request failed (${code})` };
}

const CHANNEL_ID = /^[CGD][A-Z0-9]{6,}$/;
/** Enough for the minutes between a dead sender's post and its successor's look. */
const MAX_HISTORY_PAGES = 5;

/** A channel's id from its name (conversations.list, needs channels:read / groups:read). */
async function lookUpChannel(client: WebClient, name: string): Promise<string> {
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const res = await client.conversations.list({ types: "public_channel,private_channel", exclude_archived: true, limit: 1000, ...(cursor ? { cursor } : {}) });
    const hit = res.channels?.find((c) => c.name === name);
    if (hit?.id) return hit.id;
    cursor = res.response_metadata?.next_cursor || undefined;
    if (!cursor) break;
  }
  throw new SlackDeliveryError(`Slack conversations.list does not list #${name} (is the app in the channel?)`, false);
}

export function slackSender(opts: SlackSenderOptions = {}): SlackSender {
  const policy: SlackRetryPolicy = { ...defaultSlackRetryPolicy, ...opts.retry };
  const sleep = opts.sleep ?? sleepReal;
  const random = opts.random ?? Math.random;
  const now = opts.now ?? Date.now;
  const timeout = opts.timeoutMs ?? 10_000;
  const clients = new Map<string, WebClient>();

  const webClient = (token: string): WebClient => {
    let c = clients.get(token);
    if (!c) {
      const options: ConstructorParameters<typeof WebClient>[1] = {
        retryConfig: { retries: 0 },
        rejectRateLimitedCalls: true,
        logger: silentLogger,
        timeout,
      };
      if (opts.slackApiUrl) options.slackApiUrl = opts.slackApiUrl;
      c = new WebClient(token, options);
      clients.set(token, c);
    }
    return c;
  };

  async function viaWebhook(url: string, message: SlackMessage): Promise<SlackPosted> {
    let last: Response | undefined;
    const hook = new IncomingWebhook(url, {
      timeout,
      retryConfig: { retries: 0 },
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
          retryable: status === 429 || status >= 500,
          status,
          reason: `Slack incoming webhook answered HTTP ${status}${code ? ` ${code}` : ""}`,
        };
        const retryAfterMs = last ? parseRetryAfter(last.headers.get("retry-after"), now()) : undefined;
        if (status === 429 && retryAfterMs !== undefined) failure.retryAfterMs = retryAfterMs;
        throw new AttemptFailed(failure);
      }
      const code = err instanceof IncomingWebhookRequestError ? networkCode(err.original) : networkCode(err);
      throw new AttemptFailed({ retryable: true, reason: `Slack incoming webhook request failed (${code})` });
    }
  }

  async function viaApi(token: string, channel: string, message: SlackMessage): Promise<SlackPosted> {
    try {
      const args: Record<string, unknown> = {
        channel,
        text: message.text,
        blocks: message.blocks,
        unfurl_links: message.unfurl_links ?? false,
        unfurl_media: message.unfurl_media ?? false,
      };
      if (message.thread_ts) args.thread_ts = message.thread_ts;
      if (message.thread_ts && message.reply_broadcast) args.reply_broadcast = true;
      if (message.attachments) args.attachments = message.attachments;
      if (message.metadata) args.metadata = message.metadata;
      const res = await webClient(token).chat.postMessage(args as never);
      const posted: SlackPosted = {};
      if (typeof res.ts === "string") posted.ts = res.ts;
      if (typeof res.channel === "string") posted.channel = res.channel;
      return posted;
    } catch (err) {
      throw new AttemptFailed(apiFailure("chat.postMessage", err));
    }
  }

  /** A channel id for the read methods, which (unlike chat.postMessage) do not take `#name`. */
  const channelIds = new Map<string, Promise<string>>();
  const channelIdOf = (token: string, channel: string): Promise<string> => {
    if (CHANNEL_ID.test(channel)) return Promise.resolve(channel);
    const key = `${token}\u0000${channel}`;
    let id = channelIds.get(key);
    if (!id) {
      id = lookUpChannel(webClient(token), channel.replace(/^#/, ""));
      id.catch(() => channelIds.delete(key));
      channelIds.set(key, id);
    }
    return id;
  };

  async function findPosted(target: SlackTarget & { kind: "api" }, q: PostedQuery): Promise<SlackPosted | undefined> {
    const client = webClient(target.token);
    let method = "conversations.list";
    try {
      const channel = await channelIdOf(target.token, target.channel);
      method = q.threadTs ? "conversations.replies" : "conversations.history";
      // Replies are not in the channel's history: a follow-up is looked for in its thread.
      let cursor: string | undefined;
      for (let page = 0; page < MAX_HISTORY_PAGES; page++) {
        const args = { channel, oldest: (q.sinceMs / 1000).toFixed(6), include_all_metadata: true, limit: 200, ...(cursor ? { cursor } : {}) };
        const res = q.threadTs ? await client.conversations.replies({ ...args, ts: q.threadTs }) : await client.conversations.history(args);
        const hit = res.messages?.find((m) => m.metadata?.event_type === SLACK_ALERT_EVENT && (m.metadata.event_payload as Record<string, unknown> | undefined)?.alert_id === q.alertId);
        if (hit?.ts) return { ts: hit.ts, channel };
        cursor = res.response_metadata?.next_cursor || undefined;
        if (!cursor) return undefined;
      }
      return undefined;
    } catch (err) {
      if (err instanceof SlackDeliveryError) throw err;
      const f = apiFailure(method, err);
      throw new SlackDeliveryError(f.reason, f.retryable, f.status, f.retryAfterMs);
    }
  }

  async function viaUpdate(token: string, at: { channel: string; ts: string }, message: SlackMessage): Promise<SlackPosted> {
    try {
      const args: Record<string, unknown> = { channel: at.channel, ts: at.ts, text: message.text, blocks: message.blocks };
      if (message.attachments) args.attachments = message.attachments;
      if (message.metadata) args.metadata = message.metadata;
      const res = await webClient(token).chat.update(args as never);
      return { ts: typeof res.ts === "string" ? res.ts : at.ts, channel: typeof res.channel === "string" ? res.channel : at.channel };
    } catch (err) {
      throw new AttemptFailed(apiFailure("chat.update", err));
    }
  }

  /** One Slack call with the retry policy: 429 after Retry-After, 5xx and network errors with backoff. */
  const withSlackRetries = (form: SlackTarget["kind"], call: () => Promise<SlackPosted>): Promise<SlackPosted> =>
    withRetries(
      {
        policy, sleep, random,
        ...(opts.onRetry ? { onRetry: (info: { attempt: number; delayMs: number; status?: number }) => opts.onRetry!({ ...info, form }) } : {}),
        giveUp: (f, why) => new SlackDeliveryError(`${f.reason}${why}`, f.retryable, f.status, f.retryAfterMs),
      },
      call,
    );

  return {
    findPosted,
    post: (target: SlackTarget, message: SlackMessage) =>
      withSlackRetries(target.kind, () => (target.kind === "webhook" ? viaWebhook(target.url, message) : viaApi(target.token, target.channel, message))),
    update: (target: SlackTarget & { kind: "api" }, at: { channel: string; ts: string }, message: SlackMessage) =>
      withSlackRetries("api", () => viaUpdate(target.token, at, message)),
  };
}
