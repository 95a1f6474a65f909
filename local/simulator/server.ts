/**
 * The HTTP front of the simulator (node:http). One pipeline for every request:
 * route → authenticate → count against the rate limit → injected fault → 401 / 429 → validate → handle.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { EndpointDef } from "../../lib/platform/endpoints.js";
import type { SpecEndpointName as EndpointName } from "./endpoints.js";
import type { Authenticator, Principal, TokenKind } from "./auth.js";
import { errorBody, HttpError, unauthorized } from "./error-responses.js";
import type { Faults, FaultSpec } from "./faults.js";
import { handlers, type Handler, type Request, type SimState } from "./handlers.js";
import { rateLimitHeaders, type RateLimiter, type RateLimitState } from "./rate-limit.js";
import { checkBody, checkPathParams, checkQuery, matchRoute } from "./validate.js";

export interface RequestLogEntry {
  method: string;
  /** Path without the query string. */
  path: string;
  /** The query string, with its leading `?`, or "". */
  query: string;
  /** The endpoint the request was routed to (null when no route matched). */
  endpoint: EndpointName | null;
  /** The status answered; 0 when the socket was dropped or the simulator closed first. */
  status: number;
  tokenKind: TokenKind | "none";
  /** Simulated time at which the request arrived. */
  at: string;
  /** The injected fault, when one applied. */
  fault?: FaultSpec;
}

export interface ServerDeps {
  sim: SimState;
  auth: Authenticator;
  faults: Faults;
  rateLimiter?: RateLimiter;
  requestLog: RequestLogEntry[];
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  /** Text sent as is; undefined: no body. */
  text?: string;
  contentType?: string;
}

/** A routed request on its way through the pipeline. */
interface Call {
  name: EndpointName;
  def: EndpointDef;
  rawParams: Record<string, string>;
  url: URL;
  raw: string;
  /** Rate-limit headers of the caller's token (empty when no limit is configured). */
  headers: Record<string, string>;
  principal: Principal | undefined;
  limit: RateLimitState | undefined;
}

const MAX_BODY = 1024 * 1024;

