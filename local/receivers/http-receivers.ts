/**
 * Local HTTP servers standing in for the HTTP receivers, each speaking its service's documented
 * contract and recording what a person would see there (docs/receivers.md):
 *  - PagerDuty's Events API v2: POST /v2/enqueue → 202 `{status:"success", message:"Event processed",
 *    dedup_key}`; 400 `{status:"invalid event", message:"Event object is invalid", errors:[…]}` for an
 *    event PagerDuty refuses (routing key not 32 characters or not known, event_action not trigger,
 *    acknowledge or resolve, a trigger without payload.summary/source/severity, a summary over 1024
 *    characters, a dedup_key over 255, a resolve without dedup_key); 429 `{status:"throttle event"}`;
 *    5xx. PagerDuty's alerts as it keeps them: a trigger opens an alert for its dedup_key or, while one is
 *    open, adds to its log; a resolve resolves the open one (or changes nothing).
 *  - a generic webhook's receiver: POST /hooks/<name>, verifying Lookout's signature as a user's
 *    receiver would (lib/notify/webhook/render.ts verifyWebhookSignature: 401 when it fails), answering
 *    200, and recording each delivery once by X-Lookout-Delivery (a repeat is counted, not shown again).
 *  - Teams' Workflows webhook: POST /workflows/<name> → 202 with an empty body; 400 for what is not a
 *    message with one Adaptive Card attachment (type, contentType, card type and a version 1.0-1.5, a
 *    body list), 413 past 28 KB, 429 with Retry-After; the cards' text as Teams shows it (markdown
 *    escapes undone).
 * Each can be told to fail the next N requests with a status (429 with Retry-After, 5xx, 4xx) or a
 * redirect (3xx with a Location), and lists every request with the status it answered.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyWebhookSignature } from "../../lib/notify/webhook/render.js";

export interface HttpFault {
  /** How many of the next requests fail (default 1). */
  times?: number;
  /** The answer's status (default 500); with `lateMs`, the receiver's own answer. */
  status?: number;
  /**
   * The request is taken as usual (handled, shown) and answered this many wall-clock ms late: the sender
   * stops waiting first, not knowing it arrived.
   */
  lateMs?: number;
  /** Seconds, for 429 (and 503). */
  retryAfterSec?: number;
  /** For a 3xx: where to. */
  location?: string;
  /** A body instead of the service's own. */
  body?: string;
}

export interface HttpTestServer {
  url: string;
  /** Every request, with the status answered. */
  requests: Array<{ path: string; status: number; at: number }>;
  fail(fault: HttpFault): void;
  clearFaults(): void;
  close(): Promise<void>;
}

type Answer = { status: number; body?: string; headers?: Record<string, string> };

