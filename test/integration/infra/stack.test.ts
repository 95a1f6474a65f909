/**
 * The deployed stack as it will be deployed: `serverless package` runs once for this file (offline, no
 * AWS credentials, on a copy of the project so that .serverless/ is left alone) with
 * lookout.example.yaml, and the tests read the packaged template and zips — each function's own role
 * with no wildcard where a narrower resource exists, the table, the event source mappings, one rule per
 * route, the token from SSM, the alarms — run cfn-lint on the template, load every bundle in Node, and
 * run the dispatch and publish bundles against moto_server (DynamoDB, SQS, EventBridge).
 *
 * STACK_PACKAGE_DIR=<dir> reuses a package made earlier (`npm run package` → .serverless) instead.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { CreateTableCommand, DynamoDBClient, ScanCommand } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { CreateEventBusCommand, EventBridgeClient, PutRuleCommand, PutTargetsCommand } from "@aws-sdk/client-eventbridge";
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { DETAIL_TYPES } from "../../../lib/model/event.js";
import { loadConfigFile } from "../../../lib/config/load.js";
import { eventPattern } from "../../../lib/config/route-patterns.js";
import { ruleLogicalId } from "../../../lib/config/routes.js";
import { INDEXES, tableDefinition } from "../../../lib/store/table.js";
import { DEAD_LETTER_QUEUES, FUNCTIONS, type FunctionKey, INBOX_GROUP, notifyTemplate } from "../../../infra/stack.js";
import { bundleSizes, loadedScripts } from "../../../scripts/bundle-sizes.js";
import { cfnLintAvailable, lintTemplate } from "../../../scripts/lint-template.js";
import { EXAMPLE_CONFIG, EXAMPLE_STAGE, examplePackage } from "../../support/packaged-example.js";
import { extractZip, readZip } from "../../../scripts/zip.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";
import { sdkUsage } from "../../support/sdk-usage.js";
import { startLambdaAsync } from "../../support/lambda-async.js";
import { MOTO_ABSENT, type MotoServer, motoAvailable, startMoto } from "../../../local/runtime/moto.js";
import { alertInsert } from "../../support/stream-records.js";

type Cfn = Record<string, any>;

const CONFIG_FILE = EXAMPLE_CONFIG;
const config = loadConfigFile(CONFIG_FILE, {});
const STAGE = EXAMPLE_STAGE;

let template: Cfn;
let resources: Record<string, Cfn>;
let outDir: string;

beforeAll(async () => {
  outDir = (await examplePackage()).outDir;
  template = JSON.parse(readFileSync(join(outDir, "cloudformation-template-update-stack.json"), "utf8"));
  resources = template.Resources;
}, 240_000);

const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const fnResource = (key: FunctionKey) => resources[`${FUNCTIONS[key].logicalId}LambdaFunction`]!;
const roleOf = (key: FunctionKey) => {
  const roleId = fnResource(key).Properties.Role["Fn::GetAtt"][0] as string;
  return { roleId, role: resources[roleId]! };
};
const statementsOf = (key: FunctionKey): Cfn[] => roleOf(key).role.Properties.Policies.flatMap((p: Cfn) => p.PolicyDocument.Statement);
const asList = <T>(x: T | T[]): T[] => (Array.isArray(x) ? x : [x]);
/** A resource as text: `Fn::Sub` strings as written, `Fn::GetAtt` as `${Id.Attr}`, `Ref` as `${Id}`. */
const text = (r: unknown): string => {
  if (typeof r === "string") return r;
  const o = r as Cfn;
  if (o["Fn::Sub"]) return o["Fn::Sub"];
  if (o["Fn::GetAtt"]) return `\${${o["Fn::GetAtt"].join(".")}}`;
  if (o.Ref) return `\${${o.Ref}}`;
  return JSON.stringify(r);
};
const actionsOf = (key: FunctionKey) => [...new Set(statementsOf(key).flatMap((s) => asList(s.Action)))].sort();
const resourcesFor = (key: FunctionKey, action: string) =>
  statementsOf(key)
    .filter((s) => asList(s.Action).includes(action))
    .flatMap((s) => asList(s.Resource).map(text))
    .sort();
const ARN = "arn:${AWS::Partition}";
const REGION_ACCOUNT = "${AWS::Region}:${AWS::AccountId}";

/** The SSM and Secrets Manager clients, by the operations they send (minified code keeps these strings). */
const SECRET_CLIENTS = /GetParameter|GetSecretValue/;
/** SES v2 SendEmail's request path, in its schema: where a bundle can send email. */
const SES_SEND = "/v2/email/outbound-emails";

/** A function's own chunks, beside its bundle (infra/esbuild-plugins.cjs): `functions/<name>.<chunk>-<hash>.mjs`. */
const isChunkOf = (key: FunctionKey, name: string) => name.startsWith(`functions/${FUNCTIONS[key].suffix}.`) && name.endsWith(".mjs") && name !== `functions/${FUNCTIONS[key].suffix}.mjs`;
/** A function's code: its bundle and all its chunks (`loaded`: only what importing the handler loads). */
function codeOf(key: FunctionKey, loaded = false): string {
  const entries = readZip(join(outDir, `${key}.zip`)).filter((e) => e.name.endsWith(".mjs"));
  return (loaded ? loadedScripts(entries, `functions/${FUNCTIONS[key].suffix}.mjs`) : entries).map((e) => e.data().toString()).join("\n");
}

