/**
 * For a describe block of tests on EventBridge and SQS: one moto_server (local/runtime/moto.ts) with a
 * client of each on it, started before the block and stopped after it.
 */
import { afterAll, beforeAll } from "vitest";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { SQSClient } from "@aws-sdk/client-sqs";
import { type MotoServer, startMoto } from "../../local/runtime/moto.js";

export function motoBusAndQueues(): { readonly moto: MotoServer; readonly eb: EventBridgeClient; readonly sqs: SQSClient } {
  const on = {} as { moto: MotoServer; eb: EventBridgeClient; sqs: SQSClient };
  beforeAll(async () => {
    on.moto = await startMoto();
    on.eb = new EventBridgeClient(on.moto.clientConfig);
    on.sqs = new SQSClient(on.moto.clientConfig);
  });
  afterAll(async () => {
    on.eb?.destroy();
    on.sqs?.destroy();
    await on.moto?.stop();
  });
  return on;
}
