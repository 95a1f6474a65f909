/**
 * The HTTP receivers' one sender (PagerDuty, generic webhooks, Teams Workflows): a JSON POST with the
 * shared retry policy (lib/notify/receiver-retry.ts). Retried: 429 (after Retry-After when given), 408,
 * 5xx and network failures; one that may have arrived unanswered once at most, but where the receiver
 * folds a repeat (`idempotent`: PagerDuty's dedup_key, the webhook's X-Lookout-Delivery). Not retried:
 * any other 4xx, an answer past the redirects allowed, a redirect to another host (never followed: the
 * request carries a signature or a key meant for the first host).
 * A redirect to the same host is followed (307/308 and 301/302/303 alike, the POST kept), three at most.
 *
 * SECRETS. The URL (Teams' and a webhook's carry their signature, PagerDuty's body its routing key) never
 * appears in an error: messages hold the service's name, the status, a redirect's host and a short
 * reason from the answer, nothing from the request.
 */
import { parseRetryAfter } from "../../model/backoff.js";
import { AttemptFailed, type Failure, mayHaveArrivedAfter, networkCode, type RetrySettings, retryLoop, withRetries } from "../receiver-retry.js";
import { clip, oneLine } from "../view/format.js";
import { redactText } from "../../platform/redact.js";
import { DeliveryError } from "../types.js";

export class HttpDeliveryError extends DeliveryError {}

export interface HttpRequest {
  /** For errors and logs: `PagerDuty`, `webhook`, `Teams`. */
  service: string;
  url: string;
  /** The JSON text to send, already bounded by its renderer. */
  body: string;
  /** Headers besides content-type; a function for those made per attempt (a signature's timestamp). */
  headers?: (attempt: number) => Record<string, string>;
  /**
   * The receiver takes the same request twice as one (PagerDuty's dedup_key): sent again freely. Otherwise
   * a request that may have arrived unanswered (no answer in time, the connection lost) is sent again
   * once at most, then left to the delivery's retry.
   */
  idempotent?: boolean;
}

export interface HttpAnswer {
  status: number;
  /** At most the first 4 KB of the answer. */
  body: string;
}

/** Posts one request; retries what may pass; throws HttpDeliveryError when it gives up. */
export interface HttpSender {
  post(request: HttpRequest): Promise<HttpAnswer>;
}

export interface HttpSenderOptions extends RetrySettings {
  now?: () => number;
  /** Per request, ms (default 10 s). */
  timeoutMs?: number;
  /** Largest body sent, bytes (default 512 KB, PagerDuty's limit; renderers bound their own below it). */
  maxBodyBytes?: number;
  onRetry?: (info: { attempt: number; delayMs: number; status?: number; service: string }) => void;
}

const MAX_REDIRECTS = 3;
const ANSWER_KEPT = 4096;
export const MAX_BODY_BYTES = 512 * 1024;

/** A short, printable reason from an answer: PagerDuty's `message`/`errors`, Teams' `error.message`, or the text. */
export function answerReason(body: string): string {
  let said = body;
  try {
    const json = JSON.parse(body) as { message?: unknown; errors?: unknown; error?: { message?: unknown; code?: unknown } | string };
    const errors = Array.isArray(json.errors) ? json.errors.filter((e) => typeof e === "string").join("; ") : "";
    const error = typeof json.error === "string" ? json.error : [json.error?.code, json.error?.message].filter((x) => typeof x === "string").join(": ");
    said = [typeof json.message === "string" ? json.message : "", errors, error].filter(Boolean).join(": ");
  } catch {
    if (/<html|<!doctype/i.test(body)) said = "";
  }
  // A proxy or a custom target may echo the request (Teams' `sig=`, a token in a path): redacted before it
  // reaches an error, a log line, a delivery record or a health event.
  return clip(oneLine(redactText(said)), 160);
}

