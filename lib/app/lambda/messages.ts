/**
 * The bodies of the SQS messages the functions read, checked with zod/mini. Not Powertools' parser
 * envelopes: they are built on zod's full API, whose `z` namespace brings every locale into the bundle
 * (measured: ~430 KB minified per function, against ~14 KB for these schemas with zod/mini).
 */
import * as z from "zod/mini";
import type { LookoutEventEnvelope } from "../../model/event.js";
import type { PollRequest } from "../../ingest/poll.js";
import { describeIssue, jsonPath } from "../../model/issues.js";

/** A body that is not JSON or not of the schema: `<what> message <path>: <problem>`. */
function parseBody<T>(body: string, schema: z.ZodMiniType, what: string, fail: new (message: string) => Error): T {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new fail(`${what} message is not JSON`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new fail(`${what} message ${jsonPath(issue.path)}: ${describeIssue(issue, json)}`);
  }
  return parsed.data as T;
}

const PollMessage = z.object({
  source: z.object({ kind: z.enum(["webhook", "deployment", "cluster"]), organizationId: z.string(), id: z.string() }),
  previousPollAt: z.optional(z.string()),
  outage: z.optional(z.object({ from: z.string(), to: z.string() })),
});

export class MalformedPollMessage extends Error {
  override name = "MalformedPollMessage";
}

export const parsePollMessage = (body: string): PollRequest => parseBody(body, PollMessage, "poll", MalformedPollMessage);

const NotifyMessage = z.object({
  route: z.string(),
  event: z.looseObject({ "detail-type": z.string(), source: z.literal("lookout"), detail: z.looseObject({ id: z.string(), kind: z.string() }) }),
});

export class MalformedNotifyMessage extends Error {
  override name = "MalformedNotifyMessage";
}

export const parseNotifyMessage = (body: string): { route: string; event: LookoutEventEnvelope } =>
  parseBody(body, NotifyMessage, "notify", MalformedNotifyMessage);
