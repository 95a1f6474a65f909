/**
 * `lookout cloud-local` on one machine (docs/cloud-local.md): DynamoDB Local, moto_server, a local
 * Slack and, by default, the platform simulator with its demo; the stack packaged as `serverless
 * package` packages it, with a configuration that watches the simulator (or the one given); then the
 * packaged stack running on them (stack.ts). Email goes to SES on moto_server and is copied out as
 * `.eml` files; Slack goes to the local Slack, which the command prints.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import YAML from "yaml";
import { packageStack, ROOT } from "../../scripts/package.js";
import { loadConfigFile, type Config } from "../../lib/config/load.js";
import { deployProblems, deployRefusal } from "../../lib/config/deployable.js";
import { receiverSecretRefs } from "../../lib/config/routes.js";
import { allReceivers } from "../../lib/config/receivers.js";
import { startPagerDutyReceiver, startTeamsReceiver, startWebhookReceiver, type PagerDutyReceiver, type TeamsReceiver, type WebhookReceiver } from "../receivers/http-receivers.js";
import { startDynamoDbLocal, type DynamoDbLocal } from "../runtime/dynamodb-local.js";
import { MOTO_ACCOUNT, MOTO_REGION, type MotoServer, startMoto } from "../runtime/moto.js";
import { type ReceivedSlackMessage, type SlackReceiver, startSlackReceiver } from "../receivers/slack-receiver.js";
import type { Simulator } from "../simulator/index.js";
import { readPackagedTemplate } from "./template.js";
import { CloudLocalStack } from "./stack.js";
import type { Activity } from "./call-function.js";
import { PreflightError } from "../runtime/preflight.js";

export const CLOUD_LOCAL_STAGE = "local";
/** The generated configuration, inside the packaged copy of the project (it must lie in the service). */
const GENERATED_CONFIG = "lookout.cloud-local.yaml";
/** The bot token the local Slack accepts for the Web API form. */
const LOCAL_SLACK_TOKEN = "xoxb-cloud-local";
/** What the local PagerDuty takes as a routing key (PagerDuty's are 32 characters), and the webhook's signing secret. */
export const LOCAL_PAGERDUTY_KEY = "CL0UDL0CALR0UT1NGKEY0123456789ab";
export const LOCAL_WEBHOOK_SECRET = "cloud-local-webhook-secret";

/** The local PagerDuty, webhook receiver and Teams, started when the configuration names such receivers. */
export interface LocalHttpReceivers {
  pagerduty: PagerDutyReceiver;
  webhook: WebhookReceiver;
  teams: TeamsReceiver;
}
const PLATFORM_TOKEN_REF = "ssm:/lookout/cloud-local/platform-token";
const SIGNING_SECRET_REF = "ssm:/lookout/cloud-local/slack-signing-secret";
/** The signing secret the local Slack signs its clicks with (docs/actions.md), seeded for any configuration that names one. */
export const LOCAL_SLACK_SIGNING_SECRET = "cloud-local-signing-secret";

export interface CloudLocalOptions {
  /** Where DynamoDB Local keeps its files, the task roots, the functions' logs and the `.eml` copies. */
  workDir: string;
  /** The platform the generated configuration watches (the simulator); or `configFile`. */
  simulator?: Simulator;
  /** A configuration to package as it is (its platform, its sources); its receivers go to the local Slack and SES. */
  configFile?: string;
  /** The configuration to generate for the simulator (default: the demo's, every failure to #oncall and by email). */
  demoConfig?: (sim: Simulator) => Record<string, unknown>;
  /** An already running DynamoDB Local (tests share the run's); default one of its own in workDir. */
  dynamodbEndpoint?: string;
  /** Run on its own (the command), or only when told (tests): see CloudLocalStackOptions.continuous. */
  continuous?: boolean;
  asyncRetryDelaysMs?: readonly number[];
  activity?: Activity;
  onSlack?: (m: ReceivedSlackMessage, how: "posted" | "updated") => void;
}

export interface CloudLocal {
  stack: CloudLocalStack;
  config: Config;
  slack: SlackReceiver;
  /** When the configuration names PagerDuty, webhook or Teams receivers (local/receivers/http-receivers.ts). */
  http?: LocalHttpReceivers;
  moto: MotoServer;
  /** The SES messages moto_server accepted, as raw MIME, oldest first (also written to workDir/outbox). */
  emails(): Promise<Array<{ raw: string; destinations: string[] }>>;
  /** The packaged template and zips. */
  packageDir: string;
  stop(): Promise<void>;
}

