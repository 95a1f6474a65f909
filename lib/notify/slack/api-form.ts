/**
 * The Web API form, through `@slack/web-api`: chat.postMessage (which returns the message ts for
 * threads), chat.update, and the history reads that find a message a dead sender posted. One attempt a
 * call (the retries are sender.ts's). Loaded on the first message to a channel (./sender.ts), so a function
 * that posts to incoming webhooks only never loads it.
 */
import {
  type Logger,
  LogLevel,
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebAPIRequestError,
  WebClient,
} from "@slack/web-api";
import { AttemptFailed, type Failure, mayHaveArrivedAfter } from "../receiver-retry.js";
import { type PostedQuery, type SlackMessage, type SlackPosted, type SlackTarget, SLACK_ALERT_EVENT, SlackDeliveryError } from "../types.js";
import { codeOf, networkCode } from "./codes.js";

/** The Web API's `ok:false` errors that say "try again", sent with HTTP 200. */
const TRANSIENT_API_ERRORS = new Set(["internal_error", "service_unavailable", "request_timeout", "ratelimited"]);

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
    return { retryable: status === 429 || status >= 500, ...(status >= 500 ? { mayHaveArrived: true } : {}), status, reason: `Slack ${method} answered HTTP ${status}` };
  }
  if (err instanceof WebAPIPlatformError) {
    const code = codeOf(err.data.error) || "error";
    // Slack says `internal_error` and `request_timeout` may come after part of the call succeeded.
    const unsure = code === "internal_error" || code === "request_timeout";
    return { retryable: TRANSIENT_API_ERRORS.has(code), ...(unsure ? { mayHaveArrived: true } : {}), status: code === "ratelimited" ? 429 : 200, reason: `Slack ${method} failed: ${code}` };
  }
  const code = err instanceof WebAPIRequestError ? networkCode(err.original) : networkCode(err);
  return { retryable: true, mayHaveArrived: mayHaveArrivedAfter(code), reason: `Slack ${method} request failed (${code})` };
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

export function apiForm(opts: { timeout: number; slackApiUrl?: string }) {
  const clients = new Map<string, WebClient>();

  const webClient = (token: string): WebClient => {
    let c = clients.get(token);
    if (!c) {
      const options: ConstructorParameters<typeof WebClient>[1] = {
        retryConfig: { retries: 0 },
        rejectRateLimitedCalls: true,
        logger: silentLogger,
        timeout: opts.timeout,
      };
      if (opts.slackApiUrl) options.slackApiUrl = opts.slackApiUrl;
      c = new WebClient(token, options);
      clients.set(token, c);
    }
    return c;
  };

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

  return { viaApi, viaUpdate, findPosted };
}
