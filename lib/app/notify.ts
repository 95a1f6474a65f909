/**
 * The composition root of notifying: routes and the notifier's deps (settings, stores, channels), from
 * the configuration and the senders the environment has — Slack and SES in the cloud (lib/app/cloud/slack.ts
 * and cloud/email.ts, each with only what its function sends), Slack and SMTP or files on one machine
 * (local/runtime/pipeline.ts).
 */
import type { Config } from "../config/load.js";
import type { Route } from "../config/route-types.js";
import type { NotifierDeps } from "../notify/notifier.js";
import { channelResolver, type ReceiverRuntime } from "../notify/channel-resolver.js";
import { presenterFor } from "../notify/presentation.js";
import { SlackDeliveryError, type EmailTransport, type SlackSender } from "../notify/types.js";
import type { HttpChannelBuilder } from "../notify/http-channels.js";
import { DynamoNotifyStore } from "../store/notify-store.js";
import { DynamoIngestStore } from "../store/ingest-store.js";
import type { Adapters } from "./adapters.js";

export interface NotifyAdapters extends Omit<Adapters, "onCost"> {
  /** Absent where nothing sends to Slack (the email function whose fallback is not Slack). */
  slack?: SlackSender;
  /** Only when notify.email is configured, and where something sends email. */
  emailTransport?: EmailTransport;
  /** PagerDuty, generic webhooks and Teams (lib/notify/http-channels.ts): one machine, and the notify-http function. */
  httpChannel?: HttpChannelBuilder;
  /** The Slack and email channels it sends to on every message; the others load on first use (lib/notify/channel-resolver.ts). */
  channels?: ReceiverRuntime["channels"];
  /** The outbox health events go to; default a store on the same table. */
  outbox?: NotifierDeps["outbox"];
  /** Waits in delivery; default a timer (tests on a simulated clock shorten them). */
  sleep?: NotifierDeps["sleep"];
  /** Receivers shown every event besides the routes' (one machine's terminal preview). */
  everyEventTo?: NotifierDeps["everyEventTo"];
}

export interface NotifyServices {
  routes: readonly Route[];
  notifier: NotifierDeps;
}

/** For a process that was built without Slack: the packaging left it out because no receiver it serves is on Slack. */
const packagedWithoutSlack = () => Promise.reject(new SlackDeliveryError("this function was packaged without Slack sending", false));
const noSlack: SlackSender = { post: packagedWithoutSlack, findPosted: packagedWithoutSlack, update: packagedWithoutSlack };

export function composeNotify(config: Config, a: NotifyAdapters): NotifyServices {
  const now = a.now ?? (() => new Date());
  const store = { client: a.dynamodb, tableName: a.tableName, retentionMs: config.retentionMs, now };
  return {
    routes: config.routes,
    notifier: {
      settings: config.notify,
      routes: config.routes,
      store: new DynamoNotifyStore(store),
      outbox: a.outbox ?? new DynamoIngestStore(store),
      channelFor: channelResolver({
        resolveSecret: a.resolveSecret,
        slack: a.slack ?? noSlack,
        ...(config.notify.slackActions ? { slackActions: true } : {}),
        ...(a.httpChannel ? { httpChannel: a.httpChannel } : {}),
        ...(a.channels ? { channels: a.channels } : {}),
        ...(config.notify.email && a.emailTransport ? { email: { from: config.notify.email.from, transport: a.emailTransport } } : {}),
      }),
      now,
      log: a.log,
      present: presenterFor(config),
      ...(a.sleep ? { sleep: a.sleep } : {}),
      ...(a.everyEventTo ? { everyEventTo: a.everyEventTo } : {}),
    },
  };
}