/** The demo's configuration, deploy-shaped: its secrets in SSM, Slack in the Web API form (threads, edits), email through SES. */
export function demoCloudConfig(sim: Simulator): Record<string, unknown> {
  return {
    platform: { url: sim.url, token: PLATFORM_TOKEN_REF, auth: "token" },
    watch: [{ organization: sim.ids.organizationId, webhooks: sim.ids.webhookIds, clusters: sim.ids.clusterIds, applications: sim.ids.applicationIds }],
    backfill_window: "15m",
    routes: [{
      name: "oncall",
      match: { kind: ["deployment", "webhook_delivery", "cluster_log"] },
      slack: { channel: "#oncall", token: "ssm:/lookout/cloud-local/slack-bot-token" },
      email: { to: ["oncall@example.com"] },
    }],
    notify: { email: { from: "lookout@example.com" }, digest_within: "1m", slack_actions: { signing_secret: SIGNING_SECRET_REF } },
  };
}

/** The platform token a rehearsal seeds in SSM or Secrets Manager: the simulator's, or PLATFORM_API_TOKEN. */
function rehearsalToken(config: Config, sim: Simulator | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const ref = config.platform.tokenRef;
  if (!ref || !/^(ssm|secretsmanager):/.test(ref)) return undefined;
  const token = sim?.apiToken ?? env.PLATFORM_API_TOKEN;
  if (!token) throw new PreflightError(`platform.token: ${ref} is read from SSM or Secrets Manager; give its value in PLATFORM_API_TOKEN for the rehearsal`);
  return token;
}

/**
 * What can be said of a configuration before anything starts (the emulators, the packaging): it loads
 * (every bad field with its path in the file given, not in the packaged copy), deploying would not
 * refuse it (an `env:` secret, a digest_within under 1m, …: the packaging would), and its platform
 * token can be seeded.
 */
export function checkRehearsalConfig(configFile: string, env: NodeJS.ProcessEnv = process.env): Config {
  const config = loadConfigFile(configFile, {});
  const refused = deployRefusal(configFile, deployProblems(config), "cloud-local rehearses the deployed stack: deploying refuses it");
  if (refused) throw refused;
  rehearsalToken(config, undefined, env);
  return config;
}

/** What the local stand-ins answer for each secret the configuration names. */
function localSecrets(config: Config, slack: SlackReceiver, http: LocalHttpReceivers | undefined, sim: Simulator | undefined, env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  const token = rehearsalToken(config, sim, env);
  if (token) out[config.platform.tokenRef!] = token;
  const signing = config.notify.slackActions?.signingSecretRef;
  if (signing && /^(ssm|secretsmanager):/.test(signing)) out[signing] = LOCAL_SLACK_SIGNING_SECRET;
  for (const { field, ref } of receiverSecretRefs(config.routes, config.notify)) {
    if (!/^(ssm|secretsmanager):/.test(ref)) continue;
    const name = ref.replace(/\W+/g, "-");
    // The HTTP receivers' secrets: URLs on their local stand-ins, the key and secret those accept.
    const local = http && /\.(pagerduty|webhook|teams)(\[\d+\])?\./.test(field)
      ? field.endsWith(".routing_key") ? LOCAL_PAGERDUTY_KEY
        : field.endsWith(".signing_secret") ? LOCAL_WEBHOOK_SECRET
          : field.includes(".teams") ? http.teams.workflowUrl(name) : http.webhook.hookUrl(name)
      : undefined;
    // A webhook's secret is a URL on the local Slack; a bot token the one it accepts (LOOKOUT_SLACK_API_URL points the Web API there).
    out[ref] = local ?? (field.endsWith(".webhook_url") ? slack.webhookUrl(name) : LOCAL_SLACK_TOKEN);
  }
  return out;
}

