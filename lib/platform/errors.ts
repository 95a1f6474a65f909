/**
 * Typed errors of the platform client: one class per cause, so callers decide by type (retry, back off,
 * raise a health event, skip a record) and never by parsing messages. No error carries the token.
 */
import type { CallCost } from "./cost.js";
import { redactText } from "./redact.js";

export type PlatformErrorKind =
  | "request_invalid"
  | "bad_request"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "rate_limited"
  | "server_error"
  | "unexpected_status"
  | "timeout"
  | "network"
  | "response_too_large"
  | "deferred"
  | "schema_mismatch";

export interface PlatformErrorContext {
  endpoint: string;
  method: string;
  /** The request path with its query, never the host's credentials. */
  path: string;
  status?: number;
  /** What the error body said (`detail` or `message`), when it said anything. */
  detail?: string;
  cost: CallCost;
}

export abstract class PlatformError extends Error {
  abstract readonly kind: PlatformErrorKind;
  /** Whether the same request may succeed if sent again later. */
  abstract readonly retryable: boolean;
  readonly endpoint: string;
  readonly method: string;
  readonly path: string;
  readonly status: number | undefined;
  readonly detail: string | undefined;
  readonly cost: CallCost;

  constructor(summary: string, ctx: PlatformErrorContext, options?: { cause?: unknown }) {
    const where = `${ctx.method} ${ctx.path} (${ctx.endpoint})`;
    // Causes and bodies may quote the base URL (with its password) or a token: redacted (docs/security.md).
    super(redactText(`${summary}: ${where}${ctx.detail ? ` — ${ctx.detail}` : ""}`), options);
    this.name = new.target.name;
    this.endpoint = ctx.endpoint;
    this.method = ctx.method;
    this.path = ctx.path;
    this.status = ctx.status;
    this.detail = ctx.detail === undefined ? undefined : redactText(ctx.detail);
    this.cost = ctx.cost;
  }
}

/** The request was refused before it was sent: a path parameter, query or body does not fit the spec. */
export class PlatformRequestInvalidError extends PlatformError {
  readonly kind = "request_invalid";
  readonly retryable = false;
  constructor(
    ctx: PlatformErrorContext,
    /** Where the request is wrong, e.g. `body.description` or `path.jobId`. */
    readonly field: string,
  ) {
    super("Request not sent, it does not fit the spec", ctx);
  }
}

export class PlatformBadRequestError extends PlatformError {
  readonly kind = "bad_request";
  readonly retryable = false;
  constructor(ctx: PlatformErrorContext) {
    super("The platform rejected the request as bad (400)", ctx);
  }
}

export class PlatformUnauthenticatedError extends PlatformError {
  readonly kind = "unauthenticated";
  readonly retryable = false;
  constructor(ctx: PlatformErrorContext) {
    super("The platform token is missing, invalid or expired (401)", ctx);
  }
}

export class PlatformForbiddenError extends PlatformError {
  readonly kind = "forbidden";
  readonly retryable = false;
  constructor(ctx: PlatformErrorContext) {
    // The platform sometimes answers 403 for a resource that does not exist (docs/platform.md).
    super("The platform token may not do this, or the resource does not exist (403)", ctx);
  }
}

export class PlatformNotFoundError extends PlatformError {
  readonly kind = "not_found";
  readonly retryable = false;
  constructor(ctx: PlatformErrorContext) {
    super("The platform has no such resource (404)", ctx);
  }
}

export class PlatformRateLimitedError extends PlatformError {
  readonly kind = "rate_limited";
  readonly retryable = true;
  constructor(
    ctx: PlatformErrorContext,
    /** How long the platform asked us to wait, when it said. */
    readonly retryAfterMs: number | undefined,
  ) {
    super(`The platform is rate limiting this token (429)${retryAfterMs !== undefined ? `, retry after ${Math.ceil(retryAfterMs / 1000)}s` : ""}`, ctx);
  }
}

export class PlatformServerError extends PlatformError {
  readonly kind = "server_error";
  readonly retryable = true;
  constructor(ctx: PlatformErrorContext) {
    super(`The platform failed (${ctx.status})`, ctx);
  }
}

/** A status the spec does not lead us to expect (405, 409, 3xx…). */
export class PlatformUnexpectedStatusError extends PlatformError {
  readonly kind = "unexpected_status";
  readonly retryable = false;
  constructor(ctx: PlatformErrorContext) {
    super(`The platform answered with an unexpected status ${ctx.status}`, ctx);
  }
}

export class PlatformTimeoutError extends PlatformError {
  readonly kind = "timeout";
  readonly retryable = true;
  constructor(ctx: PlatformErrorContext, readonly timeoutMs: number) {
    super(`The platform did not answer within ${timeoutMs} ms`, ctx);
  }
}

export class PlatformNetworkError extends PlatformError {
  readonly kind = "network";
  readonly retryable = true;
  constructor(ctx: PlatformErrorContext, cause: unknown) {
    super(`The platform could not be reached (${describeCause(cause)})`, ctx, { cause });
  }
}

/** An answer larger than the configured limit (platform.max_response_size), counted decompressed. */
export class PlatformResponseTooLargeError extends PlatformError {
  readonly kind = "response_too_large";
  readonly retryable = false;
  constructor(ctx: PlatformErrorContext, readonly limitBytes: number) {
    super(`The platform's answer is larger than ${formatBytes(limitBytes)} (platform.max_response_size); not read further`, ctx);
  }
}

/**
 * A large answer while another poll of the same process holds one (lib/platform/answer-memory.ts): not
 * read further, so that both fit the function's memory. Not the source's fault: it is read again at the
 * next tick, without a back-off.
 */
export class PlatformAnswerDeferredError extends PlatformError {
  readonly kind = "deferred";
  readonly retryable = false;
  constructor(ctx: PlatformErrorContext) {
    super("A large answer while another poll of this process holds one; read again at the next tick", ctx);
  }
}

/** 20 MB, 512 KB, 900 bytes: limits as people write them. */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KB`;
  return `${n} bytes`;
}

/** A 2xx response whose body is not JSON or does not match the endpoint's schema. */
export class PlatformSchemaMismatchError extends PlatformError {
  readonly kind = "schema_mismatch";
  readonly retryable = false;
  constructor(
    ctx: PlatformErrorContext,
    /** JSON path of the first mismatch, e.g. `$.results[3].target_response_status_code`; `$` for a body that is not JSON. */
    readonly jsonPath: string,
    readonly reason: string,
  ) {
    super(`The platform's response does not match the schema at ${jsonPath}: ${reason}`, ctx);
  }
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    // fetch wraps the socket error: "fetch failed" with the code (ECONNREFUSED…) or reason one level down.
    const inner = cause.cause as { code?: string; message?: string } | undefined;
    return (cause as { code?: string }).code ?? inner?.code ?? inner?.message ?? cause.message;
  }
  return String(cause);
}

/**
 * Reads an error body of either known shape — `{status, detail}` or `{status, error, message}` — or none.
 * Returns the human part, cut to a sane length.
 */
export function readErrorDetail(body: string): string | undefined {
  const text = body.trim();
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    if (parsed && typeof parsed === "object") {
      const parts = [parsed.error, parsed.message ?? parsed.detail].filter(
        (p): p is string => typeof p === "string" && p.length > 0,
      );
      if (parts.length) return clip(parts.join(": "));
    }
  } catch {
    // Not JSON: fall through to the raw text (HTML error pages, proxies).
  }
  return clip(text.replace(/\s+/g, " "));
}

const clip = (s: string, max = 300) => (s.length > max ? `${s.slice(0, max)}…` : s);
