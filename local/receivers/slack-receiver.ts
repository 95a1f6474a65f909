/**
 * A local HTTP server standing in for Slack, with both forms Lookout posts to:
 *  - incoming webhooks: POST /services/<T>/<B>/<secret> with a JSON body → 200 "ok" (text/html);
 *    errors are plain-text codes with their HTTP status, as Slack answers them: 400 invalid_payload /
 *    no_text, 403 invalid_token / action_prohibited, 404 no_service / channel_not_found,
 *    410 channel_is_archived, 429 (with Retry-After, seconds), 500 rollup_error.
 *  - the Web API's chat.postMessage: POST /api/chat.postMessage (form-encoded as @slack/web-api sends
 *    it, or JSON) with `Authorization: Bearer <token>` → 200 `{ ok: true, channel, ts, message }`;
 *    errors are HTTP 200 with `{ ok: false, error }` (invalid_auth, not_authed, channel_not_found,
 *    invalid_blocks, no_text, …), except rate limiting: HTTP 429, `Retry-After` and
 *    `{ ok: false, error: "ratelimited" }`. `thread_ts` is honoured: it must name a message of that
 *    channel (else `thread_not_found`) and is recorded. As Slack does, it answers with the channel's
 *    id (`#oncall` → a `C…` id) and keeps the message `metadata` (sent form-encoded as a JSON string).
 *  - the read methods a sender uses to find what an earlier attempt posted: conversations.list (names
 *    → ids), conversations.history (top-level messages only, newest first, `oldest` exclusive) and
 *    conversations.replies (the parent, then its replies); both take channel ids only (a name is
 *    `channel_not_found`), page with `limit` and `response_metadata.next_cursor`, and include a
 *    message's `metadata` only with `include_all_metadata=true`.
 *  - chat.update: POST /api/chat.update with `channel` (an id) and `ts` → `{ ok: true, channel, ts }`;
 *    the message keeps its ts and is replaced in place (`edits` counts them); an unknown ts answers
 *    `message_not_found`, a channel name `channel_not_found`. `reply_broadcast` on a thread reply is
 *    recorded, and the reply then shows in conversations.history too, as Slack does.
 * It checks Block Kit's limits on blocks and attachments (local/receivers/block-kit.ts) and answers
 * `invalid_blocks` like Slack would, records every accepted message, and can be told to fail the next N
 * requests with a 429, a 5xx or a given error.
 */
import { slackSignature } from "../../lib/actions/slack-request.js";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { blockKitProblem, slackMessageProblem } from "./block-kit.js";

export interface ReceivedSlackMessage {
  form: "webhook" | "api";
  /** Webhook path (`/services/…`), or the Web API channel. */
  path?: string;
  channel?: string;
  token?: string;
  /** The channel's id (Web API form), as Slack answers it. */
  channelId?: string;
  ts?: string;
  thread_ts?: string;
  text?: string;
  blocks?: unknown[];
  metadata?: { event_type?: string; event_payload?: Record<string, unknown> };
  attachments?: Array<{ color?: string; blocks?: unknown[]; fallback?: string }>;
  /** A thread reply also shown in the channel. */
  reply_broadcast?: boolean;
  /** How many times chat.update replaced it. */
  edits?: number;
  /** Its text as posted: what Slack's notification showed (an edit notifies nobody, and may drop a mention). */
  notified?: string;
  body: Record<string, unknown>;
}

export interface SlackFault {
  /** How many of the next matching requests fail (default 1). */
  times?: number;
  /** Which form it applies to (default both). */
  form?: "webhook" | "api";
  /** 429 (rate limited), 5xx, or a 4xx for webhooks. */
  status?: number;
  /** Seconds, for 429 (default 1). */
  retryAfterSec?: number;
  /** Slack's error code: the webhook's plain-text body, the Web API's `error`. */
  error?: string;
  /** A read method (`conversations.history`, …) to fail instead of the posts. */
  method?: string;
  /**
   * The message is posted (shown in the channel) before the fault is answered: Slack took it but said
   * otherwise — a 5xx, or with `delayMs` its success after the sender stopped waiting.
   */
  afterPosting?: boolean;
  /** With `afterPosting`: the success is answered this many wall-clock ms late. */
  delayMs?: number;
}

/** HTTP status of a webhook error code (Slack's incoming-webhook error table). */
const WEBHOOK_STATUS: Record<string, number> = {
  invalid_payload: 400,
  no_text: 400,
  user_not_found: 400,
  invalid_token: 403,
  action_prohibited: 403,
  no_service: 404,
  no_service_id: 400,
  no_team: 400,
  team_disabled: 403,
  channel_not_found: 404,
  channel_is_archived: 410,
  posting_to_general_channel_denied: 403,
  rate_limited: 429,
  rollup_error: 500,
};

