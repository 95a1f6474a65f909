/**
 * The platform API client: every endpoint of a table (by default Lookout's, lib/platform/endpoints.ts) as
 * a typed method, with both auth schemes, typed errors, retries with jittered backoff, and the cost of
 * each call.
 */
import * as z from "zod/mini";
import {
  type EndpointDef,
  type EndpointInput,
  type EndpointOutput,
  type EndpointTable,
  type Endpoints,
  type ListEndpointName,
  type ListItemOf,
  checkParam,
  endpoints,
  fillPath,
  pathParamFormat,
  pathParamNames,
} from "./endpoints.js";
import { type CallCost, type RateLimitHeaders, emptyCost, readRateLimitHeaders } from "./cost.js";
import { mayHoldAnswer } from "./answer-memory.js";
import {
  PlatformAnswerDeferredError,
  PlatformBadRequestError,
  type PlatformError,
  type PlatformErrorContext,
  PlatformForbiddenError,
  PlatformNetworkError,
  PlatformNotFoundError,
  PlatformRateLimitedError,
  PlatformRequestInvalidError,
  PlatformResponseTooLargeError,
  PlatformSchemaMismatchError,
  PlatformServerError,
  PlatformTimeoutError,
  PlatformUnauthenticatedError,
  PlatformUnexpectedStatusError,
  readErrorDetail,
} from "./errors.js";
import { describeIssue, jsonPath } from "../model/issues.js";
import { type AttemptOutcome, type RetryPolicy, defaultRetryPolicy, nextRetryDelay } from "./retry.js";

export type AuthScheme = "token" | "bearer";

export interface PlatformClientOptions {
  /** Base address of the API, e.g. https://api.example.com — paths carry no version prefix. */
  baseUrl: string;
  token: string;
  /**
   * Reads the token again (its secret store). On a 401 the client asks it once per call, and sends the
   * call again with the new value if there is one: a token rotated in the store reaches a running
   * process without a restart (docs/deploy.md, "Secrets"). Absent: a 401 fails the call.
   */
  renewToken?: () => Promise<string>;
  /** `token`: `Authorization: Token …` (API tokens); `bearer`: `Authorization: Bearer …` (OIDC JWTs). */
  auth: AuthScheme;
  /** Per attempt, response body included: a stalled body times out like a stalled connection. */
  timeoutMs?: number;
  /** An answer larger than this, decompressed, is refused (default 20 MB): a gzip bomb must not fill memory. */
  maxResponseBytes?: number;
  retry?: Partial<RetryPolicy>;
  /** Check path, query and body against the spec before sending (a bad request costs no budget). */
  validateRequests?: boolean;
  /** Told the cost of every call, successful or not: the request budget listens here. */
  onCost?: (cost: CallCost, error?: PlatformError) => void;
  /** Injected for tests and the simulator's clock; default wall time and Math.random. */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  random?: () => number;
  userAgent?: string;
}

export interface PlatformResponse<T> {
  data: T;
  status: number;
  cost: CallCost;
}

/** An item of a list that did not match its schema: skipped, and said where and why. */
export interface RejectedItem {
  index: number;
  jsonPath: string;
  reason: string;
  /** The item as received, for the log (callers redact before logging). */
  raw: unknown;
}

export interface PlatformListResponse<T> {
  items: T[];
  rejected: RejectedItem[];
  /** The envelope without `results` (e.g. page and page_size of deployment history). */
  envelope: Record<string, unknown>;
  status: number;
  cost: CallCost;
}

const listEnvelope = z.looseObject({ results: z.array(z.unknown()) });

type CallArgs<K extends keyof T, T extends EndpointTable> = {} extends EndpointInput<K, T>
  ? [input?: EndpointInput<K, T>]
  : [input: EndpointInput<K, T>];

/** One method per endpoint, named as in the endpoint table. */
export type PlatformApi<T extends EndpointTable = Endpoints> = {
  [K in keyof T]: (...args: CallArgs<K, T>) => Promise<PlatformResponse<EndpointOutput<K, T>>>;
};

type RawAttempt =
  | { kind: "response"; status: number; headers: Headers; text: string }
  | { kind: "too_large"; status: number; headers: Headers }
  | { kind: "deferred"; status: number; headers: Headers }
  | { kind: "timeout" }
  | { kind: "network"; error: unknown };