/** Extra fields a newer platform would add (scenario option `extraFields`). */
const EXTRA = { x_new_field: { since: "2026.01", note: "a field this client does not know yet" } };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function withExtraFields(body: unknown): unknown {
  if (!isRecord(body)) return body;
  const out: Record<string, unknown> = { ...body, ...EXTRA };
  if (Array.isArray(body.results)) out.results = body.results.map((r) => (isRecord(r) ? { ...r, ...EXTRA } : r));
  return out;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => ({
  status, headers, text: JSON.stringify(body), contentType: "application/json",
});

const errorAnswer = (err: HttpError, headers: Record<string, string> = {}): Answer =>
  json(err.status, errorBody(err.status, err.message), { ...headers, ...err.headers });

/** Broken 200 bodies for the `malformed` fault. */
function malformedAnswer(kind: NonNullable<FaultSpec["malformed"]>, normal: Answer, headers: Record<string, string>): Answer {
  if (kind === "html") {
    return { status: 200, headers, contentType: "text/html; charset=utf-8", text: "<!DOCTYPE html><html><head><title>Maintenance</title></head><body><h1>We'll be back soon</h1></body></html>" };
  }
  if (kind === "not-json") return { status: 200, headers, contentType: "application/json", text: "upstream connect error or disconnect/reset before headers" };
  const full = normal.text && normal.text.length > 2 ? normal.text : '{"results":[{"id":"00000000"}]}';
  return { status: 200, headers, contentType: "application/json", text: full.slice(0, Math.max(1, Math.floor(full.length / 2))) };
}

export class SimulatorServer {
  readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly delays = new Set<() => void>();
  private closed = false;

  constructor(private readonly deps: ServerDeps) {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
  }

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.server.once("error", onError);
      this.server.listen(port, host, () => {
        this.server.off("error", onError);
        const addr = this.server.address();
        resolve(typeof addr === "object" && addr ? addr.port : port);
      });
    });
  }

  /** Stops listening, cancels pending delays and destroys every open socket. */
  close(): Promise<void> {
    this.closed = true;
    for (const cancel of [...this.delays]) cancel();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      for (const s of this.sockets) s.destroy();
      this.server.closeAllConnections();
    });
  }

  /** Waits `ms` of wall time; false when the simulator closed first. */
  private delay(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.delays.delete(cancel);
        resolve(true);
      }, ms);
      const cancel = () => {
        clearTimeout(timer);
        this.delays.delete(cancel);
        resolve(false);
      };
      this.delays.add(cancel);
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { sim, requestLog } = this.deps;
    const url = new URL(req.url ?? "/", "http://simulator");
    const entry: RequestLogEntry = {
      method: req.method ?? "GET", path: url.pathname, query: url.search, endpoint: null, status: 0, tokenKind: "none", at: sim.clock.nowIso(),
    };
    requestLog.push(entry);
    let answer: Answer | undefined;
    try {
      answer = await this.answer(req, url, entry);
    } catch (err) {
      const e = err instanceof HttpError ? err : new HttpError(500, `simulator error: ${(err as Error).message}`);
      if (!(err instanceof HttpError)) console.error(err);
      answer = errorAnswer(e);
    }
    if (answer === undefined || this.closed) {
      req.socket.destroy();
      return;
    }
    entry.status = answer.status;
    const headers: Record<string, string | number> = { ...answer.headers };
    if (answer.text !== undefined) {
      headers["Content-Type"] = answer.contentType ?? "application/json";
      headers["Content-Length"] = Buffer.byteLength(answer.text);
    }
    res.writeHead(answer.status, headers);
    res.end(answer.text);
  }

  /** The answer to one request; undefined: drop the connection without answering. */
  private async answer(req: IncomingMessage, url: URL, entry: RequestLogEntry): Promise<Answer | undefined> {
    const { sim, auth, faults, rateLimiter } = this.deps;
    const raw = await readBody(req);
    const route = matchRoute(entry.method, url.pathname);
    if (route.kind === "not-found") return errorAnswer(new HttpError(404, `No endpoint ${entry.method} ${url.pathname}`));
    if (route.kind === "method-not-allowed") {
      return errorAnswer(new HttpError(405, `Method ${entry.method} is not allowed on ${url.pathname}`, { Allow: route.allow.join(", ") }));
    }
    entry.endpoint = route.name;

    const who = auth.authenticate(req.headers.authorization);
    entry.tokenKind = who.ok ? who.principal.kind : who.kind;
    const limit = who.ok && rateLimiter ? rateLimiter.hit(who.principal.token, sim.clock.nowMs()) : undefined;
    const headers = limit ? rateLimitHeaders(limit) : {};

    const call: Call = {
      name: route.name, def: route.def, rawParams: route.rawParams, url, raw, headers,
      principal: who.ok ? who.principal : undefined, limit,
    };
    const fault = faults.take(route.name);
    if (fault) {
      entry.fault = fault;
      if (fault.delayMs && !(await this.delay(fault.delayMs))) return undefined;
      if (fault.drop) return undefined;
      const faultHeaders = { ...headers, ...fault.headers, ...(fault.retryAfter !== undefined ? { "Retry-After": String(fault.retryAfter) } : {}) };
      if (fault.status !== undefined) {
        const body = fault.body !== undefined ? fault.body : errorBody(fault.status, fault.status === 429 ? "Too many requests" : "Injected failure");
        return json(fault.status, body, faultHeaders);
      }
      if (fault.body !== undefined) return json(route.def.successStatus === 204 ? 200 : route.def.successStatus, fault.body, faultHeaders);
      if (fault.rawBody !== undefined) return { status: 200, headers: faultHeaders, text: fault.rawBody, contentType: "application/json" };
      if (fault.malformed) {
        // Run the request for real (its effects happen), then break what is sent back.
        const normal = this.process(call);
        return malformedAnswer(fault.malformed, normal, faultHeaders);
      }
    }
    return this.process(call);
  }

  /** The normal answer: 401, 429, 400 from validation, or what the handler says. */
  private process({ name, def, rawParams, url, raw, headers, principal, limit }: Call): Answer {
    const { sim } = this.deps;
    try {
      if (!principal) throw unauthorized();
      if (limit?.exceeded) {
        throw new HttpError(429, `Rate limit exceeded: ${limit.limit} requests per hour`, { "Retry-After": String(limit.retryAfter) });
      }
      sim.scenario.sync();
      const request = {
        params: checkPathParams(def, rawParams),
        query: checkQuery(def, url.searchParams),
        body: checkBody(def, raw),
        principal,
        sim,
      };
      const body = (handlers[name] as Handler<EndpointName>)(request as Request<EndpointName>);
      if (def.successStatus === 204) return { status: 204, headers };
      return json(def.successStatus, sim.scenario.options.extraFields ? withExtraFields(body) : body, headers);
    } catch (err) {
      if (err instanceof HttpError) return errorAnswer(err, headers);
      throw err;
    }
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new HttpError(413, `body: larger than ${MAX_BODY} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
