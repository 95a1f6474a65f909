/**
 * Slack's interactivity endpoint on one machine (docs/actions.md): `lookout start` and `lookout run`
 * serve POST /slack/actions while they watch, when notify.slack_actions is configured. It is the
 * deployed function's handler (lib/app/lambda/slack-actions.ts) behind node:http, as the audit server
 * does it (local/runtime/http-api-payload.ts): the answer at once, then the click acted on in this process in
 * place of the function's asynchronous invocation of itself — tried three times, as Lambda would, and
 * said on the terminal when every attempt failed (what it did stays; the person's next click finishes it).
 * Slack reaches it through a tunnel to this machine; the demo's clicks and the local Slack's reach it
 * directly.
 */
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { Context } from "aws-lambda";
import { Logger } from "@aws-lambda-powertools/logger";
import { createSlackActionsHandler, type SlackActionEvent } from "../../lib/app/lambda/slack-actions.js";
import { actOn, type ActionOutcome, type ActionPorts } from "../../lib/actions/act.js";
import type { Log } from "../../lib/model/log.js";
import { answerOf, httpApiEvent, newRequestId, readBody, writeAnswer } from "./http-api-payload.js";

export const ACTIONS_PATH = "/slack/actions";

/** Slack's payloads are a few KB; API Gateway refuses past 10 MB. Past this, 413 without reading on. */
export const MAX_ACTION_BODY_BYTES = 1024 * 1024;

/** Lambda runs a failed asynchronous invocation twice more; so does this. */
const ATTEMPTS = 3;

export interface ActionsEndpoint {
  /** http://127.0.0.1:<port>/slack/actions */
  url: string;
  close(): Promise<void>;
}

export interface ActionsEndpointOptions {
  signingSecret: string;
  ports: ActionPorts;
  log: Log;
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** Told of each click acted on (the demo prints it). */
  onActed?: (event: SlackActionEvent, outcome: ActionOutcome) => void;
  /** Between attempts (tests shorten it). */
  retryDelayMs?: number;
}

const context = (): Context =>
  ({ functionName: "lookout-slack-actions-local", awsRequestId: randomUUID(), getRemainingTimeInMillis: () => 30_000 }) as unknown as Context;

export async function startActionsEndpoint(opts: ActionsEndpointOptions): Promise<ActionsEndpoint> {
  const host = opts.host ?? "127.0.0.1";
  const delay = opts.retryDelayMs ?? 1_000;
  const pending = new Set<Promise<void>>();
  // The handler logs refusals at WARN; the terminal shows them through `log`, not Powertools' JSON.
  const logger = new Logger({ serviceName: "lookout-slack-actions-local", logLevel: "SILENT" });
  const actLater = async (event: SlackActionEvent) => {
    for (let attempt = 1; ; attempt++) {
      try {
        const outcome = await actOn(event.request, opts.ports);
        opts.onActed?.(event, outcome);
        return;
      } catch (err) {
        if (attempt >= ATTEMPTS) {
          // What it did before failing stays (an acknowledgement, a mute); clicking again finishes it.
          opts.log.error("a Slack click could not be finished: what it did stays, and clicking again finishes it", {
            kind: event.request.kind, incident: event.request.incidentId, by: event.request.user.id, attempts: attempt, error: (err as Error).message,
          });
          return;
        }
        await new Promise((r) => setTimeout(r, delay * attempt));
      }
    }
  };
  const handler = createSlackActionsHandler({
    signingSecret: opts.signingSecret,
    ports: opts.ports,
    later: async (event) => {
      const run = actLater(event).finally(() => pending.delete(run));
      pending.add(run);
    },
  }, { logger });

  const server = createServer((req, res) => {
    const requestId = newRequestId();
    const refuse = (status: number, why: string) => {
      opts.log.warn("a request to the Slack endpoint was refused", { status, why });
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8", connection: "close" });
      res.end(why);
    };
    if (req.method !== "POST" || (req.url ?? "").split("?")[0] !== ACTIONS_PATH) return refuse(404, `only POST ${ACTIONS_PATH} is served here`);
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > MAX_ACTION_BODY_BYTES) return refuse(413, `a body of ${declared} bytes is not a Slack click (at most ${MAX_ACTION_BODY_BYTES})`);
    readBody(req, MAX_ACTION_BODY_BYTES)
      .then(async (body) => {
        if (!body) return refuse(413, `a body past ${MAX_ACTION_BODY_BYTES} bytes is not a Slack click`);
        const event = httpApiEvent(req, body, { routeKey: `POST ${ACTIONS_PATH}`, accountId: "local", apiId: "local", requestId });
        const answer = answerOf(await handler(event, context()));
        if (answer.answer.statusCode !== 200) opts.log.warn("a request to the Slack endpoint was refused", { status: answer.answer.statusCode, why: answer.answer.body.toString("utf8") });
        writeAnswer(res, answer.answer, requestId);
      })
      .catch((err: unknown) => {
        opts.log.error("the Slack endpoint failed", { error: (err as Error).message });
        if (!res.headersSent) refuse(500, "the click could not be taken; click again");
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}${ACTIONS_PATH}`,
    async close() {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      // Clicks being acted on finish before the store they write to is closed.
      await Promise.allSettled([...pending]);
    },
  };
}
