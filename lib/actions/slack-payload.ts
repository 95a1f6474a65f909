/**
 * What a click on a Lookout message asks for, read from Slack's `block_actions` payload (the form field
 * `payload` of the interactivity request). Lookout's buttons carry the incident and the alert in their
 * value; any other click (a link button opens its URL and Slack still tells the endpoint) asks nothing.
 */
import * as z from "zod/mini";
import { describeIssue } from "../model/issues.js";
import { INCIDENT_ACTIONS, type IncidentActionKind } from "../model/incident-action.js";

const KIND_OF = new Map<string, IncidentActionKind>(Object.entries(INCIDENT_ACTIONS).map(([k, id]) => [id, k as IncidentActionKind]));

export interface IncidentActionRequest {
  kind: IncidentActionKind;
  incidentId: string;
  alertId: string;
  /** Who clicked: Slack's user id (`<@U…>` mentions them) and name. */
  user: { id: string; name: string };
  team?: string;
  /** Where the message is: the channel id and the message's ts. */
  channel: string;
  messageTs: string;
  /** When Slack says the click happened (its `action_ts`), unique per click. */
  actionTs: string;
}

const ButtonValue = z.object({ i: z.string().check(z.minLength(1), z.maxLength(200)), a: z.string().check(z.minLength(1), z.maxLength(200)) });
// Bounded as Slack bounds them (ids and timestamps are short, names at most 80 characters, an action_id
// 255 and a value 2,000): a payload past them is not Slack's, and is never stored or posted back.
const SlackId = z.string().check(z.minLength(1), z.maxLength(64));
const Name = z.optional(z.string().check(z.maxLength(200)));
const Payload = z.object({
  type: z.literal("block_actions"),
  user: z.object({ id: SlackId, username: Name, name: Name }),
  team: z.nullish(z.object({ id: SlackId })),
  container: z.optional(z.partial(z.object({ channel_id: SlackId, message_ts: SlackId }))),
  channel: z.optional(z.object({ id: SlackId })),
  message: z.optional(z.object({ ts: SlackId })),
  actions: z.array(z.object({ action_id: z.string().check(z.maxLength(255)), value: z.optional(z.string().check(z.maxLength(2_000))), action_ts: z.optional(z.string().check(z.maxLength(64))) })).check(z.minLength(1), z.maxLength(25)),
});

export type ParsedSlackAction =
  | { ok: true; request: IncidentActionRequest }
  | { ok: true; ignored: string }
  | { ok: false; problem: string };

/** The request a form-encoded interactivity body makes, or why it makes none (said at its path). */
export function parseSlackAction(rawBody: string): ParsedSlackAction {
  const field = new URLSearchParams(rawBody).get("payload");
  if (field === null) return { ok: false, problem: "payload: missing (Slack posts the interaction as the form field payload)" };
  let json: unknown;
  try {
    json = JSON.parse(field);
  } catch {
    return { ok: false, problem: "payload: not JSON" };
  }
  if ((json as { type?: unknown } | null)?.type !== "block_actions") return { ok: true, ignored: `an interaction of type ${JSON.stringify((json as { type?: unknown } | null)?.type)}, not a button` };
  const parsed = Payload.safeParse(json);
  if (!parsed.success) return { ok: false, problem: issueLine(parsed.error.issues[0]!, json) };
  const p = parsed.data;
  const action = p.actions[0]!;
  const kind = KIND_OF.get(action.action_id);
  if (!kind) return { ok: true, ignored: `action ${action.action_id}: not one of Lookout's (a link button, say)` };
  let value: z.infer<typeof ButtonValue>;
  try {
    value = ButtonValue.parse(JSON.parse(action.value ?? ""));
  } catch {
    return { ok: false, problem: `actions[0].value: not Lookout's {"i": incident, "a": alert}` };
  }
  const channel = p.container?.channel_id ?? p.channel?.id;
  const messageTs = p.container?.message_ts ?? p.message?.ts;
  if (!channel || !messageTs) return { ok: false, problem: "container: the message's channel_id and message_ts are missing" };
  return {
    ok: true,
    request: {
      kind, incidentId: value.i, alertId: value.a,
      user: { id: p.user.id, name: p.user.name ?? p.user.username ?? p.user.id },
      ...(p.team?.id ? { team: p.team.id } : {}),
      channel, messageTs, actionTs: action.action_ts ?? "",
    },
  };
}

function issueLine(issue: z.core.$ZodIssue, input: unknown): string {
  return `payload.${issue.path.join(".") || "(root)"}: ${describeIssue(issue, input)}`;
}
