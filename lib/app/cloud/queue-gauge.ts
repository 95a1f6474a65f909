/**
 * Lookout's queues as dispatch samples them (WATCHED_QUEUES, written by infra/stack.ts): SQS
 * GetQueueAttributes, one request a queue. It replaces a CloudWatch alarm a queue (docs/deploy.md,
 * "Alarms"): twelve requests every five minutes cost cents a month, twelve alarms $1.20.
 */
import { GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import * as z from "zod/mini";
import { describeIssue } from "../../model/issues.js";
import type { QueueSample } from "../../alerts/health.js";
import type { QueueGauge } from "../lambda/dispatch.js";
import { coldStart } from "./container.js";
import { sqs } from "./clients/sqs.js";

const WatchedQueues = z.array(
  z.strictObject({ queue: z.string().check(z.minLength(1)), url: z.url(), dead_letter: z.boolean(), what: z.string() }),
);
export type WatchedQueue = z.infer<typeof WatchedQueues>[number];

/** WATCHED_QUEUES, checked: a malformed value names what is wrong, at the container's start. */
export function watchedQueues(raw: string): WatchedQueue[] {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    throw new Error(`environment variable WATCHED_QUEUES is not JSON: ${(err as Error).message}`);
  }
  const parsed = WatchedQueues.safeParse(json);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new Error(`environment variable WATCHED_QUEUES: at ${i.path.join(".") || "the top"}: ${describeIssue(i, json)}`);
  }
  return parsed.data;
}

/** A sample of every queue; when some cannot be read, rejects naming them, with the others' samples. */
export function sqsQueueGauge(sqs: SQSClient, queues: readonly WatchedQueue[]): QueueGauge {
  return {
    async sample() {
      const results = await Promise.allSettled(
        queues.map(async (q): Promise<QueueSample> => {
          // In flight counts too: a message that keeps failing spends most of its time invisible.
          const res = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: q.url, AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"] }));
          const count = (name: "ApproximateNumberOfMessages" | "ApproximateNumberOfMessagesNotVisible") => Number(res.Attributes?.[name] ?? 0) || 0;
          return { queue: q.queue, deadLetter: q.dead_letter, what: q.what, visible: count("ApproximateNumberOfMessages") + count("ApproximateNumberOfMessagesNotVisible") };
        }),
      );
      const samples = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
      const failed = results.flatMap((r, i) => (r.status === "rejected" ? [`${queues[i]!.queue}: ${(r.reason as Error)?.message ?? r.reason}`] : []));
      if (failed.length) throw Object.assign(new Error(`Lookout's queues could not be read: ${failed.join("; ")}`), { samples });
      return samples;
    },
  };
}

/**
 * None when WATCHED_QUEUES is not set (a stack without it; the queues then go unwatched). A malformed
 * value must not stop polling: the gauge then fails every sample with its error, after the polls.
 */
export const cloudQueueGauge = coldStart((): QueueGauge | undefined => {
  const raw = process.env.WATCHED_QUEUES;
  if (!raw) return undefined;
  try {
    return sqsQueueGauge(sqs, watchedQueues(raw));
  } catch (err) {
    return { sample: () => Promise.reject(err) };
  }
});
