/**
 * Dispatch's asynchronous invocations (docs/architecture.md, "Polls and digests without queues"): the
 * poll function, a batch of a tick's polls an invocation (POLL_FUNCTION_NAME), and a notify function's
 * digest flush when alerts are held for its receivers or an escalation is due (NOTIFY_SLACK_FUNCTION_NAME,
 * NOTIFY_EMAIL_FUNCTION_NAME, NOTIFY_HTTP_FUNCTION_NAME). Lambda keeps an accepted event (202), retries a failed invocation twice
 * and then sends it to the function's on-failure destination, a dead-letter queue dispatch watches.
 */
import type { LambdaClient } from "@aws-sdk/client-lambda";
import type { PollRequest } from "../../model/poll.js";
import { pollBatches } from "../../dispatch/poll-batch.js";
import { type DigestFlusher, dueEscalationKinds, flushKinds, heldKinds, type PollSender } from "../dispatch-tick.js";
import { allReceivers } from "../../config/receivers.js";
import type { Config } from "../../config/load.js";
import { DynamoNotifyStore } from "../../store/notify-store.js";
import { FLUSH_DIGESTS, POLL_EVENT, type ReceiverKind } from "../lambda/messages.js";
import { requiredEnv } from "../env.js";
import { coldStart } from "./container.js";
import { cloudTable } from "./adapters.js";
import { invokeAsync } from "./invoke-async.js";
import { lambda } from "./clients/lambda.js";

/** The poll function, ten polls an invocation; the polls whose invocation Lambda refused or failed are returned, with why. */
export function lambdaPollSender(lambda: LambdaClient, functionName: string): PollSender {
  return {
    async send(polls, plannedAt) {
      const unsent: PollRequest[] = [];
      const reasons = new Set<string>();
      await Promise.all(pollBatches(polls).map(async (batch) => {
        const reason = await invokeAsync(lambda, functionName, { lookout: POLL_EVENT, planned_at: plannedAt, polls: batch });
        if (reason === undefined) return;
        unsent.push(...batch);
        reasons.add(reason);
      }));
      return { unsent, reasons: [...reasons] };
    },
  };
}

/** A notify function's digest flush, the event its schedule used to send. */
export function lambdaDigestFlusher(lambda: LambdaClient, functions: Record<ReceiverKind, string>): Pick<DigestFlusher, "flush"> {
  return {
    async flush(kind) {
      const reason = await invokeAsync(lambda, functions[kind], { lookout: FLUSH_DIGESTS });
      if (reason !== undefined) throw new Error(`the ${kind} notify function's digest flush was not sent: ${reason}`);
    },
  };
}

/** Dispatch's invocations in the cloud: the poll function, and the notify functions' flush of what is held for the configured receivers. */
export const cloudInvokes = coldStart((config: Config): { polls: PollSender; digests: DigestFlusher } => {
  const { dynamodb, tableName } = cloudTable();
  const held = new DynamoNotifyStore({ client: dynamodb, tableName, retentionMs: config.retentionMs });
  return {
    polls: lambdaPollSender(lambda, requiredEnv("POLL_FUNCTION_NAME")),
    digests: {
      held: flushKinds(heldKinds(held, allReceivers(config.routes, config.notify)), dueEscalationKinds(held, config.routes)),
      ...lambdaDigestFlusher(lambda, {
        slack: requiredEnv("NOTIFY_SLACK_FUNCTION_NAME"), email: requiredEnv("NOTIFY_EMAIL_FUNCTION_NAME"), http: requiredEnv("NOTIFY_HTTP_FUNCTION_NAME"),
      }),
    },
  };
});