const sleepReal = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export const DEFAULT_MAX_RESPONSE_BYTES = 20 * 1024 * 1024;

export class PlatformClient<T extends EndpointTable = Endpoints> {
  private readonly baseUrl: string;
  private readonly policy: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;
  private readonly random: () => number;

  private readonly table: T;
  private token: string;
  /** The store's token being read again after a 401, shared by the calls refused meanwhile. */
  private renewal: Promise<void> | undefined;

  constructor(private readonly options: PlatformClientOptions, table?: T) {
    this.table = table ?? (endpoints as unknown as T);
    if (!options.token) throw new Error("platform client: no token given (platform.token)");
    this.token = options.token;
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.policy = { ...defaultRetryPolicy, ...options.retry };
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.sleep = options.sleep ?? sleepReal;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  /** Calls endpoint `name`; resolves with its parsed response or rejects with a PlatformError. */
  async call<K extends keyof T & string>(name: K, ...[input]: CallArgs<K, T>): Promise<PlatformResponse<EndpointOutput<K, T>>> {
    return this.callWith(name, this.table[name]!, input) as Promise<PlatformResponse<EndpointOutput<K, T>>>;
  }

  private async callWith(name: string, endpoint: EndpointDef, input: unknown): Promise<PlatformResponse<unknown>> {
    const args = (input ?? {}) as { path?: Record<string, string>; query?: Record<string, unknown>; body?: unknown };
    const cost = emptyCost(name);
    const path = fillPath(endpoint.path, args.path) + queryString(args.query);
    const ctx = (extra: Partial<PlatformErrorContext> = {}): PlatformErrorContext => ({
      endpoint: name, method: endpoint.method, path, cost, ...extra,
    });
    try {
      if (this.options.validateRequests !== false) this.validate(endpoint, args, ctx);
      const response = await this.send(endpoint, path, args.body, cost, ctx);
      this.options.onCost?.(cost);
      return response;
    } catch (err) {
      this.options.onCost?.(cost, err as PlatformError);
      throw err;
    }
  }

  /**
   * Calls a list endpoint and parses its items one by one: an item that does not match its schema is
   * returned in `rejected` (with its JSON path), and the valid items beside it are kept. A response whose
   * envelope is wrong still fails as a whole (PlatformSchemaMismatchError).
   */
  async list<K extends ListEndpointName<T> & string>(name: K, ...[input]: CallArgs<K, T>): Promise<PlatformListResponse<ListItemOf<K, T>>> {
    const endpoint = this.table[name]!;
    const lenient: EndpointDef = { ...endpoint, response: listEnvelope };
    const res = await this.callWith(name, lenient, input);
    const { results, ...envelope } = res.data as { results: unknown[] };
    const items: ListItemOf<K, T>[] = [];
    const rejected: RejectedItem[] = [];
    results.forEach((raw, index) => {
      const parsed = endpoint.items!.safeParse(raw);
      if (parsed.success) items.push(parsed.data as ListItemOf<K, T>);
      else {
        const issue = parsed.error.issues[0]!;
        rejected.push({ index, jsonPath: jsonPath(["results", index, ...issue.path]), reason: describeIssue(issue, raw), raw });
      }
    });
    return { items, rejected, envelope, status: res.status, cost: res.cost };
  }

  private async send(
    endpoint: EndpointDef,
    path: string,
    body: unknown,
    cost: CallCost,
    ctx: (extra?: Partial<PlatformErrorContext>) => PlatformErrorContext,
  ): Promise<PlatformResponse<unknown>> {
    const idempotent = endpoint.method !== "POST" || endpoint.idempotent === true;
    let renewed = false;
    for (let attempt = 0; ; attempt++) {
      cost.requests++;
      const sentToken = this.token;
      const raw = await this.attempt(endpoint.method, path, body, sentToken);
      const rateLimit = "headers" in raw ? readRateLimitHeaders(raw.headers, this.now()) : undefined;
      if (rateLimit) cost.rateLimit = rateLimit;
      cost.statuses.push("status" in raw ? raw.status : 0);
      // The same request would bring the same flood: refused, not retried; the source backs off.
      if (raw.kind === "too_large") throw new PlatformResponseTooLargeError(ctx({ status: raw.status }), this.maxResponseBytes);
      // Another poll of this process holds a large answer: this one is read at the next tick instead.
      if (raw.kind === "deferred") throw new PlatformAnswerDeferredError(ctx({ status: raw.status }));

      if (raw.kind === "response" && raw.status >= 200 && raw.status < 300) {
        return { data: parseBody(endpoint, raw, ctx), status: raw.status, cost };
      }
      // A token rejected: if the store holds another (rotated), the same call once more with it. Not a
      // retry: the call keeps its retries for what the platform answers with the new token.
      if (raw.kind === "response" && raw.status === 401 && !renewed) {
        renewed = true;
        if (await this.renewedToken(sentToken)) {
          attempt--;
          continue;
        }
      }
      const outcome: AttemptOutcome =
        raw.kind === "response" ? { kind: "status", status: raw.status, rateLimit } : { kind: raw.kind };
      const delay = nextRetryDelay({
        policy: this.policy, attempt, outcome, idempotent, nowMs: this.now(), random: this.random,
      });
      if (delay === undefined) throw toError(raw, rateLimit, ctx, this.timeoutMs);
      cost.retries++;
      cost.waitedMs += delay;
      await this.sleep(delay);
    }
  }

  /**
   * Whether there is a token other than the one rejected: one another call already renewed, else the
   * store's. Concurrent rejections share one read of the store; a store that fails leaves the rejection as it is.
   */
  private async renewedToken(rejected: string): Promise<boolean> {
    if (this.token !== rejected) return true;
    if (!this.options.renewToken) return false;
    this.renewal ??= this.options.renewToken().then(
      (fresh) => {
        if (fresh && fresh !== rejected && this.token === rejected) this.token = fresh;
      },
      () => undefined,
    ).finally(() => {
      this.renewal = undefined;
    });
    await this.renewal;
    return this.token !== rejected;
  }

  private async attempt(method: string, path: string, body: unknown, token: string): Promise<RawAttempt> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    try {
      const res = await fetch(this.baseUrl + path, {
        method,
        headers: {
          authorization: `${this.options.auth === "bearer" ? "Bearer" : "Token"} ${token}`,
          accept: "application/json",
          "user-agent": this.options.userAgent ?? "lookout/0.1",
          ...(body !== undefined ? { "content-type": "application/json" } : {}),
        },
        body: body !== undefined ? JSON.stringify(body) : undefined,
        signal: controller.signal,
        redirect: "error",
      });
      // Read within the same timer, counting decompressed bytes, never more than the limit.
      const text = await readCapped(res, this.maxResponseBytes, controller.signal);
      if (typeof text !== "string") {
        controller.abort();
        return { kind: text.refused, status: res.status, headers: res.headers };
      }
      return { kind: "response", status: res.status, headers: res.headers, text };
    } catch (error) {
      return controller.signal.aborted ? { kind: "timeout" } : { kind: "network", error };
    } finally {
      clearTimeout(timer);
    }
  }

