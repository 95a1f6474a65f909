/**
 * The parts of the deployed stack that follow from the configuration file, as CloudFormation (JSON in,
 * JSON out; serverless.yml includes them through infra/from-config.cjs at package time):
 *  - two `AWS::Events::Rule` per route (lib/routes/rules.ts) on the Lookout bus — its events with an
 *    incident and those without — targeting the Slack or email inbox, and the catch-all `Lookout Health`
 *    rule to the health log group;
 *  - the queue policies that let exactly those rules send to the inboxes;
 *  - one IAM role per function, with only the actions it uses on only the resources it uses, the SSM
 *    parameters and Secrets Manager secrets the configuration names among them;
 *  - the alarms: dispatch's errors, the outbox's iterator age, and `Lookout Health` events (dispatch
 *    watches the queues: `watchedQueues`); dispatch's WATCHED_QUEUES.
 * The static resources (table, queues, bus, archive, alarm topic, health log group, schedule) are the YAML files beside this one.
 */
import { isAbsolute, relative, resolve, sep } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { DETAIL_TYPES, EVENT_SOURCE } from "../lib/model/event.js";
import { type Config, ConfigError, loadConfigFile } from "../lib/config/load.js";
import { deployProblems, grantableSecret, SECRET_NAME_PROBLEM, SSM_NAME_PROBLEM } from "../lib/config/deployable.js";
import { type RuleResource, ruleResources, type RuleTarget } from "../lib/routes/rules.js";
import { httpSecretRefs } from "../lib/config/routes.js";
import type { Receiver } from "../lib/config/route-types.js";
import { INDEXES } from "../lib/store/table.js";

export type Cfn = Record<string, unknown>;

/** The functions of serverless.yml: its keys, and the logical ids serverless gives them. */
export const FUNCTIONS = {
  dispatch: { logicalId: "Dispatch", suffix: "dispatch" },
  poll: { logicalId: "Poll", suffix: "poll" },
  feedTick: { logicalId: "FeedTick", suffix: "feed-tick" },
  publish: { logicalId: "Publish", suffix: "publish" },
  notifySlack: { logicalId: "NotifySlack", suffix: "notify-slack" },
  notifyEmail: { logicalId: "NotifyEmail", suffix: "notify-email" },
  notifyHttp: { logicalId: "NotifyHttp", suffix: "notify-http" },
  auditApi: { logicalId: "AuditApi", suffix: "audit-api" },
  slackActions: { logicalId: "SlackActions", suffix: "slack-actions" },
} as const;
export type FunctionKey = keyof typeof FUNCTIONS;

/** Queues of infra/queues.yml: the two work queues, their dead letters, and the other dead-letter queues. */
export const WORK_QUEUES = { SlackQueue: "notify-slack", EmailQueue: "notify-email", HttpQueue: "notify-http" } as const;
/** The inboxes the route rules send to, each emptied by its pipe into the kind's work queue (infra/pipes.yml). */
export const INBOXES = { SlackInbox: "SlackPipe", EmailInbox: "EmailPipe", HttpInbox: "HttpPipe" } as const;
export const DEAD_LETTER_QUEUES = {
  PollDeadLetterQueue: "poll invocations that failed 3 times",
  SlackActionsDeadLetterQueue: "Slack button clicks whose handling failed 3 times",
  SlackDeadLetterQueue: "Slack deliveries that failed 5 times",
  EmailDeadLetterQueue: "email deliveries that failed 5 times",
  HttpDeadLetterQueue: "PagerDuty, webhook and Teams deliveries that failed 5 times",
  SlackInboxDeadLetterQueue: "notify messages the Slack pipe could not move to the Slack queue 5 times",
  EmailInboxDeadLetterQueue: "notify messages the email pipe could not move to the email queue 5 times",
  HttpInboxDeadLetterQueue: "notify messages the http pipe could not move to the http queue 5 times",
  PublishFailureQueue: "outbox batches the publish function gave up on",
  BusDeadLetterQueue: "events the bus could not deliver to a queue or the health log group",
} as const;

/**
 * The queues dispatch samples every five minutes (lib/app/cloud/queue-gauge.ts), in WATCHED_QUEUES:
 * a dead letter raises `dead_letters` at once, a work queue or inbox not emptied for 15 minutes
 * `queue_backlog` (docs/deploy.md, "Alarms"). Not the change feed's loop's queue: its one message is
 * always there, delayed or in flight, and dispatch watches the loop by its lease instead.
 */