describe("the packaged stack", () => {
  it("packs one minified bundle per function, for nodejs22.x on arm64, with the configuration beside it", () => {
    const fns = ofType("AWS::Lambda::Function");
    expect(fns.map(([id]) => id).sort()).toEqual(Object.values(FUNCTIONS).map((f) => `${f.logicalId}LambdaFunction`).sort());
    for (const [key, { suffix }] of Object.entries(FUNCTIONS) as Array<[FunctionKey, (typeof FUNCTIONS)[FunctionKey]]>) {
      const p = fnResource(key).Properties;
      expect(p.Runtime).toBe("nodejs22.x");
      expect(p.Architectures).toEqual(["arm64"]);
      expect(p.FunctionName).toBe(`lookout-${STAGE}-${suffix}`);
      expect(p.Handler).toBe(`functions/${suffix}.handler`);
      expect(p.Environment.Variables.LOOKOUT_CONFIG_FILE).toBe(`/var/task/${CONFIG_FILE}`);
      expect(p.Environment.Variables.TABLE_NAME).toEqual({ Ref: "LookoutTable" });
      const entries = readZip(join(outDir, `${key}.zip`));
      // The audit API also serves the audit web page from its own package (lib/app/lambda/audit-api.ts).
      const web = key === "auditApi" ? ["web/audit/audit.css", "web/audit/audit.js", "web/audit/index.html", "web/audit/uplot.LICENSE", "web/audit/uplot.css", "web/audit/uplot.js"] : [];
      // Beside the bundle, its own chunks (what it loads on demand), and no other function's.
      const chunks = entries.filter((e) => isChunkOf(key, e.name));
      expect(chunks.length, key).toBeGreaterThan(0);
      expect(entries.filter((e) => !chunks.includes(e)).map((e) => e.name).sort()).toEqual([`functions/${suffix}.mjs`, CONFIG_FILE, ...web].sort());
      for (const f of web) expect(entries.find((e) => e.name === f)!.data().toString(), f).toBe(readFileSync(f, "utf8"));
      expect(entries.find((e) => e.name === CONFIG_FILE)!.data().toString()).toBe(readFileSync(CONFIG_FILE, "utf8"));
    }
  });

  it("bundles every package, the AWS SDK too: a bundle imports nothing but Node's built-ins", () => {
    const builtins = new Set(builtinModules);
    const PACKAGE = /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(\/[\w./-]*)?$/;
    for (const key of Object.keys(FUNCTIONS) as FunctionKey[]) {
      for (const file of readZip(join(outDir, `${key}.zip`)).filter((e) => e.name.endsWith(".mjs"))) {
        const code = file.data().toString();
        // "[require(\"@aws-sdk/signature-v4-crt\");]" is advice inside one of the SDK's error messages, not a call.
        // A chunk's own imports ("./notify-slack.chunk-….mjs") are its siblings in the package.
        const specifiers = [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|(?<!\[)\brequire\s*\(\s*)"([^"]+)"/g)].map((m) => m[1]!).filter((s) => PACKAGE.test(s));
        const outside = [...new Set(specifiers)].filter((s) => !s.startsWith("node:") && !builtins.has(s));
        expect(outside, `${file.name} imports packages at run time`).toEqual([]);
        // Minified: a handful of very long lines, not one statement per line.
        expect(code.split("\n").length, `${file.name} is not minified`).toBeLessThan(Math.max(50, code.length / 2000));
      }
      if (key !== "auditApi" && key !== "publish") expect(codeOf(key)).toContain("DynamoDB");
    }
    const sizes = bundleSizes(outDir);
    expect(sizes.map((s) => s.fn).sort()).toEqual(Object.keys(FUNCTIONS).sort());
    // Lambda's limit is 50 MB zipped; ours stay far below, and a jump would mean a mistake in bundling.
    for (const s of sizes) expect(s.bundleBytes, s.fn).toBeLessThan(3 * 1024 * 1024);
  });

  it("builds the configuration into the bundles as JSON, and leaves out what a function never calls", () => {
    const code = (key: FunctionKey) => codeOf(key);
    // No YAML parser: lib/app/cloud/config.ts parses the JSON the packaging built in (infra/esbuild-plugins.cjs).
    for (const key of Object.keys(FUNCTIONS) as FunctionKey[]) expect(code(key), key).not.toMatch(/YAMLParseError|Implicit keys need to be on a single line/);
    // The example's fallback is email: the Slack function emails it; the email function never posts to Slack.
    expect(code("notifySlack")).toContain("slack.com/api");
    expect(code("notifySlack")).toContain(SES_SEND);
    expect(code("notifyEmail")).not.toContain("slack.com/api");
    // The HTTP receivers' function: email for the fallback, no Slack client.
    expect(code("notifyHttp")).toContain(SES_SEND);
    expect(code("notifyHttp")).not.toContain("slack.com/api");
    expect(code("notifyHttp")).toContain("v2/enqueue");
    // A fallback's sender is a chunk loaded on its first message (lib/app/cloud/fallback-senders.ts), not at a cold start.
    for (const key of ["notifySlack", "notifyHttp"] as const) expect(codeOf(key, true), key).not.toContain(SES_SEND);
    // …and so is the fallback's channel with its renderer (lib/notify/channel-resolver.ts): email's headers, Slack's
    // empty commit list, each loaded at the cold start only where every message needs it.
    for (const key of ["notifySlack", "notifyHttp"] as const) expect(codeOf(key, true), key).not.toContain("X-Lookout-Incident");
    expect(codeOf("notifyEmail", true)).toContain("X-Lookout-Incident");
    for (const key of ["notifyEmail", "notifyHttp"] as const) expect(codeOf(key, true), key).not.toContain("No commits listed.");
    expect(codeOf("notifySlack", true)).toContain("No commits listed.");
    expect(codeOf("notifyEmail", true)).toContain(SES_SEND);
    // nodemailer's table of every file type, for naming attachments, is left out (infra/mail-mime-types.mjs):
    // the packaged emails are checked against `lookout run`'s in test/integration/cloud-local/runner.test.ts.
    for (const key of ["notifyEmail", "notifySlack", "notifyHttp"] as const) expect(code(key), key).not.toContain("application/vnd.openxmlformats");
    // No function carries an SSM or Secrets Manager client (the clients' request targets): secrets are
    // read through the Parameters and Secrets extension's layer, and only by the functions whose role reads
    // a reference of that kind (infra/stack.ts functionDefines): the example's platform token is in SSM,
    // its Slack references in SSM and Secrets Manager; it names no HTTP receiver and no Slack signing secret.
    for (const key of Object.keys(FUNCTIONS) as FunctionKey[]) expect(code(key), key).not.toMatch(SECRET_CLIENTS);
    const readsParameters = (key: FunctionKey) => codeOf(key, true).includes("/systemsmanager/parameters/get");
    const readsSecrets = (key: FunctionKey) => codeOf(key, true).includes("/secretsmanager/get");
    expect(readsParameters("poll") && readsParameters("feedTick") && readsParameters("notifySlack")).toBe(true);
    expect(readsSecrets("notifySlack")).toBe(true);
    expect(readsSecrets("poll") || readsSecrets("feedTick")).toBe(false);
    for (const key of ["auditApi", "publish", "notifyEmail", "dispatch", "notifyHttp", "slackActions"] as const) expect(readsParameters(key) || readsSecrets(key), key).toBe(false);
    // Credentials from the environment alone, where Lambda puts the role's (infra/lambda-credentials.mjs):
    // none of the SDK's other providers (web identity, containers' and instances' metadata, SSO) is packaged.
    for (const key of Object.keys(FUNCTIONS) as FunctionKey[]) {
      expect(codeOf(key, true), key).toContain("AWS_SESSION_TOKEN");
      expect(code(key), key).not.toMatch(/AWS_WEB_IDENTITY_TOKEN_FILE|AWS_CONTAINER_CREDENTIALS_FULL_URI|sso_start_url/);
    }
    // Only the SDK operations a function calls are packaged (infra/sdk-schema-keys.cjs): dispatch's Lambda
    // client has Invoke's schema and not ListLayers', the email function's SES client not CreateContactList's.
    expect(code("dispatch")).toContain("/2015-03-31/functions/{FunctionName}/invocations");
    expect(code("dispatch")).not.toContain("/2018-10-31/layers");
    expect(code("notifyEmail")).toContain(SES_SEND);
    expect(code("notifyEmail")).not.toContain("/v2/email/contact-lists");
    // The layer goes with the reads: those functions have it, no other.
    const withLayer = (Object.keys(FUNCTIONS) as FunctionKey[]).filter((key) => (fnResource(key).Properties.Layers ?? []).length > 0).sort();
    expect(withLayer).toEqual(["feedTick", "notifySlack", "poll"]);
    // The Region's, arm64 as the functions are (infra/stack.ts secretsExtensionLayer, unit-tested).
    for (const key of withLayer) expect(fnResource(key).Properties.Layers, key).toEqual([expect.stringMatching(/^arn:aws:lambda:[a-z0-9-]+:\d{12}:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:\d+$/)]);
    // What only some invocations need is a chunk loaded on demand, not at the cold start: acting on a
    // click (Slack, the table) for the Slack actions function, which answers Slack without them; the
    // quarantine's transaction for publish (lib/app/cloud/slack-actions.ts, lib/app/cloud/publish.ts).
    expect(code("slackActions")).toContain("slack.com/api");
    expect(codeOf("slackActions", true)).not.toContain("slack.com/api");
    expect(codeOf("slackActions", true)).not.toContain("DynamoDB");
    expect(code("publish")).toContain("TransactWriteItems");
    expect(codeOf("publish", true)).not.toContain("TransactWriteItems");
  });

  it("gives each function its own role, assumed by Lambda, and no shared default role", () => {
    expect(resources.IamRoleLambdaExecution).toBeUndefined();
    const roleIds = (Object.keys(FUNCTIONS) as FunctionKey[]).map((k) => roleOf(k).roleId);
    expect(new Set(roleIds).size).toBe(roleIds.length);
    for (const key of Object.keys(FUNCTIONS) as FunctionKey[]) {
      const { role } = roleOf(key);
      expect(role.Type).toBe("AWS::IAM::Role");
      expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
        { Effect: "Allow", Principal: { Service: "lambda.amazonaws.com" }, Action: "sts:AssumeRole" },
      ]);
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      // Its logs go to its own log group only.
      expect(resourcesFor(key, "logs:PutLogEvents")).toEqual([`${ARN}:logs:${REGION_ACCOUNT}:log-group:/aws/lambda/${fnResource(key).Properties.FunctionName}:*`]);
    }
  });

  it("allows each function only the actions it uses", () => {
    const logs = ["logs:CreateLogStream", "logs:PutLogEvents"];
    const consume = ["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"];
    const secrets = ["kms:Decrypt", "ssm:GetParameter"];
    const sorted = (...xs: string[][]) => xs.flat().sort();
    // Query: whether alerts are held for a receiver's digest (one key read a receiver).
    // No secret: dispatch never calls the platform (lib/app/dispatch.ts); sqs:SendMessage starts the change feed's loop when it is lost.
    expect(actionsOf("dispatch")).toEqual(sorted(logs, ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "lambda:InvokeFunction", "sqs:GetQueueAttributes", "sqs:SendMessage"]));
    // The loop's ticks: consumed, and the next one sent; it polls as the poll function does.
    expect(actionsOf("feedTick")).toEqual(
      sorted(logs, consume, ["dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem", "dynamodb:GetItem", "dynamodb:PutItem", "sqs:SendMessage"], secrets),
    );
    expect(actionsOf("poll")).toEqual(
      // sqs:SendMessage: Lambda sends an invocation that failed every attempt to its on-failure destination with the function's role.
      sorted(logs, ["dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem", "dynamodb:GetItem", "dynamodb:PutItem", "sqs:SendMessage"], secrets),
    );
    expect(actionsOf("publish")).toEqual(
      // PutItem: an alert no retry can publish is quarantined (docs/audit.md, "Quarantine").
      sorted(logs, ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams", "dynamodb:PutItem", "events:PutEvents", "sqs:SendMessage"]),
    );
    const notifyTable = ["dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"];
    const ses = ["ses:SendEmail", "ses:SendRawEmail"];
    // The example's Slack receivers are in SSM and Secrets Manager; its fallback is email.
    expect(actionsOf("notifySlack")).toEqual(sorted(logs, consume, notifyTable, secrets, ["secretsmanager:GetSecretValue"], ses));
    expect(actionsOf("notifyEmail")).toEqual(sorted(logs, consume, notifyTable, ses));
    expect(actionsOf("auditApi")).toEqual(sorted(logs, ["dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:Query"]));
  });

  it("grants each function exactly the AWS calls its code makes, and those Lambda makes for it", async () => {
    const consume = ["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"];
    /** Lambda, not the code: the function's logs, its event sources, and a stream's on-failure destination. */
    const byLambda = (key: FunctionKey): string[] => {
      const fn = `\${${FUNCTIONS[key].logicalId}LambdaFunction.Arn}`;
      const out = ["logs:CreateLogStream", "logs:PutLogEvents"];
      for (const m of ofType("AWS::Lambda::EventSourceMapping").map(([, r]) => r.Properties).filter((p) => text(p.FunctionName) === fn)) {
        if (/Queue\.Arn\}$/.test(text(m.EventSourceArn))) out.push(...consume);
        if (/\.StreamArn\}$/.test(text(m.EventSourceArn))) out.push("dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams");
        if (m.DestinationConfig?.OnFailure) out.push("sqs:SendMessage");
      }
      // An asynchronous invocation's on-failure destination.
      const invokeConfig = ofType("AWS::Lambda::EventInvokeConfig").map(([, r]) => r.Properties).find((p) => text(p.FunctionName) === `\${${FUNCTIONS[key].logicalId}LambdaFunction}`);
      if (invokeConfig?.DestinationConfig?.OnFailure) out.push("sqs:SendMessage");
      return out;
    };
    // A class comes whole into a bundle, all its methods: these are in the code but never called by that function.
    const ingestOnly = {
      "dynamodb:BatchGetItem": "DynamoIngestStore.getServiceContexts: only poll reads the service directory",
      "dynamodb:BatchWriteItem": "DynamoIngestStore.insertRecords: only poll stores records",
      "dynamodb:ConditionCheckItem": "DynamoIngestStore.insertRecord's transactions: only poll stores records; the others raise alerts with a conditional PutItem",
    };
    const NEVER_CALLED: Partial<Record<FunctionKey, Record<string, string>>> = {
      dispatch: {
        ...ingestOnly,
        "dynamodb:DeleteItem": "DynamoNotifyStore: dispatch only asks whether alerts are held or escalations due (heldFor, dueEscalations: Queries)",
        "dynamodb:UpdateItem": "DynamoNotifyStore: dispatch only asks whether alerts are held or escalations due (heldFor, dueEscalations: Queries)",
      },
      notifySlack: ingestOnly,
      notifyEmail: ingestOnly,
      notifyHttp: ingestOnly,
      slackActions: {
        "dynamodb:DeleteItem": "DynamoNotifyStore: a click never releases held alerts",
        "dynamodb:UpdateItem": "DynamoNotifyStore: a click never sends or counts a receiver's failures",
      },
    };
    /** Granted only when the configuration gives the function a secret or receiver of that kind (asserted above for the example). */
    const BY_CONFIGURATION = new Set(["kms:Decrypt", "secretsmanager:GetSecretValue", "ses:SendEmail", "ses:SendRawEmail", "ssm:GetParameter"]);
    const problems: Record<string, { used: string[]; unused: string[]; ungranted: string[] }> = {};
    for (const key of Object.keys(FUNCTIONS) as FunctionKey[]) {
      const usage = await sdkUsage(`functions/${FUNCTIONS[key].suffix}.ts`);
      const never = NEVER_CALLED[key] ?? {};
      // A stale exception would hide a real call: each must still be in the code.
      for (const a of Object.keys(never)) expect(usage.actions, `${key}: ${a} is no longer in its code; drop the exception`).toContain(a);
      const used = usage.actions.filter((a) => !(a in never));
      const granted = actionsOf(key);
      const needed = new Set([...byLambda(key), ...used]);
      const unused = granted.filter((a) => !needed.has(a));
      const ungranted = used.filter((a) => !granted.includes(a) && !BY_CONFIGURATION.has(a));
      if (unused.length || ungranted.length) problems[key] = { used: usage.calls, unused, ungranted };
    }
    expect(problems).toEqual({});
  }, 60_000);

  it("names the narrowest resource for every action", () => {
    const table = "${LookoutTable.Arn}";
    expect(resourcesFor("dispatch", "dynamodb:PutItem")).toEqual([table]);
    expect(resourcesFor("dispatch", "lambda:InvokeFunction")).toEqual(["${NotifyEmailLambdaFunction.Arn}", "${NotifyHttpLambdaFunction.Arn}", "${NotifySlackLambdaFunction.Arn}", "${PollLambdaFunction.Arn}"]);
    expect(resourcesFor("dispatch", "dynamodb:Query")).toEqual([table]);
    expect(resourcesFor("poll", "sqs:SendMessage")).toEqual(["${PollDeadLetterQueue.Arn}"]);
    expect(resourcesFor("slackActions", "sqs:SendMessage")).toEqual(["${SlackActionsDeadLetterQueue.Arn}"]);
    expect(resourcesFor("poll", "dynamodb:ConditionCheckItem")).toEqual([table]);
    expect(resourcesFor("publish", "dynamodb:GetRecords")).toEqual(["${LookoutTable.StreamArn}"]);
    expect(resourcesFor("publish", "events:PutEvents")).toEqual(["${LookoutBus.Arn}"]);
    expect(resourcesFor("publish", "sqs:SendMessage")).toEqual(["${PublishFailureQueue.Arn}"]);
    expect(resourcesFor("notifySlack", "sqs:ReceiveMessage")).toEqual(["${SlackQueue.Arn}"]);
    expect(resourcesFor("notifyEmail", "sqs:ReceiveMessage")).toEqual(["${EmailQueue.Arn}"]);
    expect(resourcesFor("notifyEmail", "ses:SendRawEmail")).toEqual(
      [`${ARN}:ses:${REGION_ACCOUNT}:identity/example.com`, `${ARN}:ses:${REGION_ACCOUNT}:identity/lookout@example.com`].sort(),
    );
    // The audit indexes by name (lib/store/table.ts), never index/*: a new index is not readable by accident.
    expect(resourcesFor("auditApi", "dynamodb:Query")).toEqual([table, ...INDEXES.map((i) => `\${LookoutTable.Arn}/index/${i.name}`)].sort());
    expect(INDEXES.every((i) => i.name.startsWith("audit-"))).toBe(true);
    expect(resourcesFor("auditApi", "dynamodb:GetItem")).toEqual([table]);
    expect(resourcesFor("notifySlack", "ssm:GetParameter")).toEqual([
      `${ARN}:ssm:${REGION_ACCOUNT}:parameter/lookout/prod/slack-bot-token`,
      `${ARN}:ssm:${REGION_ACCOUNT}:parameter/lookout/prod/slack-webhook-platform`,
    ]);
    expect(resourcesFor("notifySlack", "secretsmanager:GetSecretValue")).toEqual([
      `${ARN}:secretsmanager:${REGION_ACCOUNT}:secret:lookout/prod/slack-webhook-api-team-??????`,
    ]);
  });

  it("has no wildcard action, and no wildcard resource where a narrower one exists", () => {
    /** Actions IAM accepts only on "*" (no resource type in the service authorization reference). */
    const STAR_ONLY = new Set(["dynamodb:ListStreams"]);
    /** Wildcards inside an ARN that are as narrow as IAM allows. */
    const NARROW_WILDCARDS: Array<{ why: string; resource: RegExp; condition?: (c: Cfn | undefined) => boolean }> = [
      { why: "the streams of the function's own log group", resource: /:log-group:\/aws\/lambda\/lookout-[a-z0-9-]+:\*$/ },
      {
        why: "the key of an SSM parameter or a secret is the account's choice; only through that service, for the parameters or secrets named",
        resource: /:kms:\$\{AWS::Region\}:\$\{AWS::AccountId\}:key\/\*$/,
        condition: (c) => {
          const via = /^(ssm|secretsmanager)\.\$\{AWS::Region\}\.amazonaws\.com$/.exec(text(c?.StringEquals?.["kms:ViaService"] ?? ""));
          const context = via?.[1] === "ssm" ? c?.StringEquals?.["kms:EncryptionContext:PARAMETER_ARN"] : c?.StringLike?.["kms:EncryptionContext:SecretARN"];
          const named = asList(context ?? []).map(text);
          return Boolean(via) && named.length > 0 && named.every((n) => (via![1] === "ssm" ? /:parameter\/[^*?]+$/ : /:secret:[^*]+$/).test(n));
        },
      },
    ];
    const problems: string[] = [];
    for (const [id, role] of ofType("AWS::IAM::Role")) {
      for (const policy of role.Properties.Policies ?? []) {
        for (const s of policy.PolicyDocument.Statement as Cfn[]) {
          const actions = asList(s.Action) as string[];
          for (const a of actions) if (a.includes("*")) problems.push(`${id}: wildcard action ${a}`);
          for (const r of asList(s.Resource).map(text)) {
            if (r === "*") {
              if (!actions.every((a) => STAR_ONLY.has(a))) problems.push(`${id}: ${actions.join(",")} on *`);
            } else if (r.includes("*")) {
              const ok = NARROW_WILDCARDS.find((w) => w.resource.test(r) && (!w.condition || w.condition(s.Condition)));
              if (!ok) problems.push(`${id}: ${actions.join(",")} on ${r}`);
            }
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("lets only this stack's rules send to the queues and the health topic", () => {
    for (const [id, p] of [...ofType("AWS::SQS::QueuePolicy"), ...ofType("AWS::SNS::TopicPolicy")]) {
      for (const s of p.Properties.PolicyDocument.Statement as Cfn[]) {
        expect(s.Principal, id).toEqual({ Service: "events.amazonaws.com" });
        const sources = asList(s.Condition.ArnEquals["aws:SourceArn"]).map(text);
        expect(sources.length, id).toBeGreaterThan(0);
        for (const src of sources) expect(src, id).toMatch(/^\$\{(Route[A-Za-z0-9]+|HealthRule)\.Arn\}$/);
      }
    }
  });

  it("keeps no key of its own: an alarm topic of alarm states, health events in a log group only the health rule may write", () => {
    expect(ofType("AWS::KMS::Key")).toEqual([]);
    const topics = ofType("AWS::SNS::Topic");
    expect(topics.map(([id]) => id)).toEqual(["AlarmTopic"]);
    const log = resources.HealthLogGroup!.Properties;
    expect(log.LogGroupName).toMatch(/^\/aws\/events\/lookout-prod-health$/);
    const policy = JSON.parse(resources.HealthLogPolicy!.Properties.PolicyDocument["Fn::Sub"]);
    // EventBridge creates the stream unconditioned; what it writes must come from the health rule.
    expect(policy.Statement).toEqual([
      { Sid: "HealthRuleStreams", Effect: "Allow", Principal: { Service: "events.amazonaws.com" }, Action: "logs:CreateLogStream", Resource: "${HealthLogGroup.Arn}" },
      {
        Sid: "HealthRuleWrites", Effect: "Allow", Principal: { Service: "events.amazonaws.com" }, Action: "logs:PutLogEvents", Resource: "${HealthLogGroup.Arn}",
        Condition: { ArnEquals: { "aws:SourceArn": "${HealthRule.Arn}" } },
      },
    ]);
  });

  it("includes infra/table.yml as it is: stream, TTL, point-in-time recovery, retained, deletion protection", () => {
    const yml = parseYaml(readFileSync("infra/table.yml", "utf8")).Resources.LookoutTable;
    const table = resources.LookoutTable!;
    expect(table).toEqual(yml);
    expect(table.Properties.StreamSpecification.StreamViewType).toBe("NEW_IMAGE");
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: "expires_at", Enabled: true });
    expect(table.Properties.PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled).toBe(true);
    expect(table.DeletionPolicy).toBe("Retain");
    expect(table.UpdateReplacePolicy).toBe("Retain");
    expect(table.Properties.DeletionProtectionEnabled).toBe(true);
  });

  it("keeps a click whose asynchronous handling failed every attempt in a dead-letter queue that dispatch watches", () => {
    const config = ofType("AWS::Lambda::EventInvokeConfig").map(([, r]) => r.Properties).find((p) => text(p.FunctionName) === "${SlackActionsLambdaFunction}")!;
    expect(config).toMatchObject({ MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 600 });
    expect(text(config.DestinationConfig.OnFailure.Destination)).toBe("${SlackActionsDeadLetterQueue.Arn}");
    expect(resources.SlackActionsDeadLetterQueue!.Properties.MessageRetentionPeriod).toBe(1_209_600);
    expect(Object.keys(DEAD_LETTER_QUEUES)).toContain("SlackActionsDeadLetterQueue");
  });

  it("has dispatch invoke poll asynchronously: retried twice, an hour at most, then dead-lettered; five at once at most; no poll queue", () => {
    expect(resources.PollQueue).toBeUndefined();
    const poll = fnResource("poll").Properties;
    expect(poll.ReservedConcurrentExecutions).toBe(5);
    const config = ofType("AWS::Lambda::EventInvokeConfig").map(([, r]) => r.Properties).find((p) => text(p.FunctionName) === "${PollLambdaFunction}")!;
    expect(config).toMatchObject({ MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600, Qualifier: "$LATEST" });
    expect(text(config.DestinationConfig.OnFailure.Destination)).toBe("${PollDeadLetterQueue.Arn}");
    expect(resources.PollDeadLetterQueue!.Properties.MessageRetentionPeriod).toBe(1_209_600);
    // Dispatch names the functions it invokes by the template's references.
    const env = fnResource("dispatch").Properties.Environment.Variables;
    expect(env.POLL_FUNCTION_NAME).toEqual({ Ref: "PollLambdaFunction" });
    expect(env.NOTIFY_SLACK_FUNCTION_NAME).toEqual({ Ref: "NotifySlackLambdaFunction" });
    expect(env.NOTIFY_EMAIL_FUNCTION_NAME).toEqual({ Ref: "NotifyEmailLambdaFunction" });
    expect(env.NOTIFY_HTTP_FUNCTION_NAME).toEqual({ Ref: "NotifyHttpLambdaFunction" });
    expect(ofType("AWS::Lambda::EventSourceMapping").map(([, m]) => text(m.Properties.FunctionName))).not.toContain("${PollLambdaFunction.Arn}");
    // A digest flush is sent again every tick while alerts are held: not retried, not kept past a minute.
    for (const fn of ["NotifySlack", "NotifyEmail", "NotifyHttp"]) {
      const flush = ofType("AWS::Lambda::EventInvokeConfig").map(([, r]) => r.Properties).find((p) => text(p.FunctionName) === `\${${fn}LambdaFunction}`);
      expect(flush, fn).toMatchObject({ MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 });
    }
  });

  it("drives the change feed's loop from its own queue, as its failure behaviour needs (docs/architecture.md, \"The change feed's loop\")", () => {
    const queue = resources.FeedLoopQueue!.Properties;
    const fn = fnResource("feedTick").Properties;
    // A tick that failed is delivered again once the function could have run out its timeout; a message
    // past five minutes is stale (dispatch has started a new loop); no dead-letter queue: dispatch restarts it.
    expect(queue.VisibilityTimeout).toBe(fn.Timeout);
    expect(queue.MessageRetentionPeriod).toBe(300);
    expect(queue.RedrivePolicy).toBeUndefined();
    const mapping = ofType("AWS::Lambda::EventSourceMapping").map(([, m]) => m.Properties).filter((m) => text(m.EventSourceArn) === "${FeedLoopQueue.Arn}");
    expect(mapping).toHaveLength(1);
    // A message a tick; the lease, not the concurrency, keeps one loop.
    expect(mapping[0]).toMatchObject({ BatchSize: 1, ScalingConfig: { MaximumConcurrency: 2 } });
    expect(text(mapping[0].FunctionName)).toBe("${FeedTickLambdaFunction.Arn}");
    expect(fn.Environment.Variables.FEED_LOOP_QUEUE_URL).toEqual({ Ref: "FeedLoopQueue" });
  });

  it("feeds the notifiers from SQS with partial batch failures, and dead-letters what keeps failing", () => {
    const mappings = ofType("AWS::Lambda::EventSourceMapping").map(([, m]) => m.Properties);
    for (const [key, queue, dlq, receives] of [
      ["notifySlack", "SlackQueue", "SlackDeadLetterQueue", 5],
      ["notifyEmail", "EmailQueue", "EmailDeadLetterQueue", 5],
      ["notifyHttp", "HttpQueue", "HttpDeadLetterQueue", 5],
    ] as const) {
      const m = mappings.find((p) => text(p.EventSourceArn) === `\${${queue}.Arn}`)!;
      expect(m, queue).toBeDefined();
      expect(text(m.FunctionName)).toBe(`\${${FUNCTIONS[key].logicalId}LambdaFunction.Arn}`);
      expect(m.FunctionResponseTypes).toEqual(["ReportBatchItemFailures"]);
      expect(m.BatchSize).toBeGreaterThanOrEqual(1);
      expect(m.BatchSize).toBeLessThanOrEqual(10);
      const q = resources[queue]!.Properties;
      // Lambda refuses a queue whose visibility timeout is shorter than the function's; it advises six times, plus the batching window.
      expect(q.VisibilityTimeout).toBeGreaterThanOrEqual(6 * fnResource(key).Properties.Timeout + (m.MaximumBatchingWindowInSeconds ?? 0));
      expect(q.RedrivePolicy).toEqual({ deadLetterTargetArn: { "Fn::GetAtt": [dlq, "Arn"] }, maxReceiveCount: receives });
      expect(resources[dlq]!.Properties.MessageRetentionPeriod).toBe(1_209_600);
    }
  });

  it("orders each incident's notify messages: FIFO inboxes the rules send to, piped to FIFO queues grouped by incident", () => {
    for (const kind of ["Slack", "Email"] as const) {
      const inbox = resources[`${kind}Inbox`]!.Properties;
      const queue = resources[`${kind}Queue`]!.Properties;
      // EventBridge sends to a FIFO queue only with content-based deduplication; the pipe gives the queue its ids.
      expect(inbox).toMatchObject({ FifoQueue: true, ContentBasedDeduplication: true, QueueName: `lookout-${STAGE}-${kind.toLowerCase()}-inbox.fifo` });
      expect(queue).toMatchObject({ FifoQueue: true, ContentBasedDeduplication: false, QueueName: `lookout-${STAGE}-${kind.toLowerCase()}.fifo` });
      // A FIFO queue's dead-letter queue is FIFO too.
      for (const q of [inbox, queue]) expect(resources[q.RedrivePolicy.deadLetterTargetArn["Fn::GetAtt"][0]]!.Properties.FifoQueue).toBe(true);
      const pipe = resources[`${kind}Pipe`]!;
      expect(pipe.Type).toBe("AWS::Pipes::Pipe");
      expect(pipe.Properties.Source).toEqual({ "Fn::GetAtt": [`${kind}Inbox`, "Arn"] });
      expect(pipe.Properties.Target).toEqual({ "Fn::GetAtt": [`${kind}Queue`, "Arn"] });
      expect(pipe.Properties.TargetParameters).toEqual({
        InputTemplate: "<$.body>",
        SqsQueueParameters: { MessageGroupId: "$.body.group", MessageDeduplicationId: "$.body.dedup" },
      });
      // Its role reads its inbox and sends to its queue, nothing else.
      const role = resources[pipe.Properties.RoleArn["Fn::GetAtt"][0]]!.Properties;
      expect(role.AssumeRolePolicyDocument.Statement[0].Principal).toEqual({ Service: "pipes.amazonaws.com" });
      const statements = role.Policies.flatMap((x: Cfn) => x.PolicyDocument.Statement).map((x: Cfn) => [asList(x.Action).sort(), asList(x.Resource).map(text)]);
      expect(statements).toEqual([
        [["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"], [`\${${kind}Inbox.Arn}`]],
        [["sqs:SendMessage"], [`\${${kind}Queue.Arn}`]],
      ]);
    }
  });

  it("publishes from the table's stream: pending alert INSERTs only, partial failures, bisect, bounded retries, an on-failure queue", () => {
    const m = ofType("AWS::Lambda::EventSourceMapping")
      .map(([, r]) => r.Properties)
      .find((p) => text(p.EventSourceArn) === "${LookoutTable.StreamArn}")!;
    expect(text(m.FunctionName)).toBe("${PublishLambdaFunction.Arn}");
    expect(m.FunctionResponseTypes).toEqual(["ReportBatchItemFailures"]);
    expect(m.BisectBatchOnFunctionError).toBe(true);
    expect(m.MaximumRetryAttempts).toBeGreaterThan(0);
    expect(m.MaximumRecordAgeInSeconds).toBeGreaterThanOrEqual(60);
    // What was given up on can still be read from the stream (24 h) by the time it is looked at.
    expect(m.MaximumRecordAgeInSeconds).toBeLessThanOrEqual(6 * 3600);
    expect(m.StartingPosition).toBe("TRIM_HORIZON");
    expect(m.DestinationConfig.OnFailure.Destination).toEqual({ "Fn::GetAtt": ["PublishFailureQueue", "Arn"] });
    expect(m.FilterCriteria.Filters.map((f: Cfn) => JSON.parse(f.Pattern))).toEqual([
      { eventName: ["INSERT"], dynamodb: { NewImage: { item_type: { S: ["alert"] }, state: { S: ["pending"] } } } },
    ]);
    expect(fnResource("publish").Properties.Environment.Variables.EVENT_BUS_NAME).toEqual({ Ref: "LookoutBus" });
  });

  it("has the bus lookout-<stage>, an archive of every Lookout event, and one rule per configured route", () => {
    expect(resources.LookoutBus!.Properties.Name).toBe(`lookout-${STAGE}`);
    const archive = resources.LookoutArchive!.Properties;
    expect(archive.SourceArn).toEqual({ "Fn::GetAtt": ["LookoutBus", "Arn"] });
    expect(archive.EventPattern).toEqual({ source: ["lookout"] });
    expect(archive.RetentionDays).toBeGreaterThan(0);

    const routed = config.routes.filter((r) => r.slack.length || r.email);
    expect(routed.length).toBeGreaterThanOrEqual(2);
    // Two rules a route: its events of an incident (grouped by it) and those of none (each its own group).
    const ruleIds = ofType("AWS::Events::Rule").map(([id]) => id).filter((id) => id.startsWith("Route"));
    const ids = [...routed.map((r) => ruleLogicalId(r.name)), "RouteDefault"];
    expect(ruleIds.sort()).toEqual([...ids, ...ids.map((id) => `${id}Solo`)].sort());
    const halves = (id: string, pattern: Cfn, route: string, want: string[]) => {
      for (const [suffix, exists, group] of [["", true, "$.detail.incident_id"], ["Solo", false, "$.detail.id"]] as const) {
        const rule = resources[`${id}${suffix}`]!.Properties;
        expect(rule.Name).toBe(`lookout-${STAGE}-${route}${suffix ? "_solo" : ""}`);
        expect(rule.EventBusName).toEqual({ Ref: "LookoutBus" });
        expect(rule.EventPattern).toEqual({ ...pattern, detail: { ...(pattern.detail ?? {}), incident_id: [{ exists }] } });
        expect(rule.Targets.map((t: Cfn) => t.Arn["Fn::GetAtt"][0])).toEqual(want);
        for (const t of rule.Targets as Cfn[]) {
          expect(t.SqsParameters).toEqual({ MessageGroupId: INBOX_GROUP });
          expect(t.InputTransformer).toEqual({ InputPathsMap: { group, alert: "$.detail.id" }, InputTemplate: notifyTemplate(route) });
          expect(t.DeadLetterConfig).toEqual({ Arn: { "Fn::GetAtt": ["BusDeadLetterQueue", "Arn"] } });
        }
      }
    };
    // The default route (notify.default): every event to both notifiers, which keep what no route matches.
    halves("RouteDefault", { source: ["lookout"] }, "default", ["SlackInbox", "EmailInbox"]);
    config.routes.forEach((route, index) => {
      if (!route.slack.length && !route.email) return;
      halves(ruleLogicalId(route.name), eventPattern(config.routes, index), route.name, [...(route.slack.length ? ["SlackInbox"] : []), ...(route.email ? ["EmailInbox"] : [])]);
    });
    const health = resources.HealthRule!.Properties;
    expect(health.EventPattern).toEqual({ source: ["lookout"], "detail-type": [DETAIL_TYPES.health] });
    expect(health.Targets.map((t: Cfn) => text(t.Arn))).toEqual(["arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:${HealthLogGroup}"]);
  });

  it("reads the platform token from SSM Parameter Store, never from a value in the template", () => {
    expect(config.platform.tokenRef).toBe("ssm:/lookout/prod/platform-token");
    const param = `${ARN}:ssm:${REGION_ACCOUNT}:parameter/lookout/prod/platform-token`;
    expect(resourcesFor("poll", "ssm:GetParameter")).toEqual([param]);
    expect(resourcesFor("dispatch", "ssm:GetParameter")).toEqual([]);
    // No function gets a secret, or the name of one, through its environment. The Parameters and Secrets
    // extension's settings are how long it keeps a value and how much it logs.
    const extensionSettings = { SSM_PARAMETER_STORE_TTL: "300", SECRETS_MANAGER_TTL: "300", PARAMETERS_SECRETS_EXTENSION_LOG_LEVEL: "warn" };
    for (const [id, fn] of ofType("AWS::Lambda::Function")) {
      expect(fn.Properties.Environment.Variables, id).toMatchObject(extensionSettings);
      for (const [name, value] of Object.entries(fn.Properties.Environment?.Variables ?? {})) {
        if (name in extensionSettings) continue;
        expect(name, id).not.toMatch(/TOKEN|SECRET|PASSWORD|WEBHOOK|KEY/i);
        expect(JSON.stringify(value), id).not.toMatch(/xox[abp]-|hooks\.slack\.com|ssm:|secretsmanager:/);
      }
    }
    expect(JSON.stringify(template)).not.toMatch(/PLATFORM_API_TOKEN|xox[abp]-|hooks\.slack\.com\/services/);
  });

  it("ticks dispatch every minute with EventBridge Scheduler, through a role that can only invoke it", () => {
    const s = resources.DispatchSchedule!;
    expect(s.Type).toBe("AWS::Scheduler::Schedule");
    expect(s.Properties.ScheduleExpression).toBe("rate(1 minute)");
    expect(s.Properties.Target.Arn).toEqual({ "Fn::GetAtt": ["DispatchLambdaFunction", "Arn"] });
    const role = resources[s.Properties.Target.RoleArn["Fn::GetAtt"][0]]!;
    expect(role.Properties.AssumeRolePolicyDocument.Statement[0].Principal).toEqual({ Service: "scheduler.amazonaws.com" });
    const statements = role.Properties.Policies.flatMap((p: Cfn) => p.PolicyDocument.Statement);
    expect(statements).toEqual([
      { Sid: "InvokeDispatch", Effect: "Allow", Action: "lambda:InvokeFunction", Resource: { "Fn::GetAtt": ["DispatchLambdaFunction", "Arn"] } },
    ]);
    // Neither the scheduler nor Lambda's asynchronous invocation retries a tick: the next one is a minute away.
    expect(s.Properties.Target.RetryPolicy.MaximumRetryAttempts).toBe(0);
    const invokeConfig = ofType("AWS::Lambda::EventInvokeConfig").map(([, r]) => r.Properties).filter((p) => text(p.FunctionName) === "${DispatchLambdaFunction}");
    expect(invokeConfig).toEqual([expect.objectContaining({ MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 })]);
    // The only schedule: held digests are flushed by dispatch's tick, not by schedules of their own.
    expect(ofType("AWS::Scheduler::Schedule").map(([id]) => id)).toEqual(["DispatchSchedule"]);
  });

  it("flushes storm digests from dispatch's tick: it may invoke the notify functions, and the cloud's minute is within digest_within", () => {
    expect(resources.DigestScheduleRole).toBeUndefined();
    expect(resourcesFor("dispatch", "lambda:InvokeFunction")).toContain("${NotifySlackLambdaFunction.Arn}");
    expect(config.notify.digestWithinMs).toBeGreaterThanOrEqual(60_000);
  });

  it("serves the audit API and its web page over HTTP with IAM authorization, and Slack's clicks signed by Slack (payload v2)", () => {
    const routes = ofType("AWS::ApiGatewayV2::Route").map(([, r]) => r.Properties);
    expect(routes.map((r) => r.RouteKey).sort()).toEqual(["GET /", "GET /audit.css", "GET /audit.js", "GET /events", "GET /explain/{id}", "GET /report", "GET /uplot.css", "GET /uplot.js", "POST /slack/actions"]);
    // Slack cannot sign with AWS credentials: its route is open, and the handler verifies Slack's signature first.
    for (const r of routes) expect(r.AuthorizationType ?? "NONE", r.RouteKey).toBe(r.RouteKey === "POST /slack/actions" ? "NONE" : "AWS_IAM");
    const integrations = ofType("AWS::ApiGatewayV2::Integration").map(([, r]) => r.Properties);
    expect(integrations.map((i) => i.PayloadFormatVersion)).toEqual(["2.0", "2.0"]);
    expect(integrations.map((i) => text(i.IntegrationUri)).sort()).toEqual(["${AuditApiLambdaFunction.Arn}", "${SlackActionsLambdaFunction.Arn}"]);
  });

  it("alarms on dispatch's errors, the outbox's age and Lookout Health events; dispatch watches every queue of the template", () => {
    const alarms = ofType("AWS::CloudWatch::Alarm").map(([, a]) => a.Properties);
    expect(alarms.map((a) => [a.MetricName, ...a.Dimensions.map((d: Cfn) => text(d.Value))]).sort()).toEqual([
      ["Errors", "${DispatchLambdaFunction}"],
      ["IteratorAge", "${PublishLambdaFunction}"],
      ["TriggeredRules", "${LookoutBus}", resources.HealthRule!.Properties.Name],
    ]);
    for (const a of alarms) expect(a.AlarmActions).toEqual([{ Ref: "AlarmTopic" }]);
    // Every queue of the template, each by its URL, dead-letter queues marked: dispatch samples them.
    const env = resources.DispatchLambdaFunction!.Properties.Environment.Variables.WATCHED_QUEUES;
    const watched = JSON.parse(env["Fn::Sub"]) as Array<{ queue: string; url: string; dead_letter: boolean; what: string }>;
    // All but the change feed's loop: its one message is always there, delayed or in flight, by design.
    const queues = ofType("AWS::SQS::Queue").map(([id]) => id).filter((id) => id !== "FeedLoopQueue");
    expect(watched.map((q) => q.queue).sort()).toEqual(queues.sort());
    for (const q of watched) {
      expect(q.url).toBe(`\${${q.queue}}`);
      expect(q.dead_letter, q.queue).toBe(/DeadLetter|Failure/.test(q.queue));
      expect(q.what.length, q.queue).toBeGreaterThan(10);
    }
    expect(watched.filter((q) => q.dead_letter).map((q) => q.queue).sort()).toEqual(Object.keys(DEAD_LETTER_QUEUES).sort());
    // It may read their attributes, nothing more.
    const statements = resources.DispatchRole!.Properties.Policies[0].PolicyDocument.Statement as Cfn[];
    const watch = statements.find((st) => st.Sid === "WatchQueues")!;
    expect(watch.Action).toEqual(["sqs:GetQueueAttributes"]);
    expect(watch.Resource.map((r: Cfn) => r["Fn::GetAtt"][0]).sort()).toEqual(queues.sort());
  });

  it.skipIf(!cfnLintAvailable())("passes cfn-lint", () => {
    const r = lintTemplate(join(outDir, "cloudformation-template-update-stack.json"));
    expect(r.output).toBe("");
    expect(r.status).toBe(0);
  }, 60_000);
  if (!cfnLintAvailable()) console.warn("cfn-lint is not installed (pip install cfn-lint): the template lint is skipped");
});

// --- the bundles, run -----------------------------------------------------------------------------------

/**
 * Extracts a function's package into a directory, as Lambda does into /var/task: with nothing beside
 * it, a bundle that needed a package would fail to load.
 */
function extract(key: FunctionKey, dir: string): string {
  extractZip(join(outDir, `${key}.zip`), dir);
  return join(dir, `functions/${FUNCTIONS[key].suffix}.mjs`);
}

const RUNNER = `
const [file, eventJson] = process.argv.slice(2);
const m = await import(file);
if (eventJson === undefined) { console.log("RESULT " + JSON.stringify(typeof m.handler)); process.exit(0); }
const context = { functionName: "lookout-test", functionVersion: "$LATEST", invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:lookout-test",
  memoryLimitInMB: "256", awsRequestId: "00000000-0000-4000-8000-000000000000", logGroupName: "/aws/lambda/lookout-test", logStreamName: "test",
  callbackWaitsForEmptyEventLoop: true, getRemainingTimeInMillis: () => 30000, done() {}, fail() {}, succeed() {} };
const out = await m.handler(JSON.parse(eventJson), context);
console.log("RESULT " + JSON.stringify(out ?? null));
`;

/** Runs a bundle's handler in a Node process of its own, as Lambda would (with a fresh environment). */
function runBundle(dir: string, file: string, env: Record<string, string>, event?: unknown): Promise<unknown> {
  const runner = join(dir, "runner.mjs");
  writeFileSync(runner, RUNNER);
  const keep = ["PATH", "HOME", "TMPDIR", "SYSTEMROOT"];
  const base = Object.fromEntries(keep.filter((k) => process.env[k]).map((k) => [k, process.env[k]!]));
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [runner, file, ...(event === undefined ? [] : [JSON.stringify(event)])], {
      cwd: dir,
      env: { ...base, LAMBDA_TASK_ROOT: dir, POWERTOOLS_LOG_LEVEL: "SILENT", POWERTOOLS_METRICS_DISABLED: "true", AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.once("error", fail);
    child.once("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("RESULT "));
      if (code === 0 && line) done(JSON.parse(line.slice(7)));
      else fail(new Error(`${file} exited ${code}:\n${out.slice(-3000)}`));
    });
  });
}

describe("the packaged bundles", () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), "lookout-bundles-"));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("each load in Node and export a handler", async () => {
    for (const key of Object.keys(FUNCTIONS) as FunctionKey[]) {
      const dir = join(work, `load-${key}`);
      expect(await runBundle(dir, extract(key, dir), {}), key).toBe("function");
    }
  }, 60_000);

  it("auditApi: serves the audit web page from its package at GET /, before touching any AWS service", async () => {
    const dir = join(work, "audit-web");
    const get = (path: string) => ({
      version: "2.0", routeKey: `GET ${path}`, rawPath: path, rawQueryString: "", headers: {},
      requestContext: { http: { method: "GET", path } }, isBase64Encoded: false,
    });
    const file = extract("auditApi", dir);
    const page = (await runBundle(dir, file, {}, get("/"))) as { statusCode: number; headers: Record<string, string>; body: string };
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.body).toBe(readFileSync("web/audit/index.html", "utf8"));
    const script = (await runBundle(dir, file, {}, get("/audit.js"))) as { statusCode: number; body: string };
    expect(script.body).toBe(readFileSync("web/audit/audit.js", "utf8"));
  }, 60_000);

  describe.skipIf(!motoAvailable())("against moto_server", () => {
    let moto: MotoServer;
    const REGION = "us-east-1";
    const awsEnv = () => ({ AWS_ENDPOINT_URL: moto.endpoint, AWS_REGION: REGION, AWS_ACCESS_KEY_ID: "testing", AWS_SECRET_ACCESS_KEY: "testing" });

    beforeAll(async () => {
      moto = await startMoto();
      await moto.reset();
    }, 60_000);
    afterAll(async () => moto?.stop());

    it("dispatch: reads the bundled configuration (and no token: it never calls the platform), plans, and invokes the poll function with the polls", async () => {
      const clients = { credentials: { accessKeyId: "testing", secretAccessKey: "testing" }, region: REGION, endpoint: moto.endpoint };
      const ddb = new DynamoDBClient(clients);
      const sqs = new SQSClient(clients);
      // Lambda's asynchronous invocation (moto_server's Lambda runs functions only in Docker).
      const lambda = await startLambdaAsync();
      lambda.register("lookout-prod-poll", async () => undefined);
      try {
        await ddb.send(new CreateTableCommand(tableDefinition("lookout-stack-test")));
        // The template's WATCHED_QUEUES, each URL a queue of moto's; one dead letter waiting.
        const urls: Record<string, string> = {};
        for (const q of JSON.parse(resources.DispatchLambdaFunction!.Properties.Environment.Variables.WATCHED_QUEUES["Fn::Sub"]) as Array<{ queue: string }>) {
          urls[q.queue] = (await sqs.send(new CreateQueueCommand({ QueueName: `lookout-stack-test-${q.queue}` }))).QueueUrl!;
        }
        await sqs.send(new SendMessageCommand({ QueueUrl: urls.PollDeadLetterQueue, MessageBody: "{}" }));
        const watched = (resources.DispatchLambdaFunction!.Properties.Environment.Variables.WATCHED_QUEUES["Fn::Sub"] as string).replace(/\$\{(\w+)\}/g, (_, q: string) => urls[q]!);
        const feedLoop = (await sqs.send(new CreateQueueCommand({ QueueName: "lookout-stack-test-FeedLoopQueue" }))).QueueUrl!;
        const dir = join(work, "dispatch");
        const out = (await runBundle(dir, extract("dispatch", dir), {
          ...awsEnv(),
          AWS_ENDPOINT_URL_LAMBDA: lambda.url,
          TABLE_NAME: "lookout-stack-test",
          POLL_FUNCTION_NAME: "lookout-prod-poll",
          NOTIFY_SLACK_FUNCTION_NAME: "lookout-prod-notify-slack",
          NOTIFY_EMAIL_FUNCTION_NAME: "lookout-prod-notify-email",
          NOTIFY_HTTP_FUNCTION_NAME: "lookout-prod-notify-http",
          WATCHED_QUEUES: watched,
          FEED_LOOP_QUEUE_URL: feedLoop,
          LOOKOUT_CONFIG_FILE: join(dir, CONFIG_FILE),
        }, {})) as { planned: number; sent: number; flushed: string[] };
        // No loop beats yet (a new stack): dispatch started one, a tick's message at once.
        const tick = await sqs.send(new ReceiveMessageCommand({ QueueUrl: feedLoop, MaxNumberOfMessages: 10 }));
        expect((tick.Messages ?? []).map((m) => JSON.parse(m.Body!))).toEqual([{ lookout: "feed-tick" }]);
        expect(out.planned).toBeGreaterThan(0);
        expect(out).toMatchObject({ sent: out.planned, flushed: [] });
        const polls = lambda.accepted.map((a) => { expect(a.name).toBe("lookout-prod-poll"); return (a.event as { polls: unknown[] }).polls.length; });
        expect(polls.reduce((a, b) => a + b, 0)).toBe(out.planned);
        expect(Math.max(...polls)).toBeLessThanOrEqual(10);
        // The dead letter is said: a health alert in the outbox, naming its queue.
        const items = (await ddb.send(new ScanCommand({ TableName: "lookout-stack-test" }))).Items ?? [];
        const dead = items.map((i) => unmarshall(i)).filter((i) => i.item_type === "alert").filter((i) => i.detail?.transition === "dead_letters");
        expect(dead.map((i) => i.detail.health.subject)).toEqual(["PollDeadLetterQueue"]);
      } finally {
        ddb.destroy();
        sqs.destroy();
        await lambda.close();
      }
    }, 60_000);

    it("publish: puts a pending alert from the stream on the bus", async () => {
      const clients = { credentials: { accessKeyId: "testing", secretAccessKey: "testing" }, region: REGION, endpoint: moto.endpoint };
      const eb = new EventBridgeClient(clients);
      const sqs = new SQSClient(clients);
      try {
        await eb.send(new CreateEventBusCommand({ Name: "lookout-stack-test" }));
        const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "lookout-stack-test-bus" }));
        const queueArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }))).Attributes!.QueueArn!;
        await eb.send(new PutRuleCommand({ Name: "all", EventBusName: "lookout-stack-test", EventPattern: JSON.stringify({ source: ["lookout"] }) }));
        await eb.send(new PutTargetsCommand({ Rule: "all", EventBusName: "lookout-stack-test", Targets: [{ Id: "q", Arn: queueArn }] }));
        const detail = EXAMPLE_DETAILS["Deployment Failed"];
        const dir = join(work, "publish");
        const out = (await runBundle(dir, extract("publish", dir), { ...awsEnv(), EVENT_BUS_NAME: "lookout-stack-test" }, { Records: [alertInsert(detail)] })) as {
          batchItemFailures: unknown[];
        };
        expect(out.batchItemFailures).toEqual([]);
        const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 }));
        expect(got.Messages?.map((m) => JSON.parse(m.Body!).detail.id)).toEqual([detail.id]);
      } finally {
        eb.destroy();
        sqs.destroy();
      }
    }, 60_000);
  });
  if (!motoAvailable()) console.warn(`${MOTO_ABSENT} (the bundles' runs against AWS APIs)`);
});
