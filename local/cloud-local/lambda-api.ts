/**
 * Lambda's Invoke API for the packaged functions (docs/cloud-local.md), which dispatch calls to start
 * polls and digest flushes (`AWS_ENDPOINT_URL_LAMBDA` points its SDK here). moto_server's Lambda runs
 * functions only in Docker, so this small server plays it: `POST /2015-03-31/functions/{name}/invocations`
 * with `InvocationType` Event (202, queued, run on the function's containers; a failed event is tried
 * again after Lambda's delays up to the template's `MaximumRetryAttempts`, within
 * `MaximumEventAgeInSeconds`, then sent to its on-failure destination as Lambda's invocation record) or
 * RequestResponse (200 with the answer, `X-Amz-Function-Error` on an error); 404 for a function the
 * template does not have, 413 past the payload limits.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { FunctionHost } from "./lambda-container.js";
import { type Activity, functionNameOf, type Invocation, type Invoke } from "./call-function.js";

/** A function's `AWS::Lambda::EventInvokeConfig`, resolved (Lambda's defaults without one). */
export interface AsyncInvokeConfig {
  maximumRetryAttempts: number;
  maximumEventAgeSec: number;
  /** The on-failure destination's ARN (an SQS queue here). */
  onFailure?: string;
}

export const DEFAULT_ASYNC_CONFIG: AsyncInvokeConfig = { maximumRetryAttempts: 2, maximumEventAgeSec: 21_600 };

/** Lambda's: an asynchronous event up to 256 KB, a synchronous one up to 6 MB. */
const MAX_ASYNC_PAYLOAD = 256 * 1024;
const MAX_SYNC_PAYLOAD = 6 * 1024 * 1024;
/** Lambda waits about a minute before the first retry of a failed asynchronous event, two before the second. */
export const LAMBDA_RETRY_DELAYS_MS = [60_000, 120_000] as const;

export interface LambdaApiOptions {
  functions: ReadonlyMap<string, FunctionHost>;
  asyncConfig: ReadonlyMap<string, AsyncInvokeConfig>;
  sqs: SQSClient;
  queueUrlOf: (arn: string) => string;
  /** The waits before each retry (default Lambda's); tests shorten them. */
  retryDelaysMs?: readonly number[];
  activity?: Activity;
}

export interface LambdaApi {
  url: string;
  /** A synchronous invocation, for the event sources and the HTTP API. */
  invoke: Invoke;
  /** An asynchronous invocation (the Scheduler's): queued, retried as the function's configuration says. */
  enqueue(name: string, event: unknown): void;
  /** Resolves when no asynchronous event is queued, running or waiting for a retry. */
  settled(): Promise<void>;
  /** Asynchronous events under way (queued, running or waiting for a retry). */
  inFlight(): number;
  close(): Promise<void>;
}