export function watchedQueues(): Array<{ queue: string; dead_letter: boolean; what: string }> {
  return [
    ...Object.entries(DEAD_LETTER_QUEUES).map(([queue, what]) => ({ queue, dead_letter: true, what })),
    ...Object.entries(WORK_QUEUES).map(([queue, fn]) => ({ queue, dead_letter: false, what: `the ${fn} function's work` })),
    ...Object.entries(INBOXES).map(([queue, pipe]) => ({ queue, dead_letter: false, what: `alerts ${pipe} moves to its queue` })),
  ];
}

/** WATCHED_QUEUES for dispatch: the list as JSON, each queue's URL substituted by CloudFormation. */
export const watchedQueuesEnv = (): Cfn => sub(JSON.stringify(watchedQueues().map((q) => ({ ...q, url: `\${${q.queue}}` }))));

export interface StackOptions {
  /** serverless.yml's `service` (names: `<service>-<stage>-<function>`). */
  service: string;
  stage: string;
  /** Where CloudWatch alarms are also sent by email; empty or absent: no subscription. */
  alarmEmail?: string;
  /** The Region deployed to (serverless.yml `provider.region`): which Parameters and Secrets extension layer. Default us-east-1. */
  region?: string;
  /** The extension's layer ARN, given (serverless.yml `param:secretsExtensionLayer`); empty or absent: the Region's from the table. */
  secretsExtensionLayer?: string;
}

export interface GeneratedStack {
  /** The configuration file, relative to the service directory, with `/` separators (bundled as is). */
  configFile: string;
  /** dispatch's WATCHED_QUEUES (serverless.yml). */
  watchedQueues: Cfn;
  /** What serverless.yml adds to `resources`. */
  cloudformation: { Resources: Record<string, Cfn>; Outputs: Record<string, Cfn> };
  /** Each function's `layers` (serverless.yml): the Parameters and Secrets extension where its role reads a secret. */
  layers: Record<FunctionKey, string[]>;
}

/** A configuration that cannot be deployed as it is; the message says what to change. */
export class DeployConfigError extends Error {
  override name = "DeployConfigError";
}

const sub = (s: string) => ({ "Fn::Sub": s });
const getAtt = (id: string, attr: string) => ({ "Fn::GetAtt": [id, attr] });
const ref = (id: string) => ({ Ref: id });
/** `arn:<partition>:<service>:<region>:<account>:<resource>` of this stack's account and region. */
const arn = (service: string, resource: string) => sub(`arn:\${AWS::Partition}:${service}:\${AWS::Region}:\${AWS::AccountId}:${resource}`);

export const functionName = (o: StackOptions, key: FunctionKey) => `${o.service}-${o.stage}-${FUNCTIONS[key].suffix}`;

// --- the configuration ------------------------------------------------------------------------------

/**
 * Loads the configuration to deploy. It must lie inside the service directory (it is packaged beside
 * the handlers) and its secrets must be SSM or Secrets Manager references: an `env:` reference would
 * need the secret as a plain environment value in the template.
 */
export function loadDeployConfig(serviceDir: string, file: string): { config: Config; configFile: string } {
  const abs = resolve(serviceDir, file);
  const rel = relative(serviceDir, abs);
  if (!rel || rel.startsWith("..") || isAbsolute(rel)) {
    throw new DeployConfigError(`${file}: the configuration must be inside ${serviceDir} (it is packaged with the functions); copy it there and set LOOKOUT_CONFIG to its path`);
  }
  // No environment overrides: the functions read the file as it is, without PLATFORM_API_URL/TOKEN.
  const config = loadConfigFile(abs, {});
  const problems = deployProblems(config);
  if (problems.length) throw ConfigError.of(rel, problems);
  return { config, configFile: rel.split(sep).join("/") };
}

/** The configuration to package: LOOKOUT_CONFIG, default lookout.yaml (serverless.yml, infra/from-config.cjs, infra/esbuild-plugins.cjs). */
export const configToPackage = (env: NodeJS.ProcessEnv = process.env): string => env.LOOKOUT_CONFIG || "lookout.yaml";

/** The receivers of notify.fallback: a failed delivery goes to them, whatever their kind. */
const fallbackReceivers = (config: Config): Receiver[] =>
  [config.notify.fallback?.slack, config.notify.fallback?.email].filter((r) => r !== undefined);

