/**
 * The composition root of notifying: routes and the notifier's deps (settings, stores, channels), from
 * the configuration and the environment's senders — SES and Slack in the cloud (functions/notify-runtime.ts),
 * SMTP or files and Slack on one machine (local/pipeline.ts).
 */
import type { Config } from "../config/load.js";
import type { Route } from "../config/route-types.js";
import type { NotifierDeps } from "../notify/notifier.js";
import { channelResolver } from "../notify/receivers.js";
import type { EmailTransport, SlackSender } from "../notify/types.js";
import { DynamoNotifyStore } from "../store/notify-store.js";
import { DynamoIngestStore } from "../store/ingest-store.js";
import type { Adapters } from "./ingest.js";

export interface NotifyAdapters extends Omit<Adapters, "onCost"> {
  slack: SlackSender;
  /** Only when notify.email is configured. */
  emailTransport?: EmailTransport;
  /** The outbox health events go to; default a store on the same table. */
  outbox?: NotifierDeps["outbox"];
}

export interface NotifyServices {
  routes: readonly Route[];
  notifier: NotifierDeps;
}

export function composeNotify(config: Config, a: NotifyAdapters): NotifyServices {
  const now = a.now ?? (() => new Date());
  const store = { client: a.dynamodb, tableName: a.tableName, retentionMs: config.retentionMs, now };
  return {
    routes: config.routes,
    notifier: {
      settings: config.notify,
      store: new DynamoNotifyStore(store),
      outbox: a.outbox ?? new DynamoIngestStore(store),
      channelFor: channelResolver({
        resolveSecret: a.resolveSecret,
        slack: a.slack,
        ...(config.notify.email && a.emailTransport ? { email: { from: config.notify.email.from, transport: a.emailTransport } } : {}),
      }),
      now,
      log: a.log,
    },
  };
}