async function readSome(res: Response): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < ANSWER_KEPT) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).toString("utf8").slice(0, ANSWER_KEPT);
}

/** One answer, classified: 2xx is taken; what is not is a Failure. */
export function judge(service: string, status: number, body: string, retryAfterMs: number | undefined): Failure | undefined {
  if (status >= 200 && status < 300) return undefined;
  const reason = answerReason(body);
  const failure: Failure = {
    retryable: status === 429 || status === 408 || status >= 500,
    status,
    reason: `${service} answered HTTP ${status}${reason ? ` (${reason})` : ""}`,
  };
  if (retryAfterMs !== undefined && (status === 429 || status === 503)) failure.retryAfterMs = retryAfterMs;
  return failure;
}

export function httpSender(opts: HttpSenderOptions = {}): HttpSender {
  const loop = retryLoop(opts);
  const now = opts.now ?? Date.now;
  const timeout = opts.timeoutMs ?? 10_000;
  const maxBody = opts.maxBodyBytes ?? MAX_BODY_BYTES;

  async function attempt(req: HttpRequest, n: number): Promise<HttpAnswer> {
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      // A setting no retry can fix (LOOKOUT_PAGERDUTY_URL, say): said as such, and the URL not shown.
      throw new AttemptFailed({ retryable: false, reason: `${req.service} URL is not a valid URL` });
    }
    const host = url.host;
    for (let hops = 0; ; hops++) {
      let res: Response;
      try {
        res = await fetch(url, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/json", "user-agent": "Lookout", ...req.headers?.(n) },
          body: req.body,
          signal: AbortSignal.timeout(timeout),
        });
      } catch (err) {
        const code = networkCode(err);
        throw new AttemptFailed({ retryable: true, mayHaveArrived: mayHaveArrivedAfter(code), reason: `${req.service} request failed (${code})` });
      }
      // A stream that breaks mid-answer is a failed attempt like a refused connection, retried.
      const body = await readSome(res).catch((err: unknown) => {
        throw new AttemptFailed({ retryable: true, mayHaveArrived: true, status: res.status, reason: `${req.service} answer could not be read (${networkCode(err)})` });
      });
      if (res.status >= 300 && res.status < 400) {
        const location = res.headers.get("location");
        let next: URL | undefined;
        try {
          next = location ? new URL(location, url) : undefined;
        } catch {
          next = undefined;
        }
        if (!next) throw new AttemptFailed({ retryable: false, status: res.status, reason: `${req.service} answered HTTP ${res.status} without a usable Location` });
        if (next.host !== host) {
          throw new AttemptFailed({ retryable: false, status: res.status, reason: `${req.service} answered HTTP ${res.status}, a redirect to another host (${next.host}), not followed` });
        }
        if (hops + 1 > MAX_REDIRECTS) throw new AttemptFailed({ retryable: false, status: res.status, reason: `${req.service} redirected more than ${MAX_REDIRECTS} times` });
        url = next;
        continue;
      }
      const failure = judge(req.service, res.status, body, parseRetryAfter(res.headers.get("retry-after"), now()));
      if (failure) throw new AttemptFailed(failure);
      return { status: res.status, body };
    }
  }

  return {
    async post(req) {
      const bytes = Buffer.byteLength(req.body);
      if (bytes > maxBody) throw new HttpDeliveryError(`${req.service} message is ${bytes} bytes, over the ${maxBody} allowed`, false, undefined, undefined, "too_large");
      let n = 0;
      return withRetries(
        {
          ...loop,
          ...(opts.onRetry ? { onRetry: (info: { attempt: number; delayMs: number; status?: number }) => opts.onRetry!({ ...info, service: req.service }) } : {}),
          giveUp: (f, why) => new HttpDeliveryError(`${f.reason}${why}`, f.retryable, f.status, f.retryAfterMs),
          ...(req.idempotent ? {} : { unsure: "once" as const }),
        },
        () => attempt(req, n++),
      );
    },
  };
}
