/**
 * The generated part of the stack (infra/stack.ts) for configurations other than the example, without
 * packaging: what each role may read follows from the secrets the file names, routes without receivers
 * get no rule, and configurations that cannot be deployed are refused with one line saying why.
 */
import { describe, expect, it } from "vitest";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import {
  DeployConfigError,
  type FunctionKey,
  type Statement,
  fromConfig,
  functionLayers,
  functionStatements,
  functionDefines,
  loadDeployConfig,
  packagedDefines,
  ruleAndPolicyResources,
  SECRETS_EXTENSION_ACCOUNTS,
  SECRETS_EXTENSION_VERSION,
  secretStatements,
  secretsExtensionLayer,
} from "../../../infra/stack.js";

const ROOT = resolve(import.meta.dirname, "../../..");
const opts = { service: "lookout", stage: "dev" };
const fixture = (name: string) => `test/fixtures/stack/${name}`;

const actions = (statements: Statement[]) => [...new Set(statements.flatMap((s) => s.Action))].sort();
const resourcesOf = (statements: Statement[], action: string) =>
  statements.filter((s) => s.Action.includes(action)).flatMap((s) => (s.Resource === "*" ? ["*"] : s.Resource.map((r) => JSON.stringify(r))));

describe("the stack generated from a configuration", () => {
  it("Slack only: no SES anywhere, no email queue policy, no rule for a silencing route, secrets by name and by ARN", () => {
    const { config } = loadDeployConfig(ROOT, fixture("slack-only.yaml"));
    const s = functionStatements(config);
    for (const key of Object.keys(s) as FunctionKey[]) expect(actions(s[key]).filter((a) => a.startsWith("ses:")), key).toEqual([]);
    // The platform token is a Secrets Manager secret: poll reads it, nothing from SSM; dispatch reads no secret.
    expect(actions(s.poll)).toContain("secretsmanager:GetSecretValue");
    expect(actions(s.poll)).not.toContain("ssm:GetParameter");
    expect(resourcesOf(s.poll, "secretsmanager:GetSecretValue")).toEqual([
      JSON.stringify({ "Fn::Sub": "arn:${AWS::Partition}:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:lookout/dev/platform-token-??????" }),
    ]);
    expect(actions(s.dispatch).filter((a) => /^(ssm|secretsmanager|kms):/.test(a))).toEqual([]);
    // notify-slack: the route's webhook (SSM), bot token (a secret given by its full ARN), and the fallback.
    expect(resourcesOf(s.notifySlack, "ssm:GetParameter")).toEqual([
      JSON.stringify({ "Fn::Sub": "arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter/lookout/dev/slack-fallback" }),
      JSON.stringify({ "Fn::Sub": "arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter/lookout/dev/slack-webhook" }),
    ]);
    expect(resourcesOf(s.notifySlack, "secretsmanager:GetSecretValue")).toEqual([
      JSON.stringify("arn:aws:secretsmanager:eu-west-1:123456789012:secret:lookout/dev/bot-AbCdEf"),
    ]);
    // notify-email can fail over to the Slack fallback too.
    expect(resourcesOf(s.notifyEmail, "ssm:GetParameter")).toEqual([
      JSON.stringify({ "Fn::Sub": "arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter/lookout/dev/slack-fallback" }),
    ]);

    const { cloudformation } = fromConfig(ROOT, fixture("slack-only.yaml"), opts);
    const ids = Object.keys(cloudformation.Resources);
    expect(ids.filter((id) => id.startsWith("Route"))).toEqual(["RouteEverything", "RouteEverythingSolo"]);
    expect(ids).toContain("SlackInboxPolicy");
    expect(ids).not.toContain("EmailInboxPolicy");
    expect(ids).not.toContain("AlarmEmailSubscription");
  });

  it("email with a Slack fallback: the email function sends from the sender's identity and reads the fallback's token", () => {
    const { config } = loadDeployConfig(ROOT, fixture("email-fallback-slack.yaml"));
    const s = functionStatements(config);
    expect(resourcesOf(s.notifyEmail, "ses:SendRawEmail")).toEqual([
      JSON.stringify({ "Fn::Sub": "arn:${AWS::Partition}:ses:${AWS::Region}:${AWS::AccountId}:identity/alerts@mail.example.org" }),
      JSON.stringify({ "Fn::Sub": "arn:${AWS::Partition}:ses:${AWS::Region}:${AWS::AccountId}:identity/mail.example.org" }),
    ]);
    expect(resourcesOf(s.notifyEmail, "ssm:GetParameter")).toEqual([
      JSON.stringify({ "Fn::Sub": "arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter/lookout/dev/slack-bot-token" }),
    ]);
    // No email fallback: the Slack function never sends email.
    expect(actions(s.notifySlack).filter((a) => a.startsWith("ses:"))).toEqual([]);
    const { cloudformation } = fromConfig(ROOT, fixture("email-fallback-slack.yaml"), { ...opts, alarmEmail: "oncall@example.org" });
    expect(Object.keys(cloudformation.Resources)).toEqual(expect.arrayContaining(["EmailInboxPolicy", "AlarmEmailSubscription"]));
    expect(Object.keys(cloudformation.Resources)).not.toContain("SlackInboxPolicy");
  });

  it("escalation: whom it pages is sent to like a route's receivers — its token read, SES from the sender, the route's rule feeding the email function too", () => {
    const { config } = loadDeployConfig(ROOT, fixture("escalate.yaml"));
    const s = functionStatements(config);
    expect(resourcesOf(s.notifySlack, "ssm:GetParameter")).toEqual([
      JSON.stringify({ "Fn::Sub": "arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter/lookout/dev/slack-leads-token" }),
      JSON.stringify({ "Fn::Sub": "arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter/lookout/dev/slack-webhook" }),
    ]);
    expect(resourcesOf(s.notifyEmail, "ses:SendRawEmail")).toHaveLength(2);
    // No new grant: dispatch queries the due entries as it queries held alerts.
    expect(actions(s.dispatch).filter((a) => a.startsWith("dynamodb:"))).toEqual(["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"]);
    const { cloudformation } = fromConfig(ROOT, fixture("escalate.yaml"), opts);
    const targets = (id: string) => (cloudformation.Resources[id] as { Properties: { Targets: Array<{ Arn: unknown }> } }).Properties.Targets.map((t) => JSON.stringify(t.Arn));
    expect(targets("RouteProd")).toEqual([expect.stringContaining("SlackInbox"), expect.stringContaining("EmailInbox")]);
    expect(Object.keys(cloudformation.Resources)).toEqual(expect.arrayContaining(["SlackInboxPolicy", "EmailInboxPolicy"]));
  });

  it("decrypts only through SSM or Secrets Manager, and only the parameters and secrets it names (encryption context)", () => {
    const s = secretStatements(["ssm:/a/b", "secretsmanager:c", "ssm:/a/d"]);
    const kms = s.filter((x) => x.Action.includes("kms:Decrypt"));
    const at = (r: string) => ({ "Fn::Sub": `arn:\${AWS::Partition}:${r}` });
    expect(kms.map((x) => x.Condition)).toEqual([
      {
        StringEquals: {
          "kms:ViaService": { "Fn::Sub": "ssm.${AWS::Region}.amazonaws.com" },
          "kms:EncryptionContext:PARAMETER_ARN": [at("ssm:${AWS::Region}:${AWS::AccountId}:parameter/a/b"), at("ssm:${AWS::Region}:${AWS::AccountId}:parameter/a/d")],
        },
      },
      {
        StringEquals: { "kms:ViaService": { "Fn::Sub": "secretsmanager.${AWS::Region}.amazonaws.com" } },
        StringLike: { "kms:EncryptionContext:SecretARN": [at("secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:c-??????")] },
      },
    ]);
    expect(secretStatements([])).toEqual([]);
    expect(secretStatements(["env:X"])).toEqual([]);
    expect(() => secretStatements(["ssm:/bad name"])).toThrow(DeployConfigError);
  });

  it("refuses routes whose two rules would share a logical id (a route named <name>-solo beside <name>)", () => {
    const { config } = loadDeployConfig(ROOT, fixture("slack-only.yaml"));
    const everything = config.routes.find((r) => r.name === "everything")!;
    for (const routes of [[everything, { ...everything, name: "everything-solo" }], [{ ...everything, name: "everything-solo" }, everything]]) {
      expect(() => ruleAndPolicyResources({ ...config, routes }, opts)).toThrow(/routes share the rule id RouteEverythingSolo/);
    }
  });

  it("refuses env: secrets, naming each field and what to use instead, a problem a line", () => {
    const suffix = "is read from the environment, which the deployed functions do not get; use ssm:/… (SecureString) or secretsmanager:…";
    expect(() => loadDeployConfig(ROOT, fixture("env-secrets.yaml"))).toThrow(
      `test/fixtures/stack/env-secrets.yaml: platform.token: env:PLATFORM_API_TOKEN ${suffix}\ntest/fixtures/stack/env-secrets.yaml: routes[0].slack.webhook_url: env:SLACK_WEBHOOK ${suffix}`,
    );
  });

  it("PagerDuty, webhook and Teams: their rules send to the HTTP inbox, and notify-http alone reads their secrets", () => {
    const { config } = loadDeployConfig(ROOT, fixture("http-receivers.yaml"));
    const statements = functionStatements(config);
    const ssm = (key: FunctionKey) => resourcesOf(statements[key], "ssm:GetParameter").map((r) => r.replace(/.*parameter/, "")).sort();
    expect(ssm("notifyHttp")).toEqual(['/lookout/dev/hook-secret"}', '/lookout/dev/hook-url"}', '/lookout/dev/pagerduty"}', '/lookout/dev/teams"}']);
    expect(ssm("notifySlack")).toEqual([]);
    expect(ssm("notifyEmail")).toEqual([]);
    expect(actions(statements.notifyHttp)).not.toContain("ses:SendEmail");
    expect(resourcesOf(statements.notifyHttp, "sqs:ReceiveMessage")).toEqual([JSON.stringify({ "Fn::GetAtt": ["HttpQueue", "Arn"] })]);
    const resources = ruleAndPolicyResources(config, opts);
    const targets = (id: string) => (resources[id] as { Properties: { Targets: Array<{ Id: string }> } }).Properties.Targets.map((t) => t.Id);
    expect(targets("RoutePages")).toEqual(["http"]);
    expect(targets("RouteBot")).toEqual(["http"]);
    expect(resources.HttpInboxPolicy).toBeDefined();
    expect(resources.SlackInboxPolicy).toBeUndefined();
  });

  it("refuses PagerDuty, webhook and Teams in notify.default and notify.fallback, which only one machine delivers", () => {
    expect(() => loadDeployConfig(ROOT, fixture("http-fallback.yaml"))).toThrow(
      "test/fixtures/stack/http-fallback.yaml: notify.fallback.pagerduty: delivered by lookout start/run on one machine; in the cloud notify.fallback names Slack or email only",
    );
  });

  it("refuses a configuration outside the project and rule names EventBridge would refuse", () => {
    expect(() => loadDeployConfig(ROOT, "/etc/lookout.yaml")).toThrow(/must be inside/);
    expect(() => fromConfig(ROOT, "lookout.example.yaml", { service: "lookout", stage: "staging-for-the-load-tests-of-the-new-cluster" })).toThrow(
      /rule names longer than 64 characters: lookout-staging-for-the-load-tests-of-the-new-cluster-prod-failures/,
    );
  });

  it("builds in the configuration as the loader checked it, which the functions take as it is (lib/app/cloud/config.ts)", () => {
    for (const file of ["lookout.example.yaml", ...["slack-only", "email-fallback-slack", "escalate", "http-receivers"].map((f) => fixture(`${f}.yaml`))]) {
      const defines = packagedDefines(ROOT, file);
      const { config } = loadDeployConfig(ROOT, file);
      // A define is source text: a JSON string literal of the configuration's JSON.
      const packaged = JSON.parse(JSON.parse(defines.LOOKOUT_PACKAGED_CONFIG!) as string) as Record<string, unknown>;
      expect(packaged.source, file).toBeUndefined();
      expect({ ...packaged, source: config.source }, file).toEqual(config);
    }
    expect(packagedDefines(ROOT, "lookout.example.yaml")).toMatchObject({ LOOKOUT_FALLBACK_EMAIL: "true", LOOKOUT_FALLBACK_SLACK: "false" });
  });

  it("builds into each function the kinds of secret reference its role lets it read, by its bundle's name", () => {
    // slack-only.yaml: the platform token in Secrets Manager; Slack webhooks in SSM, a bot token in Secrets Manager; a Slack fallback.
    const defines = functionDefines(loadDeployConfig(ROOT, fixture("slack-only.yaml")).config);
    const kinds = (suffix: string) => ({ ssm: defines[suffix]!.LOOKOUT_SECRETS_SSM, secretsmanager: defines[suffix]!.LOOKOUT_SECRETS_SECRETSMANAGER });
    expect(kinds("poll")).toEqual({ ssm: "false", secretsmanager: "true" });
    expect(kinds("notify-slack")).toEqual({ ssm: "true", secretsmanager: "true" });
    expect(kinds("notify-email")).toEqual({ ssm: "true", secretsmanager: "false" });
    for (const suffix of ["dispatch", "publish", "audit-api"]) expect(kinds(suffix), suffix).toEqual({ ssm: "false", secretsmanager: "false" });
  });

  it("gives the Parameters and Secrets extension's layer to the functions that read a secret, the Region's or the one given", () => {
    const { config } = loadDeployConfig(ROOT, fixture("slack-only.yaml"));
    const arm64 = (region: string) => `arn:aws:lambda:${region}:${SECRETS_EXTENSION_ACCOUNTS[region]}:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:${SECRETS_EXTENSION_VERSION}`;
    const layers = functionLayers(config, { ...opts, region: "eu-west-1" });
    // slack-only.yaml: poll and feedTick read the token, every notify function a Slack reference (its own or the fallback's).
    for (const key of ["poll", "feedTick", "notifySlack", "notifyEmail", "notifyHttp"] as const) expect(layers[key], key).toEqual([arm64("eu-west-1")]);
    for (const key of ["dispatch", "publish", "auditApi"] as const) expect(layers[key], key).toEqual([]);
    expect(secretsExtensionLayer({})).toBe(arm64("us-east-1"));
    expect(secretsExtensionLayer({ region: "ap-northeast-1" })).toBe("arn:aws:lambda:ap-northeast-1:133490724326:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:11");
    // A Region the table does not know: one line naming the parameter that gives it; given, it is used.
    expect(() => functionLayers(config, { ...opts, region: "af-south-1" })).toThrow(
      new DeployConfigError(`af-south-1: no AWS Parameters and Secrets Lambda Extension layer is known here for this Region; give its arm64 layer's ARN as AWS lists it (docs/deploy.md, "Secrets") with --param="secretsExtensionLayer=arn:aws:lambda:af-south-1:<account>:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:<version>"`),
    );
    const given = "arn:aws:lambda:af-south-1:317013901791:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:9";
    expect(functionLayers(config, { ...opts, region: "af-south-1", secretsExtensionLayer: ` ${given} ` }).poll).toEqual([given]);
    expect(() => secretsExtensionLayer({ secretsExtensionLayer: "AWS-Parameters-and-Secrets-Lambda-Extension-Arm64" })).toThrow(/^param secretsExtensionLayer: AWS-Parameters-and-Secrets-Lambda-Extension-Arm64 is not a Lambda layer version ARN/);
    // No function reads a secret: no layer, and no Region need be known.
    const { config: envOnly } = loadDeployConfig(ROOT, fixture("http-receivers.yaml"));
    const none = functionLayers({ ...envOnly, platform: { ...envOnly.platform, tokenRef: "env:PLATFORM_API_TOKEN" }, routes: [], notify: { ...envOnly.notify } } as typeof envOnly, { ...opts, region: "af-south-1" });
    expect(Object.values(none).flat()).toEqual([]);
  });

  it("serverless's resolver: the generated stack, or one line that says what to change", async () => {
    const resolver = createRequire(import.meta.url)("../../../infra/from-config.cjs") as (a: {
      resolveVariable: (v: string) => Promise<unknown>;
    }) => Promise<{ configFile: string; cloudformation: { Resources: Record<string, unknown> } }>;
    const vars: Record<string, string> = { "sls:stage": "prod", "self:service": "lookout", "param:alarmEmail": "" };
    const resolveVariable = async (v: string) => vars[v];
    const saved = process.env.LOOKOUT_CONFIG;
    try {
      process.env.LOOKOUT_CONFIG = "lookout.example.yaml";
      const out = await resolver({ resolveVariable });
      expect(out.configFile).toBe("lookout.example.yaml");
      expect(Object.keys(out.cloudformation.Resources)).toContain("RouteProdFailures");

      process.env.LOOKOUT_CONFIG = "no-such-lookout.yaml";
      const err = (await resolver({ resolveVariable }).catch((e: Error) => e)) as Error;
      expect(err.message).toMatch(/^Lookout configuration: .*no-such-lookout\.yaml: not found \(set LOOKOUT_CONFIG/);
      expect(err.stack).toBe(err.message);
    } finally {
      if (saved === undefined) delete process.env.LOOKOUT_CONFIG;
      else process.env.LOOKOUT_CONFIG = saved;
    }
  });
});
