/**
 * The whole pipeline on one machine, built from the same lib/ code as the Lambda handlers: DynamoDB
 * (embedded DynamoDB Local, or DYNAMODB_ENDPOINT), the platform client, the ingest store, the outbox
 * stream reader and the local bus.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import type { Config } from "../lib/config/load.js";
import { resolveSecret } from "../lib/config/load.js";
import { createPlatformClient, type PlatformApi, type PlatformClient } from "../lib/platform/client.js";
import type { CallCost } from "../lib/platform/cost.js";
import { DynamoIngestStore } from "../lib/store/ingest-store.js";
import { ensureTable } from "../lib/store/table.js";
import type { ServiceContext } from "../lib/alerts/build.js";
import type { LookoutEventEnvelope } from "../lib/alerts/event.js";
import type { OutboxPublishResult } from "../lib/alerts/outbox.js";
import type { Log, PollDeps } from "../lib/ingest/poll.js";
import { watchlist, type Watchlist } from "../lib/ingest/dispatch.js";
import { DynamoDispatchStore } from "../lib/store/dispatch-store.js";
import { LOCAL_CREDENTIALS, LOCAL_REGION, startDynamoDbLocal, type DynamoDbLocal } from "./dynamodb-local.js";
import { LocalBus } from "./bus.js";
import { DynamoNotifyStore } from "../lib/store/notify-store.js";
import { routeEvent } from "../lib/routes/match.js";
import { notifyEvent, type Delivery } from "../lib/notify/notifier.js";
import { channelResolver } from "../lib/notify/receivers.js";
import { slackSender } from "../lib/notify/slack/send.js";
import { fileTransport, smtpTransport } from "../lib/notify/email/transport.js";
import type { EmailTransport } from "../lib/notify/types.js";
import { OutboxStreamReader, outboxPublisher } from "./stream.js";
import { NotifyRetries } from "./notify-retries.js";

export const LOCAL_TABLE = "lookout";
export const LOCAL_BUS = "lookout";

export interface LocalPipeline {
  config: Config;
  client: PlatformClient & PlatformApi;
  dynamodb: DynamoDBClient;
  tableName: string;
  store: DynamoIngestStore;
  notifyStore: DynamoNotifyStore;
  bus: LocalBus;
  reader: OutboxStreamReader;
  /** Events whose delivery is unfinished: `notifyRetries.retry()` delivers them again (each pass of `lookout run`). */
  notifyRetries: NotifyRetries;
  pollDeps: PollDeps;
  /** The sources the configuration watches, as dispatch sees them. */
  watch: Watchlist;
  dispatch: DynamoDispatchStore;
  close(): Promise<void>;
}

export interface OpenOptions {
  env?: NodeJS.ProcessEnv;
  log: Log;
  now?: () => Date;
  onCost?: (cost: CallCost) => void;
  onPublished?: (result: OutboxPublishResult) => void;
  onEvent?: (envelope: LookoutEventEnvelope) => void;
  /** Told of every delivery decided for a published event (sent, muted, held, duplicate, failed). */
  onDelivery?: (detail: LookoutEventEnvelope["detail"], deliveries: Delivery[]) => void;
}

/** Email on one machine: SMTP when notify.email.smtp_url is set, else `.eml` files in `<data_dir>/outbox/`. */
async function localEmailTransport(config: Config, env: NodeJS.ProcessEnv): Promise<EmailTransport | undefined> {
  if (!config.notify.email) return undefined;
  if (config.notify.email.smtpUrlRef) return smtpTransport(await resolveSecret(config.notify.email.smtpUrlRef, env));
  return fileTransport(join(config.dataDir, "outbox"));
}

/** Names given in the configuration, by application id. */
export function configuredContexts(config: Config): Map<string, ServiceContext> {
  const out = new Map<string, ServiceContext>();
  for (const w of config.watch) {
    for (const a of w.applications) {
      const ctx: ServiceContext = {
        ...(a.name ? { name: a.name } : {}),
        ...(a.project ? { project: { id: a.project, name: a.project } } : {}),
        ...(a.environment ? { environment: { id: a.environment, name: a.environment } } : {}),
      };
      if (Object.keys(ctx).length) out.set(a.id, ctx);
    }
  }
  return out;
}

