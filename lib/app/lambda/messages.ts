/**
 * The events and the bodies of the SQS messages the functions read, checked with zod/mini. Not Powertools' parser
 * envelopes: they are built on zod's full API, whose `z` namespace brings every locale into the bundle
 * (measured: ~430 KB minified per function, against ~14 KB for these schemas with zod/mini).
 */
import * as z from "zod/mini";
import type { LookoutEventEnvelope } from "../../model/event.js";
import type { PollRequest } from "../../model/poll.js";
import { describeIssue, jsonPath } from "../../model/issues.js";

/** A value of the schema, or `fail`: `<what> <path>: <problem>` (the path from `$`, or from `root`). */
function checked<T>(value: unknown, schema: z.ZodMiniType, what: string, fail: new (message: string) => Error, root = "$"): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new fail(`${what} ${root}${jsonPath(issue.path).slice(1)}: ${describeIssue(issue, value)}`);
  }
  return parsed.data as T;
}

/** A body that is not JSON or not of the schema: `<what> message <path>: <problem>`. */
function parseBody<T>(body: string, schema: z.ZodMiniType, what: string, fail: new (message: string) => Error): T {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new fail(`${what} message is not JSON`);
  }
  return checked(json, schema, `${what} message`, fail);
}

const PollMessage = z.object({
  source: z.object({ kind: z.enum(["webhook", "deployment", "cluster"]), organizationId: z.string(), id: z.string() }),
  previousPollAt: z.optional(z.string()),
  outage: z.optional(z.object({ from: z.string(), to: z.string() })),
  large: z.optional(z.boolean()),
});

export class MalformedPollMessage extends Error {
  override name = "MalformedPollMessage";
}

export const parsePollMessage = (body: string): PollRequest => parseBody(body, PollMessage, "poll", MalformedPollMessage);

export { kindOf, type ReceiverKind } from "../../model/notify-store.js";

/** What dispatch invokes the poll function with: a batch of a tick's polls (lib/app/cloud/invoke.ts). */
export const POLL_EVENT = "poll";
export interface PollEvent {
  lookout: typeof POLL_EVENT;
  /** When dispatch planned these polls (epoch ms): a retry of the invocation comes a minute later at the soonest. */
  planned_at?: number;
  polls: PollRequest[];
}

/** When a poll event's polls were planned, if it says. */
export const plannedAtOf = (event: unknown): number | undefined => {
  const at = (event as Partial<PollEvent> | null)?.planned_at;
  return typeof at === "number" && Number.isFinite(at) ? at : undefined;
};

/** The polls of a poll event, each checked; a malformed event or poll says which and where. */
export function parsePollEvent(event: unknown): PollRequest[] {
  const e = event as Partial<PollEvent> | null;
  if (e?.lookout !== POLL_EVENT || !Array.isArray(e.polls)) throw new MalformedPollMessage(`poll event: not {"lookout": "${POLL_EVENT}", "polls": [...]}`);
  return e.polls.map((p, i) => checked<PollRequest>(p, PollMessage, "poll event", MalformedPollMessage, `$.polls[${i}]`));
}

/** What dispatch invokes a notify function with when alerts are held for its receivers: flush their digests. */
export const FLUSH_DIGESTS = "flush-digests";
export interface FlushDigestsEvent {
  lookout: typeof FLUSH_DIGESTS;
}

const NotifyMessage = z.object({
  route: z.string(),
  event: z.looseObject({ "detail-type": z.string(), source: z.literal("lookout"), detail: z.looseObject({ id: z.string(), kind: z.string() }) }),
});

export class MalformedNotifyMessage extends Error {
  override name = "MalformedNotifyMessage";
}

export const parseNotifyMessage = (body: string): { route: string; event: LookoutEventEnvelope } =>
  parseBody(body, NotifyMessage, "notify", MalformedNotifyMessage);
