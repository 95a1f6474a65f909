/**
 * The receivers' one retry loop (Slack's senders and the HTTP receivers): a few attempts and a cap on
 * the total wait, so a Lambda never sleeps for minutes; the project's jittered backoff (lib/model/backoff.ts),
 * or what Retry-After asked for; an injectable sleep and random source so tests do not wait.
 */
import { type BackoffPolicy, backoffDelay } from "../model/backoff.js";
import type { DeliveryError } from "./types.js";

export interface RetryPolicy extends BackoffPolicy {
  /** Cap on the time spent waiting between attempts of one send, Retry-After included. */
  maxTotalWaitMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  // A Retry-After longer than this is not slept on: the error (retryable, with retryAfterMs) goes to
  // the caller, whose queue can redeliver later.
  maxWaitMs: 30_000,
  maxTotalWaitMs: 45_000,
};

/** What a receiver's sender takes for its retry loop: the policy over the default, and the sleep and random source tests inject. */
export interface RetrySettings {
  retry?: Partial<RetryPolicy>;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/** The loop's policy, sleep and random source from a sender's settings, the defaults where not given. */
export const retryLoop = (s: RetrySettings): Pick<RetryOptions, "policy" | "sleep" | "random"> => ({
  policy: { ...defaultRetryPolicy, ...s.retry },
  sleep: s.sleep ?? sleepReal,
  random: s.random ?? Math.random,
});

/** One failed attempt, classified. */
export interface Failure {
  retryable: boolean;
  status?: number;
  retryAfterMs?: number;
  /** Safe to show: a status and the receiver's short error, nothing from the request. */
  reason: string;
  /**
   * The receiver may have taken the message though it did not say so: no answer in time, a 5xx, the
   * connection lost after the request went out. Sending again may show it twice (RetryOptions.unsure).
   */
  mayHaveArrived?: boolean;
}

/** Thrown by one attempt; anything else an attempt throws is not retried. */
export class AttemptFailed extends Error {
  constructor(readonly failure: Failure) {
    super(failure.reason);
  }
}

export interface RetryOptions<T = unknown> {
  policy: RetryPolicy;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  /** Called before each wait, for metrics and tests. */
  onRetry?: (info: { attempt: number; delayMs: number; status?: number }) => void;
  /** The error to give up with: the failure and why the loop stopped (empty for a failure that cannot pass). */
  giveUp: (failure: Failure, why: string) => DeliveryError;
  /**
   * After a failure that may have arrived (`mayHaveArrived`), for a call that is not idempotent: look
   * for it at the receiver first (what it finds is the call's result; undefined: send again), or, where
   * it cannot be looked for, send again `once` at most (a slow answer now and then still gets through
   * without the fallback), then give up, retryable, for the delivery to retry later. Default: retry.
   */
  unsure?: "once" | (() => Promise<T | undefined>);
}

/** One call with the retry policy: Retry-After when asked, else backoff, for what may pass. */
export async function withRetries<T>(o: RetryOptions<T>, call: () => Promise<T>): Promise<T> {
  let waited = 0;
  let lookFirst = false;
  let unsureFailures = 0;
  for (let attempt = 0; ; attempt++) {
    try {
      if (lookFirst && typeof o.unsure === "function") {
        const found = await o.unsure();
        if (found !== undefined) return found;
      }
      return await call();
    } catch (err) {
      if (!(err instanceof AttemptFailed)) throw err;
      const f = err.failure;
      if (!f.retryable) throw o.giveUp(f, "");
      if (f.mayHaveArrived && o.unsure === "once" && ++unsureFailures > 1) throw o.giveUp(f, " (not sent a third time: it may have arrived)");
      lookFirst ||= !!f.mayHaveArrived; // until found or sent: a 429 after it says nothing of the earlier post
      const delay = backoffDelay({ policy: o.policy, attempt, askedMs: f.retryAfterMs, random: o.random });
      if (delay === undefined) {
        throw o.giveUp(
          f,
          f.retryAfterMs !== undefined && f.retryAfterMs > o.policy.maxWaitMs
            ? ` (Retry-After ${Math.ceil(f.retryAfterMs / 1000)} s is longer than we wait)`
            : ` (after ${attempt + 1} attempt${attempt ? "s" : ""})`,
        );
      }
      if (waited + delay > o.policy.maxTotalWaitMs) throw o.giveUp(f, ` (after ${attempt + 1} attempts, ${waited} ms waited)`);
      o.onRetry?.({ attempt, delayMs: delay, ...(f.status !== undefined ? { status: f.status } : {}) });
      await o.sleep(delay);
      waited += delay;
    }
  }
}

/**
 * A network failure as its error code only (ECONNREFUSED, UND_ERR_CONNECT_TIMEOUT, TimeoutError), never
 * the library's message (it may quote the URL). `skip`: codes that are a library's own, not the network's.
 */
export function networkCode(err: unknown, skip?: (code: string) => boolean): string {
  let e: unknown = err;
  for (let i = 0; i < 4 && e; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && !skip?.(code)) return code;
    const name = (e as { name?: unknown }).name;
    if (name === "TimeoutError" || name === "AbortError") return name;
    e = (e as { original?: unknown }).original ?? (e as { cause?: unknown }).cause;
  }
  return "network error";
}

/** Network failures before the request went out: the receiver cannot have taken it. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);

/** Whether a request that failed with this network code (`networkCode`) may still have reached the receiver. */
export const mayHaveArrivedAfter = (code: string): boolean => !NOT_SENT.has(code);

export const sleepReal = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