/** The part every test receiver shares: faults, the request list, a JSON body. */
async function startServer(handle: (path: string, body: string, req: IncomingMessage) => Answer): Promise<HttpTestServer & { reset(): void }> {
  const faults: HttpFault[] = [];
  const server: Server = createServer((req, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0] ?? "/";
      const body = Buffer.concat(chunks).toString("utf8");
      let answer: Answer;
      const fault = faults[0];
      if (fault) {
        fault.times = (fault.times ?? 1) - 1;
        if (fault.times <= 0) faults.shift();
      }
      if (fault && fault.lateMs === undefined) {
        const status = fault.status ?? 500;
        answer = {
          status,
          body: fault.body ?? (status >= 300 && status < 400 ? "" : JSON.stringify({ status: status === 429 ? "throttle event" : "error", message: status === 429 ? "Requests are arriving too quickly. Please retry later." : "Server error" })),
          headers: {
            ...(fault.retryAfterSec !== undefined ? { "retry-after": String(fault.retryAfterSec) } : {}),
            ...(fault.location ? { location: fault.location } : {}),
          },
        };
      } else if (req.method !== "POST") {
        answer = { status: 405, body: "" };
      } else {
        try {
          answer = handle(path, body, req);
        } catch (err) {
          answer = { status: 500, body: String(err) };
        }
      }
      it.requests.push({ path, status: answer.status, at: Date.now() });
      const send = () => {
        res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
        res.end(answer.body ?? "");
      };
      if (fault?.lateMs !== undefined) setTimeout(send, fault.lateMs).unref();
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const it = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: [] as HttpTestServer["requests"],
    fail: (f: HttpFault) => void faults.push({ times: 1, ...f }),
    clearFaults: () => void (faults.length = 0),
    reset() {
      faults.length = 0;
      it.requests.length = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return it;
}

const json = (status: number, body: unknown): Answer => ({ status, body: JSON.stringify(body) });

// --- PagerDuty --------------------------------------------------------------------------------------

export interface PagerDutyAlert {
  dedupKey: string;
  routingKey: string;
  status: "triggered" | "resolved";
  /** The first trigger's: what the alert is titled by. */
  summary: string;
  severity: string;
  /** Every event PagerDuty took for it, in order (the alert's log). */
  log: Array<{ event_action: string; summary?: string; custom_details?: Record<string, unknown> }>;
}

export interface PagerDutyReceiver extends HttpTestServer {
  /** Routing keys it knows (default: any 32-character key). */
  routingKeys?: Set<string>;
  /** Alerts in the order they were opened; a key triggered again after its resolve opens a new one. */
  alerts: PagerDutyAlert[];
  /** Every accepted event, as sent. */
  events: Array<Record<string, unknown>>;
  reset(): void;
}

const SEVERITIES = new Set(["critical", "error", "warning", "info"]);

function pagerDutyProblems(e: Record<string, unknown>, known: Set<string> | undefined): string[] {
  const errors: string[] = [];
  const key = e.routing_key;
  if (typeof key !== "string" || key.length !== 32 || (known && !known.has(key))) errors.push("'routing_key' is invalid");
  const action = e.event_action;
  if (action !== "trigger" && action !== "acknowledge" && action !== "resolve") errors.push("'event_action' is invalid");
  if (e.dedup_key !== undefined && (typeof e.dedup_key !== "string" || e.dedup_key.length > 255)) errors.push("'dedup_key' must be a string of at most 255 characters");
  if (action !== "trigger" && typeof e.dedup_key !== "string") errors.push("'dedup_key' is required to acknowledge or resolve");
  if (action === "trigger") {
    const p = e.payload as Record<string, unknown> | undefined;
    if (!p || typeof p !== "object") errors.push("'payload' is missing");
    else {
      if (typeof p.summary !== "string" || !p.summary.trim()) errors.push("'payload.summary' is missing or blank");
      else if (p.summary.length > 1024) errors.push("'payload.summary' is longer than 1024 characters");
      if (typeof p.source !== "string" || !p.source.trim()) errors.push("'payload.source' is missing or blank");
      if (!SEVERITIES.has(p.severity as string)) errors.push("'payload.severity' must be one of critical, error, warning, info");
    }
    if (e.links !== undefined && !(Array.isArray(e.links) && e.links.every((l: { href?: unknown }) => typeof l?.href === "string"))) errors.push("'links' is invalid");
  }
  return errors;
}

export async function startPagerDutyReceiver(): Promise<PagerDutyReceiver> {
  let self: PagerDutyReceiver;
  const base = await startServer((path, raw) => {
    if (path !== "/v2/enqueue") return json(404, { status: "not found" });
    let e: Record<string, unknown>;
    try {
      e = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return json(400, { status: "invalid event", message: "Event object is invalid", errors: ["Malformed JSON"] });
    }
    const errors = pagerDutyProblems(e, self.routingKeys);
    if (errors.length) return json(400, { status: "invalid event", message: "Event object is invalid", errors });
    self.events.push(e);
    const p = e.payload as { summary: string; severity: string; custom_details?: Record<string, unknown> } | undefined;
    const dedupKey = typeof e.dedup_key === "string" ? e.dedup_key : `pd-${self.events.length}`;
    const open = self.alerts.find((a) => a.dedupKey === dedupKey && a.routingKey === e.routing_key && a.status === "triggered");
    const entry = { event_action: e.event_action as string, ...(p ? { summary: p.summary, ...(p.custom_details ? { custom_details: p.custom_details } : {}) } : {}) };
    if (e.event_action === "trigger") {
      if (open) open.log.push(entry);
      else self.alerts.push({ dedupKey, routingKey: e.routing_key as string, status: "triggered", summary: p!.summary, severity: p!.severity, log: [entry] });
    } else if (e.event_action === "resolve" && open) {
      open.status = "resolved";
      open.log.push(entry);
    }
    return { status: 202, body: JSON.stringify({ status: "success", message: "Event processed", dedup_key: dedupKey }) };
  });
  const baseReset = base.reset;
  self = Object.assign(base, {
    alerts: [] as PagerDutyAlert[],
    events: [] as Array<Record<string, unknown>>,
    reset() {
      baseReset();
      self.alerts.length = 0;
      self.events.length = 0;
    },
  });
  return self;
}

// --- Generic webhook --------------------------------------------------------------------------------

export interface WebhookDelivery {
  /** X-Lookout-Delivery: the alert's or digest's id. */
  id: string;
  path: string;
  body: Record<string, unknown>;
  /** How many times it came (a retry after an answer that was lost). */
  times: number;
}

export interface WebhookReceiver extends HttpTestServer {
  /** The signing secret it verifies with. */
  secret: string;
  hookUrl(name?: string): string;
  deliveries: WebhookDelivery[];
  /** Requests refused for their signature, with why. */
  refused: string[];
  reset(): void;
}

export async function startWebhookReceiver(opts: { secret: string; now?: () => number }): Promise<WebhookReceiver> {
  let self: WebhookReceiver;
  const header = (req: IncomingMessage, name: string) => {
    const v = req.headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  };
  const base = await startServer((path, raw, req) => {
    if (!path.startsWith("/hooks/")) return json(404, { error: "not found" });
    const signature = header(req, SIGNATURE_HEADER);
    const timestamp = header(req, TIMESTAMP_HEADER);
    const verdict = verifyWebhookSignature(self.secret, { ...(signature ? { signature } : {}), ...(timestamp ? { timestamp } : {}) }, raw, (opts.now ?? Date.now)());
    if (!verdict.ok) {
      self.refused.push(verdict.reason);
      return json(401, { error: verdict.reason });
    }
    const id = header(req, DELIVERY_HEADER) ?? "";
    const known = self.deliveries.find((d) => d.id === id && d.path === path);
    if (known) known.times += 1;
    else self.deliveries.push({ id, path, body: JSON.parse(raw) as Record<string, unknown>, times: 1 });
    return json(200, { ok: true });
  });
  const baseReset = base.reset;
  self = Object.assign(base, {
    secret: opts.secret,
    hookUrl: (name = "lookout") => `${base.url}/hooks/${name}`,
    deliveries: [] as WebhookDelivery[],
    refused: [] as string[],
    reset() {
      baseReset();
      self.deliveries.length = 0;
      self.refused.length = 0;
    },
  });
  return self;
}

// --- Teams Workflows --------------------------------------------------------------------------------

export interface TeamsPost {
  path: string;
  card: Record<string, unknown>;
  /** The card's text as Teams shows it, one line per block or fact. */
  text: string;
}

export interface TeamsReceiver extends HttpTestServer {
  workflowUrl(name?: string): string;
  posts: TeamsPost[];
  reset(): void;
}

const TEAMS_MAX_BYTES = 28 * 1024;

/** Adaptive Card markdown as a reader sees it: backslash escapes and zero-width spaces gone. */
const shown = (s: string) => s.replace(/\\([\\`*_~[\]()<>#|!.+-])/g, "$1").replace(/\u200B/g, "");

function cardText(el: unknown): string[] {
  if (!el || typeof el !== "object") return [];
  const e = el as Record<string, unknown>;
  if (e.type === "TextBlock" && typeof e.text === "string") return [shown(e.text)];
  if (e.type === "FactSet" && Array.isArray(e.facts)) return (e.facts as Array<{ title: string; value: string }>).map((f) => `${shown(f.title)}: ${shown(f.value)}`);
  if (e.type === "Action.OpenUrl") return [`[${String(e.title)}] ${String(e.url)}`];
  return [...(Array.isArray(e.items) ? e.items : []), ...(Array.isArray(e.body) ? e.body : []), ...(Array.isArray(e.actions) ? e.actions : [])].flatMap(cardText);
}

function teamsProblem(m: Record<string, unknown>): string | undefined {
  if (m.type !== "message") return "type must be message";
  const a = m.attachments;
  if (!Array.isArray(a) || a.length !== 1) return "attachments must hold one card";
  const att = a[0] as Record<string, unknown>;
  if (att.contentType !== "application/vnd.microsoft.card.adaptive") return "attachment contentType must be application/vnd.microsoft.card.adaptive";
  const c = att.content as Record<string, unknown> | undefined;
  if (!c || c.type !== "AdaptiveCard") return "content must be an AdaptiveCard";
  if (typeof c.version !== "string" || !/^1\.[0-5]$/.test(c.version)) return "card version must be 1.0 to 1.5";
  if (!Array.isArray(c.body) || !c.body.length) return "card body must be a non-empty list";
  return undefined;
}

export async function startTeamsReceiver(): Promise<TeamsReceiver> {
  let self: TeamsReceiver;
  const base = await startServer((path, raw) => {
    if (!path.startsWith("/workflows/")) return json(404, { error: { code: "TriggerNotFound", message: "The workflow trigger was not found" } });
    if (Buffer.byteLength(raw) > TEAMS_MAX_BYTES) return json(413, { error: { code: "MessageTooLarge", message: "The request is larger than 28 KB" } });
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return json(400, { error: { code: "InvalidRequestContent", message: "The request content is not valid JSON" } });
    }
    const problem = teamsProblem(m);
    if (problem) return json(400, { error: { code: "InvalidRequestContent", message: problem } });
    const card = ((m.attachments as Array<{ content: Record<string, unknown> }>)[0]!).content;
    self.posts.push({ path, card, text: cardText(card).join("\n") });
    return { status: 202, body: "" };
  });
  const baseReset = base.reset;
  self = Object.assign(base, {
    workflowUrl: (name = "lookout") => `${base.url}/workflows/${name}/triggers/manual/paths/invoke?api-version=1&sig=local-signature`,
    posts: [] as TeamsPost[],
    reset() {
      baseReset();
      self.posts.length = 0;
    },
  });
  return self;
}
