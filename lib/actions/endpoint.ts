/**
 * The interactivity endpoint's answer to one request from Slack, decided before anything is done
 * (docs/actions.md): Slack wants an answer within three seconds, so the endpoint answers at once and
 * the caller acts after (the Lambda hands the request to an asynchronous invocation of itself; one
 * machine acts in process). A request Slack did not sign is refused with 401, one whose payload is not
 * Slack's with 400, each with a line that says why; a click Lookout has no button for is answered 200.
 */
import { parseSlackAction, type IncidentActionRequest } from "./slack-payload.js";
import { verifySlackRequest, type SlackRequest } from "./slack-request.js";

export interface EndpointAnswer {
  status: 200 | 400 | 401;
  /** A line for the log (and, on a refusal, for the caller): never the body, which may hold anything. */
  why: string;
  /** What to do once answered. */
  act?: IncidentActionRequest;
}

/** Header names as HTTP gives them, any case. */
export function slackRequestOf(headers: Readonly<Record<string, string | undefined>>, rawBody: string): SlackRequest {
  const header = (name: string) => Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  return { timestamp: header("x-slack-request-timestamp"), signature: header("x-slack-signature"), rawBody };
}

export function answerSlack(req: SlackRequest, signingSecret: string, nowMs: number): EndpointAnswer {
  const verdict = verifySlackRequest(req, signingSecret, nowMs);
  if (!verdict.ok) return { status: 401, why: `refused: ${verdict.reason}: ${verdict.detail}` };
  const parsed = parseSlackAction(req.rawBody);
  if (!parsed.ok) return { status: 400, why: `refused: ${parsed.problem}` };
  if ("ignored" in parsed) return { status: 200, why: `nothing to do: ${parsed.ignored}` };
  const r = parsed.request;
  return { status: 200, why: `${r.kind} on incident ${r.incidentId} by ${r.user.id}`, act: r };
}
