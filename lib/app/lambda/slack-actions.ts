/**
 * The Slack interactivity endpoint as a Lambda handler (API Gateway HTTP API, payload 2.0, POST
 * /slack/actions, no IAM authorization: Slack signs its requests, lib/actions/slack-request.ts). Slack
 * wants an answer within three seconds, so the request is verified and answered at once, and the click
 * handed to an asynchronous invocation of this same function, which acts on it (lib/actions/act.ts);
 * Lambda retries that invocation if it fails, and a click acts once however often it is run.
 *
 *   POST /slack/actions (signed by Slack)        → 200 "" (acted on after), 401 unsigned/forged/stale, 400 not Slack's
 *   { "lookout": "slack-action", "request": … }  → the click acted on (the asynchronous invocation)
 *
 * Without notify.slack_actions configured there are no buttons to click: 404.
 */
import middy from "@middy/core";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import { answerSlack, slackRequestOf } from "../../actions/endpoint.js";
import type { ActionOutcome, ActionPorts } from "../../actions/act.js";
import type { IncidentActionRequest } from "../../actions/slack-payload.js";
import { loggerOr, resolveDeps, type Deps, type Telemetry } from "./telemetry.js";

export const SLACK_ACTION = "slack-action";
export interface SlackActionEvent {
  lookout: typeof SLACK_ACTION;
  request: IncidentActionRequest;
}

export interface SlackActionsDeps {
  /** Undefined when notify.slack_actions is not configured. */
  signingSecret: string | undefined;
  /** Given, or built on the first click acted on (the cloud's: lib/app/cloud/slack-actions.ts). */
  ports: Deps<ActionPorts>;
  /** Hands a click to an asynchronous invocation of this function (InvocationType Event). */
  later(event: SlackActionEvent): Promise<void>;
  now?: () => number;
}

const isAction = (e: unknown): e is SlackActionEvent => (e as SlackActionEvent | undefined)?.lookout === SLACK_ACTION;

const text = (statusCode: number, body = ""): APIGatewayProxyStructuredResultV2 => ({ statusCode, headers: { "content-type": "text/plain; charset=utf-8" }, body });

export function createSlackActionsHandler(deps: Deps<SlackActionsDeps>, given?: Partial<Telemetry>) {
  const logger = loggerOr("slack-actions", given?.logger);
  const base = async (event: APIGatewayProxyEventV2 | SlackActionEvent, _context: Context): Promise<APIGatewayProxyStructuredResultV2 | ActionOutcome> => {
    const d = await resolveDeps(deps);
    if (isAction(event)) {
      // Acting (the messages it renders, the mutes it scopes) is loaded on the first click acted on:
      // answering Slack, within its three seconds, needs none of it.
      const [{ actOn }, ports] = await Promise.all([import("../../actions/act.js"), resolveDeps(d.ports)]);
      const outcome = await actOn(event.request, ports);
      logger.info("acted on a click", { kind: event.request.kind, incident: event.request.incidentId, by: event.request.user.id, ...outcome });
      return outcome;
    }
    if (!d.signingSecret) return text(404, "Slack actions are not configured (notify.slack_actions)");
    const raw = event.body ?? "";
    const body = event.isBase64Encoded ? Buffer.from(raw, "base64").toString("utf8") : raw;
    const answer = answerSlack(slackRequestOf(event.headers ?? {}, body), d.signingSecret, (d.now ?? Date.now)());
    if (answer.status !== 200) {
      logger.warn("a request to the Slack endpoint was refused", { why: answer.why });
      return text(answer.status, answer.why);
    }
    if (answer.act) await d.later({ lookout: SLACK_ACTION, request: answer.act });
    logger.info("answered Slack", { why: answer.why });
    return text(200);
  };
  return middy(base).use(injectLambdaContext(logger));
}
