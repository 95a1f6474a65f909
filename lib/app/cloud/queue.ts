/** The SQS poll queue dispatch sends its planned polls to (POLL_QUEUE_URL). */
import { SendMessageBatchCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { PollRequest } from "../../ingest/poll.js";
import type { PollQueue } from "../lambda/dispatch.js";
import { requiredEnv } from "../env.js";
import { coldStart } from "./container.js";

/** SendMessageBatch takes at most ten entries. */
const BATCH = 10;

export function sqsPollQueue(sqs: SQSClient, queueUrl: string): PollQueue {
  return {
    async send(polls) {
      const failed: PollRequest[] = [];
      for (let i = 0; i < polls.length; i += BATCH) {
        const batch = polls.slice(i, i + BATCH);
        const res = await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: batch.map((p, j) => ({ Id: String(j), MessageBody: JSON.stringify(p) })),
          }),
        );
        for (const f of res.Failed ?? []) failed.push(batch[Number(f.Id)]!);
      }
      return failed;
    },
  };
}

export const cloudPollQueue = coldStart((): PollQueue => sqsPollQueue(new SQSClient({}), requiredEnv("POLL_QUEUE_URL")));