export async function startCloudLocal(opts: CloudLocalOptions): Promise<CloudLocal> {
  const workDir = resolve(opts.workDir);
  mkdirSync(workDir, { recursive: true });
  const started: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of started.reverse()) await stop().catch(() => undefined);
  };
  try {
    let ddb: DynamoDbLocal | undefined;
    if (!opts.dynamodbEndpoint) {
      ddb = await startDynamoDbLocal({ dataDir: join(workDir, "dynamodb") });
      started.push(() => ddb!.stop());
    }
    const moto = await startMoto();
    started.push(() => moto.stop());
    const slack = await startSlackReceiver(opts.onSlack ? { onMessage: opts.onSlack } : {});
    started.push(() => slack.close());

    // The configuration to package: generated for the simulator, or the one given, copied into the package.
    const text = opts.configFile
      ? readFileSync(opts.configFile, "utf8")
      : YAML.stringify((opts.demoConfig ?? demoCloudConfig)(opts.simulator ?? missing("a simulator or a configuration file")));
    const configName = opts.configFile ? relative(ROOT, resolve(opts.configFile)) : GENERATED_CONFIG;
    const inProject = opts.configFile && !configName.startsWith("..");
    const packaged = await packageStack({
      isolated: true,
      stage: CLOUD_LOCAL_STAGE,
      config: inProject ? configName : GENERATED_CONFIG,
      ...(inProject ? {} : { files: { [GENERATED_CONFIG]: text } }),
    });
    started.push(async () => rmSync(packaged.serviceDir, { recursive: true, force: true }));
    const config = loadConfigFile(join(packaged.serviceDir, inProject ? configName : GENERATED_CONFIG), {});
    let http: LocalHttpReceivers | undefined;
    if (allReceivers(config.routes, config.notify).some((r) => r.type !== "slack" && r.type !== "email")) {
      const [pagerduty, webhook, teams] = await Promise.all([startPagerDutyReceiver(), startWebhookReceiver({ secret: LOCAL_WEBHOOK_SECRET }), startTeamsReceiver()]);
      http = { pagerduty, webhook, teams };
      started.push(async () => void (await Promise.all([pagerduty.close(), webhook.close(), teams.close()])));
    }

    const template = readPackagedTemplate(packaged.template);
    const stack = new CloudLocalStack({
      template,
      packageDir: packaged.outDir,
      account: { region: MOTO_REGION, accountId: MOTO_ACCOUNT, stackName: `lookout-${CLOUD_LOCAL_STAGE}` },
      emulators: { dynamodb: opts.dynamodbEndpoint ?? ddb!.endpoint, moto: moto.endpoint },
      workDir,
      secrets: localSecrets(config, slack, http, opts.simulator, process.env),
      sesIdentities: config.notify.email?.from ? [config.notify.email.from] : [],
      env: { LOOKOUT_SLACK_API_URL: slack.apiUrl, ...(http ? { LOOKOUT_PAGERDUTY_URL: http.pagerduty.url } : {}) },
      ...(opts.continuous !== undefined ? { continuous: opts.continuous } : {}),
      ...(opts.asyncRetryDelaysMs ? { asyncRetryDelaysMs: opts.asyncRetryDelaysMs } : {}),
      ...(opts.activity ? { activity: opts.activity } : {}),
    });
    started.push(() => stack.stop());
    await stack.start();

    const outbox = join(workDir, "outbox");
    mkdirSync(outbox, { recursive: true });
    let copied = 0;
    const emails = async () => {
      const res = await fetch(`${moto.endpoint}/moto-api/data.json`);
      const data = (await res.json()) as { ses?: { RawMessage?: Array<{ id: string; raw_data: string; destinations: string[] }> } };
      const all = (data.ses?.RawMessage ?? []).map((m) => ({ raw: asSesDelivers(m.raw_data, m.id, MOTO_REGION), destinations: m.destinations }));
      for (; copied < all.length; copied++) writeFileSync(join(outbox, `${String(copied + 1).padStart(4, "0")}.eml`), all[copied]!.raw);
      return all;
    };
    return { stack, config, slack, ...(http ? { http } : {}), moto, emails, packageDir: packaged.outDir, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/**
 * A message as SES delivers it: SES gives it a Message-ID of its own in place of the sender's, the one
 * its answer names and follow-ups reply to (moto keeps the sender's), so mail clients thread it.
 */
export function asSesDelivers(raw: string, sesMessageId: string, region: string): string {
  const id = `<${sesMessageId}@${region === "us-east-1" ? "email" : region}.amazonses.com>`;
  const end = raw.search(/\r?\n\r?\n/);
  const head = end < 0 ? raw : raw.slice(0, end);
  // The header and its folded continuation lines.
  const replaced = head.replace(/^Message-ID:[^\r\n]*(\r?\n[ \t][^\r\n]*)*/im, `Message-ID: ${id}`);
  return (replaced === head ? `Message-ID: ${id}\r\n${head}` : replaced) + (end < 0 ? "" : raw.slice(end));
}

function missing(what: string): never {
  throw new Error(`cloud-local needs ${what}`);
}