/**
 * What the packaging builds into every bundle (esbuild `define`, read by lib/app/cloud): the configuration
 * as the loader checked it, as JSON text, so that the functions carry no YAML parser and build no schema
 * at their cold start (the same code checked the same file here; lib/app/cloud/config.ts), and which kinds
 * of receiver the fallback names, so that each notify function carries only the senders it can use.
 */
export function packagedDefines(serviceDir: string, file: string): Record<string, string> {
  const { config } = loadDeployConfig(serviceDir, file);
  // Where it was read is the function's own (LOOKOUT_CONFIG_FILE), not this machine's.
  const { source: _, ...checked } = config;
  const json = JSON.stringify(checked);
  if (!isDeepStrictEqual({ ...JSON.parse(json), source: config.source }, config)) {
    throw new DeployConfigError(`${file}: a value in it has no JSON form (the functions read the configuration as JSON); write it as a plain string or number`);
  }
  const fallback = fallbackReceivers(config);
  return {
    LOOKOUT_PACKAGED_CONFIG: JSON.stringify(json),
    LOOKOUT_FALLBACK_EMAIL: String(fallback.some((r) => r.type === "email")),
    LOOKOUT_FALLBACK_SLACK: String(fallback.some((r) => r.type === "slack")),
  };
}

const secretRefs = (r: Receiver): string[] =>
  r.type === "slack" ? (r.form === "webhook" ? [r.webhookUrlRef] : [r.tokenRef]) : r.type === "email" ? [] : httpSecretRefs(r).map((x) => x.ref);

/**
 * What the packaging builds into each function's bundle alone (esbuild `define`, by the bundle's name,
 * `functions/<suffix>`): which kinds of secret reference its role may read (lib/app/cloud/secrets.ts), and
 * so whether it has the Parameters and Secrets extension's layer (functionLayers); another kind is refused
 * with an error that says so.
 */
export function functionDefines(config: Config): Record<string, Record<string, string>> {
  const statements = functionStatements(config);
  return Object.fromEntries((Object.keys(FUNCTIONS) as FunctionKey[]).map((key) => {
    const actions = new Set(statements[key].flatMap((s) => s.Action));
    return [FUNCTIONS[key].suffix, {
      LOOKOUT_SECRETS_SSM: String(actions.has("ssm:GetParameter")),
      LOOKOUT_SECRETS_SECRETSMANAGER: String(actions.has("secretsmanager:GetSecretValue")),
    }];
  }));
}

/**
 * The AWS Parameters and Secrets Lambda Extension's arm64 layer (serverless.yml `architecture`), version
 * 11, by Region: the account AWS publishes it from there. The functions read `ssm:` and `secretsmanager:`
 * references through it (lib/app/cloud/secrets.ts), so that none carries an SSM or Secrets Manager client
 * (docs/deploy.md, "Secrets"). Only Regions whose ARN is known here; elsewhere `secretsExtensionLayer` gives it.
 */
export const SECRETS_EXTENSION_ACCOUNTS: Readonly<Record<string, string>> = {
  "us-east-1": "177933569100",
  "us-west-2": "345057560386",
  "eu-west-1": "015030872274",
  "eu-central-1": "187925254637",
  "ap-southeast-1": "044395824272",
  "ap-southeast-2": "665172237481",
  "ap-northeast-1": "133490724326",
};
export const SECRETS_EXTENSION_VERSION = 11;
/** A Lambda layer version's ARN, as `secretsExtensionLayer` must give it. */
const LAYER_ARN = /^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:layer:[A-Za-z0-9_-]+:\d+$/;

/** The extension's layer for the Region, or the one given; a clear error when neither is known. */
export function secretsExtensionLayer(o: Pick<StackOptions, "region" | "secretsExtensionLayer">): string {
  const given = o.secretsExtensionLayer?.trim();
  if (given) {
    if (!LAYER_ARN.test(given)) throw new DeployConfigError(`param secretsExtensionLayer: ${given} is not a Lambda layer version ARN (arn:aws:lambda:<region>:<account>:layer:<name>:<version>)`);
    return given;
  }
  const region = o.region ?? "us-east-1";
  const account = SECRETS_EXTENSION_ACCOUNTS[region];
  if (!account) {
    throw new DeployConfigError(
      `${region}: no AWS Parameters and Secrets Lambda Extension layer is known here for this Region; give its arm64 layer's ARN as AWS lists it (docs/deploy.md, "Secrets") with --param="secretsExtensionLayer=arn:aws:lambda:${region}:<account>:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:<version>"`,
    );
  }
  return `arn:aws:lambda:${region}:${account}:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:${SECRETS_EXTENSION_VERSION}`;
}