export interface LocalStore {
  dynamodb: DynamoDBClient;
  streams: DynamoDBStreamsClient;
  tableName: string;
  close(): Promise<void>;
}

/** The table on one machine: DYNAMODB_ENDPOINT, or DynamoDB Local with its data in `<data_dir>/dynamodb`. */
export async function openLocalStore(config: Pick<Config, "dataDir">, env: NodeJS.ProcessEnv = process.env): Promise<LocalStore> {
  mkdirSync(config.dataDir, { recursive: true });
  let embedded: DynamoDbLocal | undefined;
  const endpoint = env.DYNAMODB_ENDPOINT ?? (embedded = await startDynamoDbLocal({ dataDir: join(config.dataDir, "dynamodb") })).endpoint;
  const clientConfig = { endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const dynamodb = new DynamoDBClient(clientConfig);
  const streams = new DynamoDBStreamsClient(clientConfig);
  const tableName = env.LOOKOUT_TABLE ?? LOCAL_TABLE;
  const close = async () => {
    dynamodb.destroy();
    streams.destroy();
    await embedded?.stop();
  };
  try {
    await ensureTable(dynamodb, tableName);
  } catch (err) {
    await close();
    throw err;
  }
  return { dynamodb, streams, tableName, close };
}

export async function openLocalPipeline(config: Config, opts: OpenOptions): Promise<LocalPipeline> {
  const env = opts.env ?? process.env;
  const now = opts.now ?? (() => new Date());
  const token = await resolveSecret(config.platform.tokenRef, env);
  const { dynamodb, streams, tableName, close } = await openLocalStore(config, env);

  const client = createPlatformClient({
    baseUrl: config.platform.url,
    token,
    auth: config.platform.auth,
    timeoutMs: config.platform.timeoutMs,
    onCost: opts.onCost,
  });
  const store = new DynamoIngestStore({ client: dynamodb, tableName, retentionMs: config.retentionMs, now });
  const bus = new LocalBus({ dataDir: config.dataDir, now });
  if (opts.onEvent) bus.subscribe(opts.onEvent);

  // Routes drive the local bus exactly as they drive the deployed EventBridge rules.
  const notifyStore = new DynamoNotifyStore({ client: dynamodb, tableName, retentionMs: config.retentionMs, now });
  const emailTransport = await localEmailTransport(config, env);
  const channelFor = channelResolver({
    resolveSecret: (ref) => resolveSecret(ref, env),
    slack: slackSender(env.LOOKOUT_SLACK_API_URL ? { slackApiUrl: env.LOOKOUT_SLACK_API_URL } : {}),
    ...(config.notify.email && emailTransport ? { email: { from: config.notify.email.from, transport: emailTransport } } : {}),
  });
  const notifyRetries = new NotifyRetries({
    dataDir: config.dataDir,
    now,
    log: opts.log,
    notify: async (envelope) => {
      const decisions = routeEvent(envelope.detail, config.routes).map((d) => ({ route: d.route.name, receivers: d.receivers }));
      const deliveries = await notifyEvent(envelope.detail, decisions, {
        settings: config.notify, store: notifyStore, outbox: store, channelFor, now, log: opts.log,
      });
      opts.onDelivery?.(envelope.detail, deliveries);
      return deliveries;
    },
  });
  bus.subscribe(async (envelope) => void (await notifyRetries.deliver(envelope)));
  const reader = new OutboxStreamReader({
    dynamodb,
    streams,
    tableName,
    dataDir: config.dataDir,
    onRecords: outboxPublisher(bus, { busName: LOCAL_BUS }, opts.onPublished, store),
    onError: (err) => opts.log.error("publishing failed; will retry", { error: (err as Error).message }),
  });
  const pollDeps: PollDeps = {
    client,
    store,
    now,
    backfillWindowMs: config.backfillWindowMs,
    configured: configuredContexts(config),
    log: opts.log,
  };

  return {
    config, client, dynamodb, tableName, store, notifyStore, bus, reader, notifyRetries, pollDeps,
    watch: watchlist(config),
    dispatch: new DynamoDispatchStore({ client: dynamodb, tableName }),
    async close() {
      await reader.stop();
      await close();
    },
  };
}