  private validate(
    endpoint: EndpointDef,
    args: { path?: Record<string, string>; query?: Record<string, unknown>; body?: unknown },
    ctx: (extra?: Partial<PlatformErrorContext>) => PlatformErrorContext,
  ): void {
    const refuse = (field: string, detail: string) => {
      throw new PlatformRequestInvalidError(ctx({ detail: `${field} ${detail}` }), field);
    };
    for (const name of pathParamNames(endpoint.path)) {
      const value = args.path?.[name];
      if (typeof value !== "string") refuse(`path.${name}`, "is missing");
      const why = checkParam(pathParamFormat(endpoint, name), value as string);
      if (why) refuse(`path.${name}`, why);
    }
    for (const [name, value] of Object.entries(args.query ?? {})) {
      const format = endpoint.query?.[name];
      if (value === undefined) continue;
      if (!format) refuse(`query.${name}`, "is not a parameter of this endpoint");
      const why = checkParam(format!, String(value));
      if (why) refuse(`query.${name}`, why);
      if (format === "int" && Number(value) < 1) refuse(`query.${name}`, "must be at least 1");
    }
    if (endpoint.body) {
      const parsed = endpoint.body.safeParse(args.body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        refuse(`body${jsonPath(issue.path).slice(1)}`, describeIssue(issue, args.body));
      }
    }
  }
}

/**
 * The body as text; refused once it passes `limit` bytes, or once this poll may not hold it while
 * another poll of the process holds a large answer (lib/platform/answer-memory.ts). The rest is not read.
 */
