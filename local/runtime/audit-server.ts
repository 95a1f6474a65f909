/**
 * The audit API's Lambda handler behind node:http, for `lookout audit --serve`: each request becomes
 * the API Gateway (payload 2.0) event the deployed function gets, and its answer what API Gateway makes
 * of it (local/runtime/http-api-payload.ts), so the page and the API answer here exactly as they do in the
 * cloud (lib/app/lambda/audit-api.ts). It listens on 127.0.0.1 only: there is no IAM in front of it,
 * and the trail is the operator's own.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { Context } from "aws-lambda";
import { Logger } from "@aws-lambda-powertools/logger";
import { createAuditApiHandler, defaultWebRoot, type AuditApiHandler } from "../../lib/app/lambda/audit-api.js";
import type { AuditReader } from "../../lib/audit/trail.js";
import { answerOf, httpApiEvent, newRequestId, readBody, writeAnswer } from "./http-api-payload.js";

export interface AuditServer {
  /** http://127.0.0.1:<port>/ */
  url: string;
  close(): Promise<void>;
}

const context = (): Context =>
  ({ functionName: "lookout-audit-api-local", awsRequestId: randomUUID(), getRemainingTimeInMillis: () => 30_000 }) as unknown as Context;

async function answer(handler: AuditApiHandler, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const requestId = newRequestId();
  const event = httpApiEvent(req, await readBody(req), { routeKey: "$default", accountId: "local", apiId: "local", requestId });
  // HEAD is GET without the body, as API Gateway does.
  if (req.method === "HEAD") event.requestContext.http.method = "GET";
  writeAnswer(res, answerOf(await handler(event, context())).answer, requestId);
}

/** Whether a request's Host header names this server: its listening address, 127.0.0.1, localhost or [::1], with its port. */
export function allowedHost(host: string | undefined, port: number, listening = "127.0.0.1"): boolean {
  return [listening, "127.0.0.1", "localhost", "[::1]"].some((name) => host === `${name}:${port}`);
}

/**
 * Refuses (403) a request whose Host is not this server, and says so; false when the Host is fine. Only
 * this machine's names: a page elsewhere that rebinds its own name to 127.0.0.1 (DNS rebinding) sends
 * its own Host, and must not read the audit trail.
 */
export function refusedHost(req: IncomingMessage, res: ServerResponse, port: number, listening: string): boolean {
  if (allowedHost(req.headers.host, port, listening)) return false;
  res.writeHead(403, { "content-type": "application/json; charset=utf-8" });
  res.end(JSON.stringify({ error: `Host ${JSON.stringify(req.headers.host ?? "")} is not this server: open http://127.0.0.1:${port}/` }));
  return true;
}

/** Serves the page and the audit API over `reader` until closed. `port` 0 picks a free one. */
export async function startAuditServer(opts: { reader: AuditReader; port: number; host?: string; webRoot?: string; now?: () => Date }): Promise<AuditServer> {
  const host = opts.host ?? "127.0.0.1";
  // Errors only: a request log on the terminal would bury the URL.
  const logger = new Logger({ serviceName: "lookout-audit-local", logLevel: "ERROR" });
  const handler = createAuditApiHandler({ reader: opts.reader, ...(opts.now ? { now: opts.now } : {}) }, logger, opts.webRoot ?? defaultWebRoot());
  let port = 0;
  const server = createServer((req, res) => {
    if (refusedHost(req, res, port, host)) return;
    answer(handler, req, res).catch((err: unknown) => {
      logger.error("audit request failed", { error: (err as Error).message });
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json; charset=utf-8" });
      res.end(JSON.stringify({ error: "the audit trail could not be read; try again" }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, host, () => resolve());
  });
  ({ port } = server.address() as AddressInfo);
  return {
    url: `http://${host}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