export async function startLambdaApi(opts: LambdaApiOptions): Promise<LambdaApi> {
  const delays = opts.retryDelaysMs ?? LAMBDA_RETRY_DELAYS_MS;
  const timers = new Set<NodeJS.Timeout>();
  let under = 0;
  let idle: Array<() => void> = [];
  let closed = false;
  const done = () => {
    if (--under === 0) {
      const waiting = idle;
      idle = [];
      for (const w of waiting) w();
    }
  };

  const invoke: Invoke = async (nameOrArn, event) => {
    const name = functionNameOf(nameOrArn);
    const host = opts.functions.get(name);
    if (!host) return { ok: false, errorType: "ResourceNotFoundException", errorMessage: `Function not found: ${name}`, ms: 0 };
    return host.invoke(event);
  };

  /** One asynchronous event, tried until it succeeds or its retries or age run out. */
  const runAsync = (name: string, event: unknown): void => {
    const host = opts.functions.get(name)!;
    const config = opts.asyncConfig.get(name) ?? DEFAULT_ASYNC_CONFIG;
    const requestId = randomUUID();
    const accepted = Date.now();
    under++;
    const attempt = async (n: number): Promise<void> => {
      if (closed) return done();
      const aged = Date.now() - accepted > config.maximumEventAgeSec * 1000;
      const outcome: Invocation = aged
        ? { ok: false, errorType: "EventAgeExceeded", errorMessage: `older than ${config.maximumEventAgeSec} s`, ms: 0 }
        : await host.invoke(event);
      if (outcome.ok) {
        opts.activity?.(`${name} ← async event${n ? ` (retry ${n})` : ""}: ok (${outcome.ms} ms)`);
        return done();
      }
      if (!aged && n < config.maximumRetryAttempts && !closed) {
        const wait = delays[Math.min(n, delays.length - 1)] ?? 0;
        opts.activity?.(`${name} ← async event${n ? ` (retry ${n})` : ""}: ${outcome.errorType}: ${outcome.errorMessage}; tried again in ${Math.round(wait / 1000)} s`);
        const t = setTimeout(() => {
          timers.delete(t);
          void attempt(n + 1);
        }, wait);
        timers.add(t);
        return;
      }
      const condition = aged ? "EventAgeExceeded" : "RetriesExhausted";
      try {
        if (config.onFailure && !closed) {
          await opts.sqs.send(new SendMessageCommand({
            QueueUrl: opts.queueUrlOf(config.onFailure),
            MessageBody: JSON.stringify({
              version: "1.0", timestamp: new Date().toISOString(),
              requestContext: { requestId, functionArn: `${host.def.arn}:$LATEST`, condition, approximateInvokeCount: n + 1 },
              requestPayload: event,
              responseContext: { statusCode: 200, executedVersion: "$LATEST", functionError: "Unhandled" },
              responsePayload: outcome.ok ? null : { errorType: outcome.errorType, errorMessage: outcome.errorMessage },
            }),
          }));
        }
        opts.activity?.(`${name} ← async event: ${condition} after ${n + 1} attempt(s)${config.onFailure ? ", sent to its on-failure destination" : ", dropped (no on-failure destination)"}`);
      } catch (err) {
        opts.activity?.(`${name} ← async event: ${condition}; its on-failure destination refused it: ${(err as Error).message}`);
      }
      done();
    };
    void attempt(0);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const match = /^\/2015-03-31\/functions\/([^/?]+)\/invocations(\?.*)?$/.exec(req.url ?? "");
      const name = match ? decodeURIComponent(match[1]!).replace(/^arn:[^:]+:lambda:[^:]*:[^:]*:function:/, "").replace(/:\$LATEST$/, "") : "";
      const answer = (status: number, type?: string, message?: string, headers: Record<string, string> = {}) => {
        res.writeHead(status, { "content-type": "application/json", ...(type ? { "x-amzn-errortype": type } : {}), ...headers });
        res.end(type ? JSON.stringify({ Type: "User", message }) : "");
      };
      if (req.method !== "POST" || !match) return answer(400, "InvalidRequestContentException", `${req.method} ${req.url}: not an Invoke request`);
      if (!opts.functions.has(name)) return answer(404, "ResourceNotFoundException", `Function not found: ${name}`);
      const body = Buffer.concat(chunks);
      const type = String(req.headers["x-amz-invocation-type"] ?? "RequestResponse");
      const limit = type === "Event" ? MAX_ASYNC_PAYLOAD : MAX_SYNC_PAYLOAD;
      if (body.length > limit) return answer(413, "RequestEntityTooLargeException", `Request must be smaller than ${limit} bytes for the ${type} invocation type`);
      let event: unknown;
      try {
        event = body.length ? JSON.parse(body.toString("utf8")) : {};
      } catch {
        return answer(400, "InvalidRequestContentException", "Could not parse request body into json");
      }
      if (type === "DryRun") return answer(204);
      if (type === "Event") {
        runAsync(name, event);
        return answer(202);
      }
      void invoke(name, event).then((o) => {
        res.writeHead(200, { "content-type": "application/json", "x-amz-executed-version": "$LATEST", ...(o.ok ? {} : { "x-amz-function-error": "Unhandled" }) });
        res.end(JSON.stringify(o.ok ? o.payload : { errorType: o.errorType, errorMessage: o.errorMessage }));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    invoke,
    enqueue: runAsync,
    inFlight: () => under,
    settled: () => (under === 0 ? Promise.resolve() : new Promise<void>((r) => idle.push(r))),
    async close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      under -= timers.size;
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