async function readCapped(res: Response, limit: number, signal: AbortSignal): Promise<string | { refused: "too_large" | "deferred" }> {
  // Every wait here ends when the timer aborts: a body that stalls, or a cancel a stalled peer never
  // confirms, must not hold the poll (undici does not always fail a pending read on abort).
  const aborted = new Promise<never>((_, reject) => {
    const fail = () => reject(new Error("aborted"));
    if (signal.aborted) fail();
    else signal.addEventListener("abort", fail, { once: true });
  });
  aborted.catch(() => undefined);
  const withinTime = <T>(p: Promise<T>) => Promise.race([p, aborted]);
  const declared = Number(res.headers.get("content-length"));
  // A declared length is of the encoded body; only an unencoded one can be refused before reading.
  const refusal = !res.headers.get("content-encoding") && declared > 0
    ? (declared > limit ? "too_large" : mayHoldAnswer(declared) ? undefined : "deferred")
    : undefined;
  if (refusal) {
    void res.body?.cancel().catch(() => undefined);
    return { refused: refusal };
  }
  if (!res.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  let refused: "too_large" | "deferred" | undefined;
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await withinTime(reader.read());
      if (done) break;
      size += value.byteLength;
      refused = size > limit ? "too_large" : mayHoldAnswer(size) ? undefined : "deferred";
      if (refused) return { refused };
      chunks.push(value);
    }
  } finally {
    if (refused || signal.aborted) void reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks, size).toString("utf8");
}

function queryString(query: Record<string, unknown> | undefined): string {
  const entries = Object.entries(query ?? {}).filter(([, v]) => v !== undefined && v !== null);
  return entries.length ? `?${new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)])).toString()}` : "";
}

function parseBody(
  endpoint: EndpointDef,
  raw: Extract<RawAttempt, { kind: "response" }>,
  ctx: (extra?: Partial<PlatformErrorContext>) => PlatformErrorContext,
): unknown {
  if (!endpoint.response) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(raw.text);
  } catch (err) {
    throw new PlatformSchemaMismatchError(
      ctx({ status: raw.status }),
      "$",
      `the body is not JSON (${(err as Error).message}; ${raw.text.length} bytes)`,
    );
  }
  const parsed = endpoint.response.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new PlatformSchemaMismatchError(ctx({ status: raw.status }), jsonPath(issue.path), describeIssue(issue, json));
}

function toError(
  raw: Exclude<RawAttempt, { kind: "too_large" | "deferred" }>,
  rateLimit: RateLimitHeaders | undefined,
  ctx: (extra?: Partial<PlatformErrorContext>) => PlatformErrorContext,
  timeoutMs: number,
): PlatformError {
  if (raw.kind === "timeout") return new PlatformTimeoutError(ctx(), timeoutMs);
  if (raw.kind === "network") return new PlatformNetworkError(ctx(), raw.error);
  const c = ctx({ status: raw.status, detail: readErrorDetail(raw.text) });
  switch (raw.status) {
    case 400: return new PlatformBadRequestError(c);
    case 401: return new PlatformUnauthenticatedError(c);
    case 403: return new PlatformForbiddenError(c);
    case 404: return new PlatformNotFoundError(c);
    case 429: return new PlatformRateLimitedError(c, rateLimit?.retryAfterMs);
    default: return raw.status >= 500 ? new PlatformServerError(c) : new PlatformUnexpectedStatusError(c);
  }
}

/**
 * A client with one method per endpoint: `client.listWebhookEvents({ path: { organizationId, webhookId } })`;
 * of Lookout's endpoints, or of the table given (the simulator's of the whole spec, for contract tests).
 */
export function createPlatformClient(options: PlatformClientOptions): PlatformClient & PlatformApi;
export function createPlatformClient<T extends EndpointTable>(options: PlatformClientOptions, table: T): PlatformClient<T> & PlatformApi<T>;
export function createPlatformClient<T extends EndpointTable>(options: PlatformClientOptions, table?: T): PlatformClient<T> & PlatformApi<T> {
  const client = new PlatformClient<T>(options, table);
  const api = {} as Record<string, unknown>;
  for (const name of Object.keys(table ?? endpoints)) api[name] = (input?: unknown) => (client.call as Function).call(client, name, input);
  return Object.assign(client, api) as unknown as PlatformClient<T> & PlatformApi<T>;
}
