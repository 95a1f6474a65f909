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
 *    channel (else `thread_not_found`) and is recorded.
 * It checks Block Kit's main limits (50 blocks, header 150, section text 3000, 10 fields) and answers
 * `invalid_blocks` like Slack would, records every accepted message, and can be told to fail the next N
 * requests with a 429, a 5xx or a given error.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedSlackMessage {
  form: "webhook" | "api";
  /** Webhook path (`/services/…`), or the Web API channel. */
  path?: string;
  channel?: string;
  token?: string;
  ts?: string;
  thread_ts?: string;
  text?: string;
  blocks?: unknown[];
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
  fail(fault: SlackFault): void;
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

/** The Block Kit limits Slack enforces, as its `invalid_blocks` answer; undefined when the blocks pass. */
export function blockKitProblem(blocks: unknown): string | undefined {
  if (blocks === undefined) return undefined;
  if (!Array.isArray(blocks)) return "blocks is not an array";
  if (blocks.length > 50) return `${blocks.length} blocks (max 50)`;
  for (const [i, b] of blocks.entries()) {
    const block = b as { type?: string; text?: { type?: string; text?: string }; fields?: { text?: string }[]; elements?: unknown[] };
    if (block.type === "header") {
      if (block.text?.type !== "plain_text") return `block ${i}: header text must be plain_text`;
      if ((block.text.text ?? "").length > 150) return `block ${i}: header longer than 150`;
    }
    if (block.type === "section") {
      if (!block.text && !block.fields) return `block ${i}: section without text or fields`;
      if ((block.text?.text ?? "").length > 3000) return `block ${i}: section text longer than 3000`;
      if (block.fields && block.fields.length > 10) return `block ${i}: more than 10 fields`;
      if (block.fields?.some((f) => (f.text ?? "").length > 2000)) return `block ${i}: field longer than 2000`;
    }
    if (block.type === "context" && (block.elements?.length ?? 0) > 10) return `block ${i}: more than 10 context elements`;
  }
  return undefined;
}

export async function startSlackReceiver(): Promise<SlackReceiver> {
  const faults: SlackFault[] = [];
  const channelTs = new Map<string, Set<string>>();
  let seq = 0;
  const baseSec = 1_772_460_000;

  const receiver: SlackReceiver = {
    url: "",
    apiUrl: "",
    webhookUrl: (name = "TLOOKOUT/BLOOKOUT/secret0123456789") => `${receiver.url}/services/${name}`,
    messages: [],
    requests: [],
    fail(fault) {
      faults.push({ times: 1, ...fault });
    },
    reset() {
      receiver.messages.length = 0;
      receiver.requests.length = 0;
      faults.length = 0;
      channelTs.clear();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  const takeFault = (form: "webhook" | "api"): SlackFault | undefined => {
    const i = faults.findIndex((f) => !f.form || f.form === form);
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

  async function onWebhook(req: IncomingMessage, res: ServerResponse, path: string) {
    const raw = await readBody(req);
    const fault = takeFault("webhook");
    if (fault) {
      const status = fault.status ?? (fault.error ? (WEBHOOK_STATUS[fault.error] ?? 400) : 500);
      if (status === 429) return webhookText(res, 429, fault.error ?? "rate_limited", { "retry-after": String(fault.retryAfterSec ?? 1) });
      return webhookText(res, status, fault.error ?? (status >= 500 ? "rollup_error" : "invalid_payload"));
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return webhookText(res, 400, "invalid_payload");
    }
    if (typeof body.text !== "string" && !Array.isArray(body.blocks)) return webhookText(res, 400, "no_text");
    if (blockKitProblem(body.blocks)) return webhookText(res, 400, "invalid_blocks");
    const m: ReceivedSlackMessage = { form: "webhook", path, body };
    if (typeof body.text === "string") m.text = body.text;
    if (Array.isArray(body.blocks)) m.blocks = body.blocks;
    if (typeof body.thread_ts === "string") m.thread_ts = body.thread_ts; // recorded; Slack ignores it here
    receiver.messages.push(m);
    return webhookText(res, 200, "ok");
  }

  async function onPostMessage(req: IncomingMessage, res: ServerResponse) {
    const raw = await readBody(req);
    const fault = takeFault("api");
    if (fault) {
      const status = fault.status ?? 200;
      if (status === 429) {
        return apiJson(res, 429, { ok: false, error: "ratelimited" }, { "retry-after": String(fault.retryAfterSec ?? 1) });
      }
      if (status >= 500) return answer(res, "api", status, `<html><body>${status} Server Error</body></html>`, { "content-type": "text/html" });
      return apiJson(res, status, { ok: false, error: fault.error ?? "invalid_arguments" });
    }
    const type = req.headers["content-type"] ?? "";
    let body: Record<string, unknown>;
    if (type.startsWith("application/json")) {
      body = JSON.parse(raw) as Record<string, unknown>;
    } else {
      body = Object.fromEntries(new URLSearchParams(raw));
      if (typeof body.blocks === "string") body.blocks = JSON.parse(body.blocks) as unknown;
    }
    const auth = req.headers.authorization ?? "";
    const token = auth.startsWith("Bearer ") ? auth.slice(7) : typeof body.token === "string" ? body.token : "";
    if (!token) return apiJson(res, 200, { ok: false, error: "not_authed" });
    if (receiver.tokens && !receiver.tokens.has(token)) return apiJson(res, 200, { ok: false, error: "invalid_auth" });
    const channel = typeof body.channel === "string" ? body.channel : "";
    if (!channel || (receiver.channels && !receiver.channels.has(channel))) return apiJson(res, 200, { ok: false, error: "channel_not_found" });
    if (typeof body.text !== "string" && body.blocks === undefined) return apiJson(res, 200, { ok: false, error: "no_text" });
    if (blockKitProblem(body.blocks)) return apiJson(res, 200, { ok: false, error: "invalid_blocks", errors: [blockKitProblem(body.blocks)] });
    const threadTs = typeof body.thread_ts === "string" && body.thread_ts ? body.thread_ts : undefined;
    if (threadTs && !channelTs.get(channel)?.has(threadTs)) return apiJson(res, 200, { ok: false, error: "thread_not_found" });

    seq += 1;
    const ts = `${baseSec + seq}.${String(seq).padStart(6, "0")}`;
    if (!channelTs.has(channel)) channelTs.set(channel, new Set());
    channelTs.get(channel)!.add(ts);
    const m: ReceivedSlackMessage = { form: "api", channel, token, ts, body };
    if (typeof body.text === "string") m.text = body.text;
    if (Array.isArray(body.blocks)) m.blocks = body.blocks;
    if (threadTs) m.thread_ts = threadTs;
    receiver.messages.push(m);
    return apiJson(res, 200, {
      ok: true,
      channel,
      ts,
      message: { type: "message", subtype: "bot_message", text: body.text, ts, ...(threadTs ? { thread_ts: threadTs } : {}) },
    });
  }

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const handle = async () => {
      if (req.method === "POST" && path.startsWith("/services/")) return onWebhook(req, res, path);
      if (req.method === "POST" && path === "/api/chat.postMessage") return onPostMessage(req, res);
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
