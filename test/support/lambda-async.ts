/**
 * Lambda's asynchronous invocation, for the SDK (no emulator runs functions here: moto_server's Lambda
 * needs Docker). An HTTP server speaking the Invoke API (`POST /2015-03-31/functions/{name}/invocations`)
 * with its contract for `InvocationType: Event`: 202 and an empty body once the event is queued, 404
 * ResourceNotFoundException for a function it does not have, 413 RequestEntityTooLargeException past
 * 256 KB. Queued events run on `drain()` (Lambda runs them later, not within the call); an event whose
 * handler throws is run again at the next two drains (Lambda's two retries, a minute and two apart),
 * then goes to the function's on-failure destination (`failed`).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Context } from "aws-lambda";

const MAX_ASYNC_PAYLOAD = 256 * 1024;
const ATTEMPTS = 3;

/** Any function's handler (middy's take a third argument, which Lambda never passes). */
type Handler = (event: never, context: Context, ...rest: never[]) => unknown;

export interface LambdaAsync {
  url: string;
  /** The SDK client settings that reach it. */
  clientConfig: { endpoint: string; region: string; credentials: { accessKeyId: string; secretAccessKey: string } };
  register(name: string, handler: Handler): void;
  /** Every event accepted, by function, in order. */
  accepted: Array<{ name: string; event: unknown }>;
  /** Events that failed every attempt, as the on-failure destination receives them. */
  failed: Array<{ name: string; event: unknown; error: string }>;
  /** Runs the events queued now (retries of earlier failures among them); resolves when they have ended. */
  drain(): Promise<number>;
  close(): Promise<void>;
}

const context = (name: string) => ({ functionName: name, awsRequestId: `req-${Math.random().toString(36).slice(2)}`, invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${name}` }) as unknown as Context;

export async function startLambdaAsync(): Promise<LambdaAsync> {
  const handlers = new Map<string, Handler>();
  let queue: Array<{ name: string; event: unknown; attempts: number }> = [];
  const out = { accepted: [] as LambdaAsync["accepted"], failed: [] as LambdaAsync["failed"] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const match = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(req.url ?? "");
      const name = match ? decodeURIComponent(match[1]!) : "";
      const answer = (status: number, type?: string, message?: string) => {
        res.writeHead(status, type ? { "content-type": "application/json", "x-amzn-errortype": type } : {});
        res.end(type ? JSON.stringify({ Type: "User", message }) : "");
      };
      if (req.method !== "POST" || !match) return answer(400, "InvalidRequestContentException", "not an Invoke request");
      if (req.headers["x-amz-invocation-type"] !== "Event") return answer(400, "InvalidRequestContentException", "only asynchronous invocations here");
      if (!handlers.has(name)) return answer(404, "ResourceNotFoundException", `Function not found: ${name}`);
      const body = Buffer.concat(chunks);
      if (body.length > MAX_ASYNC_PAYLOAD) return answer(413, "RequestEntityTooLargeException", `${body.length} bytes exceeds ${MAX_ASYNC_PAYLOAD}`);
      const event = JSON.parse(body.toString("utf8") || "{}");
      out.accepted.push({ name, event });
      queue.push({ name, event, attempts: 0 });
      answer(202);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    clientConfig: { endpoint: url, region: "us-east-1", credentials: { accessKeyId: "testing", secretAccessKey: "testing" } },
    register: (name, handler) => void handlers.set(name, handler),
    ...out,
    async drain() {
      const now = queue;
      queue = [];
      await Promise.all(now.map(async (e) => {
        try {
          await handlers.get(e.name)!(e.event as never, context(e.name));
        } catch (err) {
          if (e.attempts + 1 < ATTEMPTS) queue.push({ ...e, attempts: e.attempts + 1 });
          else out.failed.push({ name: e.name, event: e.event, error: (err as Error).message });
        }
      }));
      return now.length;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
