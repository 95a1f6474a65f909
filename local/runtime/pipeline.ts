/**
 * The whole pipeline on one machine, composed by lib/app as the Lambda functions are (lib/app/cloud),
 * with this machine's adapters: DynamoDB (embedded DynamoDB Local, or DYNAMODB_ENDPOINT), env: secrets,
 * Slack and SMTP or `.eml` files, the outbox stream reader and the local bus.
 */
import { join } from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import type { Config } from "../../lib/config/load.js";
import { resolveSecret } from "../../lib/config/secrets.js";
import type { PlatformApi, PlatformClient } from "../../lib/platform/client.js";
import type { CallCost } from "../../lib/platform/cost.js";
import type { DynamoIngestStore } from "../../lib/store/ingest-store.js";
import { ensureTable } from "../../lib/store/table.js";
import type { LookoutEventEnvelope } from "../../lib/model/event.js";
import type { OutboxPublishResult } from "../../lib/alerts/outbox.js";
import type { Log } from "../../lib/model/log.js";
import type { PollDeps } from "../../lib/poll/poll.js";
import type { Watchlist } from "../../lib/model/dispatch.js";
import type { DynamoDispatchStore, DynamoFeedLoopStore } from "../../lib/store/dispatch-store.js";
import { LOCAL_CREDENTIALS, LOCAL_REGION, startDynamoDbLocal, type DynamoDbLocal } from "./dynamodb-local.js";
import { LocalBus } from "./local-bus.js";
import { ensureDataDir } from "./data-dir.js";
import type { NotifyStore } from "../../lib/model/notify-store.js";
import { escalationReceivers, type Route, type SlackReceiver } from "../../lib/config/route-types.js";
import { decideRoutes } from "../../lib/routes/match.js";
import { notifyEvent, type Delivery, type NotifierDeps, type RouteDecision } from "../../lib/notify/notifier.js";
import { slackSender, type SlackRetryPolicy } from "../../lib/notify/slack/sender.js";
import { httpSender } from "../../lib/notify/http/post.js";
import { httpChannels } from "../../lib/notify/http-channels.js";
import { composeIngest } from "../../lib/app/ingest.js";
import { composeNotify } from "../../lib/app/notify.js";
import { quarantinePort } from "../../lib/app/quarantine.js";
import { fileTransport, smtpTransport } from "../../lib/notify/email/transport.js";
import type { EmailTransport, SlackSender } from "../../lib/notify/types.js";
import { OutboxStreamReader, outboxPublisher } from "./stream.js";
import { NotifyRetries } from "./notify-retries.js";
import { checkPreviewRoute, PREVIEW_ROUTE } from "./preview-route.js";

export const LOCAL_TABLE = "lookout";
export const LOCAL_BUS = "lookout";

export interface LocalPipeline {
  config: Config;
  client: PlatformClient & PlatformApi;
  dynamodb: DynamoDBClient;
  tableName: string;
  store: DynamoIngestStore;
  notifyStore: NotifyStore;
  /** What each published event is routed by (the same as the notify functions'). */
  routes: readonly Route[];
  bus: LocalBus;
  reader: OutboxStreamReader;
  /** Events whose delivery is unfinished: `notifyRetries.retry()` delivers them again (each pass of `lookout run`). */
  notifyRetries: NotifyRetries;
  /** What delivers (routes aside): the run loop flushes storm digests with it. */
  notifier: NotifierDeps;
  pollDeps: PollDeps;
  /** The sources the configuration watches, as dispatch sees them. */
  watch: Watchlist;
  dispatch: DynamoDispatchStore;
  /** The change feed's loop's lease and reads. */
  loops: DynamoFeedLoopStore;
  /** What posts to Slack here: the terminal preview, or Slack's Web API (the Slack actions edit and reply with it). */
  slack: SlackSender;
  resolveSecret(ref: string): Promise<string>;
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
  /**
   * Where no Slack receiver is configured: every event also goes to this Slack sender as one Web API
   * channel (local/runtime/terminal-slack.ts prints it), through the same delivery core — threads, edits,
   * resolutions and storm digests show as Slack would show them.
   */
  preview?: SlackSender;
  /** The receivers' waits between attempts, Slack's and the HTTP receivers' (tests on a simulated clock shorten them). */
  slackRetry?: Partial<SlackRetryPolicy>;
  /** Waits in delivery, a follow-up's for its opening (tests on a simulated clock shorten them). */
  sleep?: (ms: number) => Promise<void>;
}

/** The terminal preview's receiver: a Web API channel whose token is never a real one. */
const PREVIEW_TOKEN_REF = "env:LOOKOUT_TERMINAL_PREVIEW";
export const PREVIEW_RECEIVER: SlackReceiver = { type: "slack", form: "api", channel: "#preview", tokenRef: PREVIEW_TOKEN_REF };