/** Each function's layers: the extension for those whose role reads an `ssm:` or `secretsmanager:` reference. */
export function functionLayers(config: Config, o: StackOptions): Record<FunctionKey, string[]> {
  const defines = functionDefines(config);
  const readsSecrets = (key: FunctionKey) => Object.values(defines[FUNCTIONS[key].suffix]!).includes("true");
  const keys = Object.keys(FUNCTIONS) as FunctionKey[];
  const layer = keys.some(readsSecrets) ? secretsExtensionLayer(o) : undefined;
  return Object.fromEntries(keys.map((key) => [key, readsSecrets(key) && layer ? [layer] : []])) as Record<FunctionKey, string[]>;
}

// --- IAM ----------------------------------------------------------------------------------------------

export interface Statement {
  Sid: string;
  Effect: "Allow";
  Action: string[];
  Resource: unknown[] | "*";
  Condition?: Cfn;
}

const allow = (Sid: string, Action: string[], Resource: unknown[] | "*", Condition?: Cfn): Statement => ({
  Sid,
  Effect: "Allow",
  Action,
  Resource,
  ...(Condition ? { Condition } : {}),
});


/**
 * Reading the given secret references: ssm:GetParameter on each parameter, secretsmanager:GetSecretValue
 * on each secret (its name and the random suffix Secrets Manager appends), and kms:Decrypt only through
 * those two services and only for those parameters and secrets: SSM and Secrets Manager name them in the
 * encryption context of each Decrypt (PARAMETER_ARN, SecretARN; docs/deploy.md). The key itself is the
 * account's choice (aws/ssm, aws/secretsmanager or its own), which the template cannot know: key/*.
 */
export function secretStatements(refs: readonly string[]): Statement[] {
  const ssm = new Set<string>();
  const secrets = new Set<string>();
  for (const r of refs) {
    const [scheme, ...rest] = r.split(":");
    const name = rest.join(":");
    if (scheme === "ssm") {
      if (!grantableSecret(r)) throw new DeployConfigError(`${r}: ${SSM_NAME_PROBLEM}`);
      ssm.add(name);
    } else if (scheme === "secretsmanager") {
      if (!grantableSecret(r)) throw new DeployConfigError(`${r}: ${SECRET_NAME_PROBLEM}`);
      secrets.add(name);
    }
  }
  const out: Statement[] = [];
  if (ssm.size) {
    const parameters = [...ssm].sort().map((n) => arn("ssm", `parameter${n}`));
    out.push(allow("ReadParameters", ["ssm:GetParameter"], parameters));
    out.push(allow("DecryptParameters", ["kms:Decrypt"], [arn("kms", "key/*")], {
      StringEquals: { "kms:ViaService": sub("ssm.${AWS::Region}.amazonaws.com"), "kms:EncryptionContext:PARAMETER_ARN": parameters },
    }));
  }
  if (secrets.size) {
    const resources = [...secrets].sort().map((n) => (n.startsWith("arn:") ? n : arn("secretsmanager", `secret:${n}-??????`)));
    out.push(allow("ReadSecrets", ["secretsmanager:GetSecretValue"], resources));
    // StringLike: a secret's ARN ends in a random suffix, as in the resources above.
    out.push(allow("DecryptSecrets", ["kms:Decrypt"], [arn("kms", "key/*")], {
      StringEquals: { "kms:ViaService": sub("secretsmanager.${AWS::Region}.amazonaws.com") },
      StringLike: { "kms:EncryptionContext:SecretARN": resources },
    }));
  }
  return out;
}

/** SES v2 SendEmail with raw MIME content (needs ses:SendRawEmail too) from the sender's identity: the address or its domain. */
export function sesStatements(config: Config): Statement[] {
  const from = config.notify.email?.from;
  if (!from) return [];
  const domain = from.slice(from.lastIndexOf("@") + 1);
  return [allow("SendEmail", ["ses:SendEmail", "ses:SendRawEmail"], [arn("ses", `identity/${from}`), arn("ses", `identity/${domain}`)])];
}

