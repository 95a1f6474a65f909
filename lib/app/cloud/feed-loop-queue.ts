/** The change feed's loop's queue in the cloud (FEED_LOOP_QUEUE_URL, infra/queues.yml): a tick is a message, sent with a delay. */
import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { FEED_TICK_MESSAGE, type FeedLoopQueue } from "../lambda/feed-tick.js";
import { requiredEnv } from "../env.js";
import { sqs as containerSqs } from "./clients/sqs.js";

export function sqsFeedLoopQueue(sqs: SQSClient, queueUrl: string): FeedLoopQueue {
  return {
    async tick(delayMs) {
      // SQS delays by whole seconds, at most 900.
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(FEED_TICK_MESSAGE), DelaySeconds: Math.min(900, Math.ceil(delayMs / 1000)) }));
    },
  };
}

export const cloudFeedLoopQueue = (sqs: SQSClient = containerSqs): FeedLoopQueue => sqsFeedLoopQueue(sqs, requiredEnv("FEED_LOOP_QUEUE_URL"));