export interface SlackReceiver {
  url: string;
  /** The Web API base for @slack/web-api's `slackApiUrl`. */
  apiUrl: string;
  /** A webhook URL on this receiver. */
  webhookUrl(name?: string): string;
  messages: ReceivedSlackMessage[];
  /** Every request, accepted or not, with the status answered. */
  requests: { form: "webhook" | "api" | "other"; status: number; at: number }[];
  /** Tokens chat.postMessage accepts (default: any non-empty token). */
  tokens?: Set<string>;
  /** Channels that exist (default: any). */
  channels?: Set<string>;
  /** Requests to the read methods (conversations.*), by method. */
  reads: string[];
  /** Every accepted chat.update, in order: which message, and what it became. */
  updates: Array<{ channelId: string; ts: string; text?: string; attachments?: ReceivedSlackMessage["attachments"] }>;
  fail(fault: SlackFault): void;
  /** Forgets the faults not yet answered. */
  clearFaults(): void;
  reset(): void;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Block Kit's limits (local/receivers/block-kit.ts); re-exported for the tests that check blocks alone. */
export { blockKitProblem, slackMessageProblem };

const CHANNEL_ID = /^[CGD][A-Z0-9]{6,}$/;

/**
 * `now`: the receiver's clock for message ts (default: the real one); tests on a simulated clock pass
 * theirs, so that `oldest` compares with the times the pipeline believes it is.
 */
export async function startSlackReceiver(opts: { now?: () => number; onMessage?: (m: ReceivedSlackMessage, how: "posted" | "updated") => void } = {}): Promise<SlackReceiver> {
  const faults: SlackFault[] = [];
  const channelTs = new Map<string, Set<string>>();
  /** Channel name (no `#`) → id. */
  const channelIds = new Map<string, string>();
  let seq = 0;
  const now = opts.now ?? Date.now;
  /** Tells the watcher (a terminal view); a watcher that throws never changes what Slack answers. */
  const shown = (m: ReceivedSlackMessage, how: "posted" | "updated") => {
    try {
      opts.onMessage?.(m, how);
    } catch {
      // the view's problem, not the sender's: the message was accepted
    }
  };
  const idOf = (channel: string): string => {
    if (CHANNEL_ID.test(channel)) return channel;
    const name = channel.replace(/^#/, "");
    let id = channelIds.get(name);
    if (!id) channelIds.set(name, (id = `C${String(channelIds.size + 1).padStart(8, "0")}`));
    return id;
  };

  const receiver: SlackReceiver = {
    url: "",
    apiUrl: "",
    webhookUrl: (name = "TLOOKOUT/BLOOKOUT/secret0123456789") => `${receiver.url}/services/${name}`,
    messages: [],
    requests: [],
    reads: [],
    updates: [],
    fail(fault) {
      faults.push({ times: 1, ...fault });
    },
    clearFaults() {
      faults.length = 0;
    },
    reset() {
      receiver.messages.length = 0;
      receiver.requests.length = 0;
      receiver.reads.length = 0;
      receiver.updates.length = 0;
      faults.length = 0;
      channelTs.clear();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  const takeFault = (form: "webhook" | "api", method?: string): SlackFault | undefined => {
    const i = faults.findIndex((f) => (!f.form || f.form === form) && f.method === method);
    if (i === -1) return undefined;
    const f = faults[i]!;
    f.times = (f.times ?? 1) - 1;
    if (f.times <= 0) faults.splice(i, 1);
    return f;
  };

  const answer = (res: ServerResponse, form: "webhook" | "api" | "other", status: number, body: string, headers: Record<string, string> = {}) => {
    receiver.requests.push({ form, status, at: Date.now() });
    res.writeHead(status, headers);
    res.end(body);
  };
  const webhookText = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) =>
    answer(res, "webhook", status, body, { "content-type": "text/html", ...headers });
  const apiJson = (res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}) =>
    answer(res, "api", status, JSON.stringify(body), { "content-type": "application/json; charset=utf-8", ...headers });

  const webhookFault = (res: ServerResponse, fault: SlackFault) => {
    const status = fault.status ?? (fault.error ? (WEBHOOK_STATUS[fault.error] ?? 400) : 500);
    if (status === 429) return webhookText(res, 429, fault.error ?? "rate_limited", { "retry-after": String(fault.retryAfterSec ?? 1) });
    return webhookText(res, status, fault.error ?? (status >= 500 ? "rollup_error" : "invalid_payload"));
  };
  /** A Web API method's fault: 429, a 5xx page, or `ok:false` with the fault's error (else `otherwise`). */
  const apiFault = (res: ServerResponse, fault: SlackFault, otherwise = "invalid_arguments") => {
    const status = fault.status ?? 200;
    if (status === 429) return apiJson(res, 429, { ok: false, error: "ratelimited" }, { "retry-after": String(fault.retryAfterSec ?? 1) });
    if (status >= 500) return answer(res, "api", status, `<html><body>${status} Server Error</body></html>`, { "content-type": "text/html" });
    return apiJson(res, status, { ok: false, error: fault.error ?? otherwise });
  };
  /** A post already shown, answered as the fault says: its success too late, or a failure. */
  const afterPosting = (fault: SlackFault | undefined, ok: () => void, failed: () => void): void => {
    if (!fault) return ok();
    if (fault.delayMs === undefined) return failed();
    setTimeout(ok, fault.delayMs).unref();
  };

  async function onWebhook(req: IncomingMessage, res: ServerResponse, path: string) {
    const raw = await readBody(req);
    const fault = takeFault("webhook");
    if (fault && !fault.afterPosting) return webhookFault(res, fault);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return webhookText(res, 400, "invalid_payload");
    }
    if (typeof body.text !== "string" && !Array.isArray(body.blocks)) return webhookText(res, 400, "no_text");
    if (slackMessageProblem(body)) return webhookText(res, 400, "invalid_blocks");
    const m: ReceivedSlackMessage = { form: "webhook", path, body };
    if (typeof body.text === "string") m.text = m.notified = body.text;
    if (Array.isArray(body.blocks)) m.blocks = body.blocks;
    if (Array.isArray(body.attachments)) m.attachments = body.attachments as ReceivedSlackMessage["attachments"];
    if (typeof body.thread_ts === "string") m.thread_ts = body.thread_ts; // recorded; Slack ignores it here
    receiver.messages.push(m);
    shown(m, "posted");
    return afterPosting(fault, () => webhookText(res, 200, "ok"), () => webhookFault(res, fault!));
  }

  async function onPostMessage(req: IncomingMessage, res: ServerResponse) {
    const raw = await readBody(req);
    const fault = takeFault("api");
    if (fault && !fault.afterPosting) return apiFault(res, fault);
    const call = apiCall(req, raw);
    if ("error" in call) return apiJson(res, 200, { ok: false, error: call.error });
    const { body, token } = call;
    const channel = typeof body.channel === "string" ? body.channel : "";
    if (!channel || (receiver.channels && !receiver.channels.has(channel))) return apiJson(res, 200, { ok: false, error: "channel_not_found" });
    if (typeof body.text !== "string" && body.blocks === undefined) return apiJson(res, 200, { ok: false, error: "no_text" });
    const problem = slackMessageProblem({ text: body.text ?? " ", blocks: body.blocks, attachments: body.attachments });
    if (problem) return apiJson(res, 200, { ok: false, error: "invalid_blocks", errors: [problem] });
    const channelId = idOf(channel);
    const threadTs = typeof body.thread_ts === "string" && body.thread_ts ? body.thread_ts : undefined;
    if (threadTs && !channelTs.get(channelId)?.has(threadTs)) return apiJson(res, 200, { ok: false, error: "thread_not_found" });

    seq += 1;
    const ts = `${Math.floor(now() / 1000)}.${String(seq).padStart(6, "0")}`;
    if (!channelTs.has(channelId)) channelTs.set(channelId, new Set());
    channelTs.get(channelId)!.add(ts);
    const m: ReceivedSlackMessage = { form: "api", channel, channelId, token, ts, body };
    if (typeof body.text === "string") m.text = m.notified = body.text;
    if (Array.isArray(body.blocks)) m.blocks = body.blocks;
    if (threadTs) m.thread_ts = threadTs;
    if (threadTs && (body.reply_broadcast === true || body.reply_broadcast === "true")) m.reply_broadcast = true;
    if (Array.isArray(body.attachments)) m.attachments = body.attachments as ReceivedSlackMessage["attachments"];
    if (body.metadata && typeof body.metadata === "object") m.metadata = body.metadata as ReceivedSlackMessage["metadata"];
    receiver.messages.push(m);
    shown(m, "posted");
    const ok = () =>
      apiJson(res, 200, {
        ok: true,
        channel: channelId,
        ts,
        message: { type: "message", subtype: "bot_message", text: body.text, ts, ...(threadTs ? { thread_ts: threadTs } : {}) },
      });
    return afterPosting(fault, ok, () => apiFault(res, fault!));
  }

  /** chat.update: the message keeps its ts and channel; its text, blocks, attachments and metadata are replaced. */
  async function onUpdate(req: IncomingMessage, res: ServerResponse) {
    const raw = await readBody(req);
    const fault = takeFault("api", "chat.update");
    if (fault) return apiFault(res, fault, "internal_error");
    const call = apiCall(req, raw);
    if ("error" in call) return apiJson(res, 200, { ok: false, error: call.error });
    const { body } = call;
    const channel = typeof body.channel === "string" ? body.channel : "";
    if (!CHANNEL_ID.test(channel) || !channelTs.has(channel)) return apiJson(res, 200, { ok: false, error: "channel_not_found" });
    const m = receiver.messages.find((x) => x.form === "api" && x.channelId === channel && x.ts === body.ts);
    if (!m) return apiJson(res, 200, { ok: false, error: "message_not_found" });
    if (typeof body.text !== "string" && body.blocks === undefined) return apiJson(res, 200, { ok: false, error: "no_text" });
    const problem = slackMessageProblem({ text: body.text ?? " ", blocks: body.blocks, attachments: body.attachments });
    if (problem) return apiJson(res, 200, { ok: false, error: "invalid_blocks", errors: [problem] });
    if (typeof body.text === "string") m.text = body.text;
    if (Array.isArray(body.blocks)) m.blocks = body.blocks;
    if (Array.isArray(body.attachments)) m.attachments = body.attachments as ReceivedSlackMessage["attachments"];
    if (body.metadata && typeof body.metadata === "object") m.metadata = body.metadata as ReceivedSlackMessage["metadata"];
    m.body = { ...m.body, ...body };
    m.edits = (m.edits ?? 0) + 1;
    receiver.updates.push({ channelId: channel, ts: m.ts!, ...(m.text !== undefined ? { text: m.text } : {}), ...(m.attachments ? { attachments: m.attachments } : {}) });
    shown(m, "updated");
    return apiJson(res, 200, { ok: true, channel, ts: m.ts, text: m.text });
  }

  /** A Web API call's arguments (form-encoded as @slack/web-api sends them, objects as JSON, or JSON) and token. */
  function apiCall(req: IncomingMessage, raw: string): { body: Record<string, unknown>; token: string } | { error: string } {
    let body: Record<string, unknown>;
    if ((req.headers["content-type"] ?? "").startsWith("application/json")) {
      body = JSON.parse(raw) as Record<string, unknown>;
    } else {
      body = Object.fromEntries(new URLSearchParams(raw));
      for (const key of ["blocks", "metadata", "attachments"]) if (typeof body[key] === "string") body[key] = JSON.parse(body[key] as string) as unknown;
    }
    const auth = req.headers.authorization ?? "";
    const token = auth.startsWith("Bearer ") ? auth.slice(7) : typeof body.token === "string" ? body.token : "";
    if (!token) return { error: "not_authed" };
    if (receiver.tokens && !receiver.tokens.has(token)) return { error: "invalid_auth" };
    return { body, token };
  }

  /** One page of `items` from `cursor` (an offset), as Slack pages its lists. */
  const page = <T>(items: T[], body: Record<string, unknown>) => {
    const from = Number(body.cursor ?? 0) || 0;
    const limit = Math.min(Number(body.limit ?? 100) || 100, 999);
    const next = from + limit < items.length ? String(from + limit) : "";
    return { items: items.slice(from, from + limit), response_metadata: { next_cursor: next }, has_more: Boolean(next) };
  };

  /** conversations.list / history / replies: what a sender reads to find an earlier attempt's message. */
  async function onRead(req: IncomingMessage, res: ServerResponse, method: string) {
    const call = apiCall(req, await readBody(req));
    if ("error" in call) return apiJson(res, 200, { ok: false, error: call.error });
    receiver.reads.push(method);
    const fault = takeFault("api", method);
    if (fault?.status === 429) return apiJson(res, 429, { ok: false, error: "ratelimited" }, { "retry-after": String(fault.retryAfterSec ?? 1) });
    if (fault) return apiJson(res, 200, { ok: false, error: fault.error ?? "internal_error" });
    const { body } = call;
    if (method === "conversations.list") {
      const names = new Set([...(receiver.channels ?? []), ...channelIds.keys()].map((c) => c.replace(/^#/, "")));
      const all = [...names].filter((n) => !CHANNEL_ID.test(n)).map((name) => ({ id: idOf(name), name, is_channel: true }));
      const { items, ...rest } = page(all, body);
      return apiJson(res, 200, { ok: true, channels: items, ...rest });
    }
    const channel = typeof body.channel === "string" ? body.channel : "";
    if (!CHANNEL_ID.test(channel) || !channelTs.has(channel)) return apiJson(res, 200, { ok: false, error: "channel_not_found" });
    const oldest = Number(body.oldest ?? 0);
    const withMetadata = String(body.include_all_metadata) === "true";
    const view = (m: ReceivedSlackMessage) => ({
      type: "message", ts: m.ts, text: m.text, ...(m.thread_ts ? { thread_ts: m.thread_ts } : {}), ...(withMetadata && m.metadata ? { metadata: m.metadata } : {}),
    });
    const inChannel = receiver.messages.filter((m) => m.form === "api" && m.channelId === channel);
    let chosen: ReceivedSlackMessage[];
    if (method === "conversations.history") {
      chosen = inChannel.filter((m) => (!m.thread_ts || m.reply_broadcast) && Number(m.ts) > oldest).reverse();
    } else {
      const parent = inChannel.find((m) => m.ts === body.ts && !m.thread_ts);
      if (!parent) return apiJson(res, 200, { ok: false, error: "thread_not_found" });
      chosen = [parent, ...inChannel.filter((m) => m.thread_ts === body.ts && Number(m.ts) > oldest)];
    }
    const { items, ...rest } = page(chosen, body);
    return apiJson(res, 200, { ok: true, messages: items.map(view), ...rest });
  }

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const handle = async () => {
      if (req.method === "POST" && path.startsWith("/services/")) return onWebhook(req, res, path);
      if (req.method === "POST" && path === "/api/chat.postMessage") return onPostMessage(req, res);
      if (req.method === "POST" && path === "/api/chat.update") return onUpdate(req, res);
      const method = path.slice("/api/".length);
      if (req.method === "POST" && ["conversations.list", "conversations.history", "conversations.replies"].includes(method)) return onRead(req, res, method);
      if (path.startsWith("/api/")) return apiJson(res, 200, { ok: false, error: "unknown_method" });
      return answer(res, "other", 404, "Not Found");
    };
    handle().catch((err: unknown) => {
      if (!res.headersSent) answer(res, "other", 500, String(err));
    });
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  receiver.url = `http://127.0.0.1:${port}`;
  receiver.apiUrl = `${receiver.url}/api/`;
  return receiver;
}

/**
 * A click on a button of a message the local Slack shows, as Slack would send it to the app's
 * interactivity endpoint: a form-encoded `block_actions` payload, signed with the app's signing
 * secret (lib/actions/slack-request.ts). Throws when the message has no such button.
 */
export function slackClick(
  m: ReceivedSlackMessage,
  actionId: string,
  user: { id: string; name: string },
  signingSecret: string,
  nowMs: number = Date.now(),
): { headers: Record<string, string>; body: string } {
  const blocks = [...(m.blocks ?? []), ...(m.attachments ?? []).flatMap((a) => a.blocks ?? [])] as Array<{ type?: string; block_id?: string; elements?: Array<{ action_id?: string; value?: string }> }>;
  const button = blocks.filter((b) => b.type === "actions").flatMap((b) => (b.elements ?? []).map((e) => ({ block: b.block_id, ...e }))).find((e) => e.action_id === actionId);
  if (!button) throw new Error(`message ${m.ts}: no button ${actionId}`);
  const payload = {
    type: "block_actions",
    user: { id: user.id, username: user.name, name: user.name, team_id: "T0LOCAL" },
    team: { id: "T0LOCAL", domain: "local" },
    container: { type: "message", message_ts: m.ts, channel_id: m.channelId, is_ephemeral: false },
    channel: { id: m.channelId, name: (m.channel ?? "").replace(/^#/, "") },
    message: { ts: m.ts, text: m.text },
    trigger_id: `${Math.floor(nowMs / 1000)}.local`,
    actions: [{ action_id: actionId, block_id: button.block, type: "button", value: button.value, action_ts: `${(nowMs / 1000).toFixed(6)}` }],
  };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const timestamp = String(Math.floor(nowMs / 1000));
  return { headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": timestamp, "x-slack-signature": slackSignature(signingSecret, timestamp, body) }, body };
}