const TABLE = getAtt("LookoutTable", "Arn");
/** The audit indexes (lib/store/table.ts), each by name: the only indexes anything queries. */
const AUDIT_INDEXES = INDEXES.map((i) => sub(`\${LookoutTable.Arn}/index/${i.name}`));
const consumeQueue = (queue: string) =>
  allow("ConsumeQueue", ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"], [getAtt(queue, "Arn")]);

/** What each function does, as IAM statements (besides writing its own logs). */
export function functionStatements(config: Config): Record<FunctionKey, Statement[]> {
  const platform = secretStatements([config.platform.tokenRef]);
  const fallback = fallbackReceivers(config);
  // The default route (notify.default) is a route like the others here.
  // Whom an escalation pages (escalate.to) is sent to like a route's receivers.
  const routeSlack = [
    ...config.routes.flatMap((r) => [...r.slack, ...(r.escalate?.to?.slack ? [r.escalate.to.slack] : [])]),
    ...(config.notify.default?.slack ? [config.notify.default.slack] : []),
  ];
  const routeEmail = config.routes.some((r) => r.email || r.escalate?.to?.email) || config.notify.default?.email !== undefined;
  const routeHttp = config.routes.flatMap((r) => r.http ?? []);
  const fallbackEmail = fallback.some((r) => r.type === "email");
  // The notify functions write delivery records, storm buckets, held alerts and health alerts, read mutes;
  // a digest's flush deletes the held alerts it carried (DeleteItem, lib/notify/deliver.ts).
  const notifyTable = allow(
    "NotifyStore",
    ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:Query"],
    [TABLE],
  );
  return {
    // Plans polls (its own dispatch state item), raises health alerts into the outbox, invokes the poll
    // function with the polls, looks for alerts held for a digest (a key read a receiver) and invokes the
    // notify function of that kind, samples every queue of the stack for dead letters and backlogs
    // (attributes only, no messages). It never calls the platform: no token (lib/app/dispatch.ts).
    dispatch: [
      allow("DispatchState", ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"], [TABLE]),
      allow("InvokePollAndFlush", ["lambda:InvokeFunction"], (["poll", "notifySlack", "notifyEmail", "notifyHttp"] as const).map((f) => getAtt(`${FUNCTIONS[f].logicalId}LambdaFunction`, "Arn"))),
      allow("WatchQueues", ["sqs:GetQueueAttributes"], watchedQueues().map((q) => getAtt(q.queue, "Arn"))),
      // Starts the change feed's loop when it is lost (a tick's message).
      allow("StartFeedLoop", ["sqs:SendMessage"], [getAtt("FeedLoopQueue", "Arn")]),
    ],
    // Conditional puts and transactions (TransactWriteItems is authorized per item: PutItem and
    // ConditionCheckItem), BatchWriteItem for records without alerts, BatchGetItem for the service
    // directory; no index is queried.
    poll: [
      allow("OnFailureDestination", ["sqs:SendMessage"], [getAtt("PollDeadLetterQueue", "Arn")]),
      allow("IngestStore", ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:PutItem", "dynamodb:ConditionCheckItem"], [TABLE]),
      ...platform,
    ],
    // The change feed's loop: consumes a tick's message and sends the next; reads and writes its lease
    // and dispatch's state; polls as the poll function does.
    feedTick: [
      consumeQueue("FeedLoopQueue"),
      allow("RenewLoop", ["sqs:SendMessage"], [getAtt("FeedLoopQueue", "Arn")]),
      allow("IngestStore", ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:PutItem", "dynamodb:ConditionCheckItem"], [TABLE]),
      ...platform,
    ],
    publish: [
      allow("ReadOutboxStream", ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"], [getAtt("LookoutTable", "StreamArn")]),
      // dynamodb:ListStreams has no resource type: IAM accepts it only on "*". Lists stream ARNs, no data.
      allow("ListStreams", ["dynamodb:ListStreams"], "*"),
      allow("PublishToBus", ["events:PutEvents"], [getAtt("LookoutBus", "Arn")]),
      allow("OnFailureDestination", ["sqs:SendMessage"], [getAtt("PublishFailureQueue", "Arn")]),
      // Quarantines an alert no retry can publish, with its health alert, in one transaction (PutItem per item).
      allow("Quarantine", ["dynamodb:PutItem"], [TABLE]),
    ],
    // A failed delivery goes to the fallback receivers, whatever their kind.
    notifySlack: [
      consumeQueue("SlackQueue"),
      notifyTable,
      ...secretStatements([...routeSlack, ...fallback].flatMap(secretRefs)),
      ...(fallbackEmail ? sesStatements(config) : []),
    ],
    notifyEmail: [
      consumeQueue("EmailQueue"),
      notifyTable,
      ...secretStatements(fallback.flatMap(secretRefs)),
      ...(routeEmail || fallbackEmail ? sesStatements(config) : []),
    ],
    // Its receivers' URLs, routing keys and signing secrets, and the fallback's senders.
    notifyHttp: [
      consumeQueue("HttpQueue"),
      notifyTable,
      ...secretStatements([...routeHttp, ...fallback].flatMap(secretRefs)),
      ...(fallbackEmail ? sesStatements(config) : []),
    ],
    // Items by key (batches of records that raised nothing several at once), an alert's deliveries by
    // partition (the table), the trail through the audit indexes.
    auditApi: [
      allow("ReadStore", ["dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:Query"], [TABLE]),
      allow("QueryAuditIndexes", ["dynamodb:Query"], AUDIT_INDEXES),
    ],
    // Records a click, the acknowledgement and a mute (conditional puts), reads the alert and its
    // deliveries (which receiver showed it), hands the click to itself asynchronously (a click whose
    // handling failed every attempt goes to its dead-letter queue), and reads the signing secret and the
    // Web API receivers' tokens (it edits and replies with them). Without notify.slack_actions it
    // answers 404 and reads no secret.
    slackActions: [
      allow("OnFailureDestination", ["sqs:SendMessage"], [getAtt("SlackActionsDeadLetterQueue", "Arn")]),
      allow("ActionStore", ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"], [TABLE]),
      // Its own name, as serverless names it (<stack>-slack-actions): a reference to the function would be a cycle.
      allow("InvokeItself", ["lambda:InvokeFunction"], [arn("lambda", `function:\${AWS::StackName}-${FUNCTIONS.slackActions.suffix}`)]),
      ...(config.notify.slackActions
        ? secretStatements([config.notify.slackActions.signingSecretRef, ...[...routeSlack, ...fallback].filter((r) => r.type === "slack" && r.form === "api").flatMap(secretRefs)])
        : []),
    ],
  };
}

/** One role per function: its statements and its own log group's streams. */
export function roleResources(config: Config, o: StackOptions): Record<string, Cfn> {
  const statements = functionStatements(config);
  const out: Record<string, Cfn> = {};
  for (const key of Object.keys(FUNCTIONS) as FunctionKey[]) {
    const name = functionName(o, key);
    const logs = allow("OwnLogs", ["logs:CreateLogStream", "logs:PutLogEvents"], [arn("logs", `log-group:/aws/lambda/${name}:*`)]);
    out[`${FUNCTIONS[key].logicalId}Role`] = {
      Type: "AWS::IAM::Role",
      Properties: {
        Description: `Lookout ${o.stage}: the ${FUNCTIONS[key].suffix} function, only what it uses`,
        AssumeRolePolicyDocument: {
          Version: "2012-10-17",
          Statement: [{ Effect: "Allow", Principal: { Service: "lambda.amazonaws.com" }, Action: "sts:AssumeRole" }],
        },
        Policies: [{ PolicyName: name, PolicyDocument: { Version: "2012-10-17", Statement: [logs, ...statements[key]] } }],
        Tags: [{ Key: "app", Value: "lookout" }],
      },
    };
  }
  return out;
}

// --- the bus: route rules, the health rule, and who may send to the queues -----------------------------

/** Rule names are at most 64 characters. */
const RULE_NAME_MAX = 64;

/** The one message group of an inbox: the rules' events in the order EventBridge delivered them. */
export const INBOX_GROUP = "inbox";

/**
 * What a route's rule writes to the inbox: the route, the whole event, and what the pipe reads to send it
 * on (infra/pipes.yml) — `group`, the work queue's message group, and `dedup`, its deduplication id (the
 * alert once per route: a republished alert is not delivered twice within SQS's five minutes).
 */
export const notifyTemplate = (route: string): string =>
  `{"route": ${JSON.stringify(route)}, "group": "<group>", "dedup": ${JSON.stringify(`${route}/<alert>`)}, "event": <aws.events.event.json>}`;

/**
 * A route's rule as two: the events of an incident, grouped by `incident_id`, and those of none (health,
 * a cancellation of a healthy service), each its own group. A rule's input transformer has no fallback
 * for a path an event lacks, so the split is in the patterns, and each rule's path always exists.
 */
function byIncident(id: string, rule: RuleResource, route: string): Record<string, RuleResource> {
  const detail = (rule.Properties.EventPattern.detail ?? {}) as Record<string, unknown>;
  if ("incident_id" in detail) throw new DeployConfigError(`route ${route}: matching on incident_id is not supported in the cloud (its rule splits on it)`);
  const half = (exists: boolean, group: string): RuleResource => ({
    ...rule,
    Properties: {
      ...rule.Properties,
      Name: exists ? rule.Properties.Name : `${rule.Properties.Name}_solo`,
      Description: `${rule.Properties.Description}, events ${exists ? "of an incident" : "of no incident"}`,
      EventPattern: { ...rule.Properties.EventPattern, detail: { ...detail, incident_id: [{ exists }] } },
      Targets: rule.Properties.Targets.map((t) => ({
        ...t,
        SqsParameters: { MessageGroupId: INBOX_GROUP },
        InputTransformer: { InputPathsMap: { group, alert: "$.detail.id" }, InputTemplate: notifyTemplate(route) },
      })),
    },
  });
  return { [id]: half(true, "$.detail.incident_id"), [`${id}Solo`]: half(false, "$.detail.id") };
}

export function ruleAndPolicyResources(config: Config, o: StackOptions): Record<string, Cfn> {
  const dlq = { Arn: getAtt("BusDeadLetterQueue", "Arn") };
  // A queue that refuses an event (throttling, a policy being replaced) is retried for a day, then dead-lettered.
  const retry = { MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86400 };
  const target = (Id: string, queue: string): RuleTarget => ({ Id, Arn: getAtt(queue, "Arn"), DeadLetterConfig: dlq, RetryPolicy: retry });
  const namePrefix = `${o.service}-${o.stage}-`;
  const perRoute = ruleResources(config.routes, { slack: target("slack", "SlackInbox"), email: target("email", "EmailInbox"), http: target("http", "HttpInbox") }, {
    eventBusName: ref("LookoutBus"),
    namePrefix,
    defaultRoute: config.notify.default,
  });
  const rules: Record<string, RuleResource> = {};
  for (const [id, rule] of Object.entries(perRoute)) {
    for (const [hid, half] of Object.entries(byIncident(id, rule, rule.Properties.Name.slice(namePrefix.length)))) {
      // Logical ids are alphanumeric: a route named `<name>-solo` would take the id of `<name>`'s second rule.
      if (rules[hid] || (hid !== id && perRoute[hid])) throw new DeployConfigError(`routes share the rule id ${hid}; rename one of them`);
      rules[hid] = half;
    }
  }
  const tooLong = Object.values(rules).filter((r) => r.Properties.Name.length > RULE_NAME_MAX).map((r) => r.Properties.Name);
  if (tooLong.length) throw new DeployConfigError(`rule names longer than ${RULE_NAME_MAX} characters: ${tooLong.join(", ")}; shorten the route names or the stage`);

  const out: Record<string, Cfn> = { ...(rules as Record<string, unknown> as Record<string, Cfn>) };
  out.HealthRule = {
    Type: "AWS::Events::Rule",
    Properties: {
      Name: healthRuleName(o),
      Description: "Every Lookout Health event, whatever the routes say: the health log group (and its alarm)",
      EventBusName: ref("LookoutBus"),
      EventPattern: { source: [EVENT_SOURCE], "detail-type": [DETAIL_TYPES.health] },
      State: "ENABLED",
      Targets: [{ Id: "health-log", Arn: sub("arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:${HealthLogGroup}"), DeadLetterConfig: dlq, RetryPolicy: retry }],
    },
  };

  const sendersTo = (queue: string) =>
    Object.entries(rules)
      .filter(([, r]) => r.Properties.Targets.some((t) => JSON.stringify(t.Arn) === JSON.stringify(getAtt(queue, "Arn"))))
      .map(([id]) => getAtt(id, "Arn"));
  const queuePolicy = (queue: string, sid: string, sources: unknown[]): Cfn => ({
    Type: "AWS::SQS::QueuePolicy",
    Properties: {
      Queues: [ref(queue)],
      PolicyDocument: {
        Version: "2012-10-17",
        Statement: [
          {
            Sid: sid,
            Effect: "Allow",
            Principal: { Service: "events.amazonaws.com" },
            Action: "sqs:SendMessage",
            Resource: getAtt(queue, "Arn"),
            Condition: { ArnEquals: { "aws:SourceArn": sources } },
          },
        ],
      },
    },
  });
  const slackRules = sendersTo("SlackInbox");
  const emailRules = sendersTo("EmailInbox");
  if (slackRules.length) out.SlackInboxPolicy = queuePolicy("SlackInbox", "RouteRulesToSlack", slackRules);
  if (emailRules.length) out.EmailInboxPolicy = queuePolicy("EmailInbox", "RouteRulesToEmail", emailRules);
  const httpRules = sendersTo("HttpInbox");
  if (httpRules.length) out.HttpInboxPolicy = queuePolicy("HttpInbox", "RouteRulesToHttp", httpRules);
  out.BusDeadLetterQueuePolicy = queuePolicy("BusDeadLetterQueue", "RulesDeadLetters", [
    ...Object.keys(rules).map((id) => getAtt(id, "Arn")),
    getAtt("HealthRule", "Arn"),
  ]);
  return out;
}

/** Route names are [a-z0-9-]: the underscore keeps this name apart from every route's rule. */
const healthRuleName = (o: StackOptions) => `${o.service}-${o.stage}_health`;

// --- alarms ---------------------------------------------------------------------------------------------

export function alarmResources(o: StackOptions): Record<string, Cfn> {
  const topic = [ref("AlarmTopic")];
  const alarm = (name: string, description: string, metric: Cfn, threshold: number, okActions = true): Cfn => ({
    Type: "AWS::CloudWatch::Alarm",
    Properties: {
      AlarmName: `${o.service}-${o.stage}-${name}`,
      AlarmDescription: description,
      ...metric,
      EvaluationPeriods: 1,
      Threshold: threshold,
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
      TreatMissingData: "notBreaching",
      AlarmActions: topic,
      ...(okActions ? { OKActions: topic } : {}),
    },
  });
  // Three alarms, each $0.10 a month. The queues (dead letters, backlogs) are watched by dispatch, which
  // raises health events (watchedQueues): one alarm a queue would be twelve. What dispatch cannot watch
  // is itself (its errors, including a queue it could not read) and the outbox (the stream's age).
  const out: Record<string, Cfn> = {};
  out.DispatchErrorsAlarm = alarm(
    `errors-${FUNCTIONS.dispatch.suffix}`,
    "The dispatch function failed in the last 5 minutes (it plans the polls and watches the queues); see its log group.",
    { Namespace: "AWS/Lambda", MetricName: "Errors", Dimensions: [{ Name: "FunctionName", Value: ref("DispatchLambdaFunction") }], Statistic: "Sum", Period: 300 },
    1,
  );
  out.PublishIteratorAgeAlarm = alarm(
    "outbox-behind",
    "The outbox (the table's stream) is more than 5 minutes behind: alerts are stored but not yet published.",
    { Namespace: "AWS/Lambda", MetricName: "IteratorAge", Dimensions: [{ Name: "FunctionName", Value: ref("PublishLambdaFunction") }], Statistic: "Maximum", Period: 300 },
    300_000,
  );
  // Health events are episodes (raised once, reminded daily): no OK action, the alarm's end says nothing.
  out.HealthEventsAlarm = alarm(
    "health",
    "Lookout reported on its own health (token rejected, a source failing, polling stalled, a receiver failing, dead letters, a queue not emptied); the event is in the log group /aws/events/lookout-<stage>-health and in the routes that match kind: health.",
    {
      Namespace: "AWS/Events", MetricName: "TriggeredRules", Statistic: "Sum", Period: 300,
      // A rule on a custom bus is measured by both names (docs/deploy.md, "Alarms").
      Dimensions: [{ Name: "EventBusName", Value: ref("LookoutBus") }, { Name: "RuleName", Value: healthRuleName(o) }],
    },
    1,
    false,
  );
  if (o.alarmEmail) {
    out.AlarmEmailSubscription = { Type: "AWS::SNS::Subscription", Properties: { TopicArn: ref("AlarmTopic"), Protocol: "email", Endpoint: o.alarmEmail } };
  }
  return out;
}

// --- all of it -------------------------------------------------------------------------------------------

export function generateStack(config: Config, configFile: string, o: StackOptions): GeneratedStack {
  return {
    configFile,
    watchedQueues: watchedQueuesEnv(),
    layers: functionLayers(config, o),
    cloudformation: {
      Resources: { ...ruleAndPolicyResources(config, o), ...roleResources(config, o), ...alarmResources(o) },
      Outputs: {
        ConfigurationFile: { Description: "The configuration packaged with the functions", Value: configFile },
      },
    },
  };
}

/** What infra/from-config.cjs calls: the configuration file → the generated part of the stack. */
export function fromConfig(serviceDir: string, file: string, o: StackOptions): GeneratedStack {
  const { config, configFile } = loadDeployConfig(serviceDir, file);
  return generateStack(config, configFile, o);
}