/** Secrets from the environment; the preview's token, where there is a preview, is never a real one. */
export const previewAwareSecrets = (preview: SlackSender | undefined, env: NodeJS.ProcessEnv) => (ref: string): Promise<string> =>
  preview && ref === PREVIEW_TOKEN_REF ? Promise.resolve("terminal-preview") : resolveSecret(ref, env);

/**
 * Email on one machine: SMTP when notify.email.smtp_url is set, else `.eml` files in `<data_dir>/outbox/`,
 * named and dated by the pipeline's clock (the demo's runs faster than the wall's: its mail is dated as its events).
 */
async function localEmailTransport(config: Config, env: NodeJS.ProcessEnv, now: () => Date): Promise<EmailTransport | undefined> {
  if (!config.notify.email) return undefined;
  if (config.notify.email.smtpUrlRef) return smtpTransport(await resolveSecret(config.notify.email.smtpUrlRef, env));
  return fileTransport(join(config.dataDir, "outbox"), { now });
}

export interface LocalStore {
  dynamodb: DynamoDBClient;
  streams: DynamoDBStreamsClient;
  tableName: string;
  close(): Promise<void>;
}

/** The table on one machine: DYNAMODB_ENDPOINT, or DynamoDB Local with its data in `<data_dir>/dynamodb`. */
export async function openLocalStore(config: Pick<Config, "dataDir"> & Partial<Pick<Config, "source">>, env: NodeJS.ProcessEnv = process.env): Promise<LocalStore> {
  ensureDataDir(config.dataDir, config.source);
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
  // The preview's route name is this runner's: a route that takes it fails here, before anything starts.
  checkPreviewRoute(config);
  const resolve = previewAwareSecrets(opts.preview, env);
  // The token first: a missing one is reported before DynamoDB Local is started.
  await resolve(config.platform.tokenRef);
  const { dynamodb, streams, tableName, close } = await openLocalStore(config, env);
  const adapters = { dynamodb, tableName, resolveSecret: resolve, log: opts.log, now };
  // The preview is one more Slack channel, shown every event under its own route name.
  const everyEventTo = opts.preview ? [{ route: PREVIEW_ROUTE, receivers: [PREVIEW_RECEIVER] }] : [];
  const slack = opts.preview ?? slackSender({ ...(env.LOOKOUT_SLACK_API_URL ? { slackApiUrl: env.LOOKOUT_SLACK_API_URL } : {}), ...(opts.slackRetry ? { retry: opts.slackRetry } : {}) });
  let services;
  try {
    const ingest = await composeIngest(config, { ...adapters, ...(opts.onCost ? { onCost: opts.onCost } : {}) });
    const emailTransport = await localEmailTransport(config, env, now);
    const notify = composeNotify(config, {
      ...adapters,
      outbox: ingest.store,
      slack,
      ...(emailTransport ? { emailTransport } : {}),
      httpChannel: httpChannels({
        sender: httpSender(opts.slackRetry ? { retry: opts.slackRetry } : {}),
        ...(env.LOOKOUT_PAGERDUTY_URL ? { pagerDutyUrl: env.LOOKOUT_PAGERDUTY_URL } : {}),
      }),
      ...(opts.sleep ? { sleep: opts.sleep } : {}),
      everyEventTo,
    });
    services = { ...ingest, ...notify };
  } catch (err) {
    await close();
    throw err;
  }
  const { store, routes, notifier } = services;
  const bus = new LocalBus({ dataDir: config.dataDir, now });
  if (opts.onEvent) bus.subscribe(opts.onEvent);

  // Routes drive the local bus exactly as they drive the deployed EventBridge rules.
  const notifyRetries = new NotifyRetries({
    dataDir: config.dataDir,
    now,
    log: opts.log,
    notify: async (envelope) => {
      // Each route with whom its escalation pages, told of the close of an incident it escalated.
      const decisions: RouteDecision[] = decideRoutes(envelope.detail, routes, config.notify).map((d) => ({
        ...d, escalateTo: escalationReceivers(routes.find((r) => r.name === d.route)),
      }));
      decisions.push(...everyEventTo);
      const deliveries = await notifyEvent(envelope.detail, decisions, notifier);
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
    onRecords: outboxPublisher(bus, { busName: LOCAL_BUS }, opts.onPublished, quarantinePort(config, { dynamodb, tableName, now })),
    onError: (err) => opts.log.error("publishing failed; will retry", { error: (err as Error).message }),
  });

  return {
    config, client: services.client, dynamodb, tableName, store, notifyStore: notifier.store, routes, notifier, bus, reader, slack, resolveSecret: resolve,
    notifyRetries, pollDeps: services.pollDeps, watch: services.watch, dispatch: services.dispatch, loops: services.loops,
    async close() {
      await reader.stop();
      await close();
    },
  };
}
