/** What the notify functions need in the cloud: routes, the notify store, Slack and SES, built once. */
import { Logger } from "@aws-lambda-powertools/logger";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SESv2Client } from "@aws-sdk/client-sesv2";
import { DynamoNotifyStore } from "../lib/store/notify-store.js";
import { DynamoIngestStore } from "../lib/store/ingest-store.js";
import { channelResolver } from "../lib/notify/receivers.js";
import { slackSender } from "../lib/notify/slack/send.js";
import { sesTransport } from "../lib/notify/email/transport.js";
import type { NotifyHandlerDeps } from "./notify.js";
import { asLog, cloudSecret, loadBundledConfig, requiredEnv } from "./runtime.js";

let deps: Promise<NotifyHandlerDeps> | undefined;

export function notifyRuntime(logger: Logger): Promise<NotifyHandlerDeps> {
  deps ??= (async () => {
    const config = loadBundledConfig();
    const tableName = requiredEnv("TABLE_NAME");
    const dynamodb = new DynamoDBClient({});
    const now = () => new Date();
    return {
      routes: config.routes,
      notifier: {
        settings: config.notify,
        store: new DynamoNotifyStore({ client: dynamodb, tableName, retentionMs: config.retentionMs }),
        outbox: new DynamoIngestStore({ client: dynamodb, tableName, retentionMs: config.retentionMs }),
        channelFor: channelResolver({
          resolveSecret: cloudSecret,
          slack: slackSender(),
          ...(config.notify.email ? { email: { from: config.notify.email.from, transport: sesTransport(new SESv2Client({})) } } : {}),
        }),
        now,
        log: asLog(logger),
      },
    };
  })().catch((err) => {
    deps = undefined;
    throw err;
  });
  return deps;
}
