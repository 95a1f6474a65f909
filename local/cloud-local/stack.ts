/**
 * The packaged stack, running (docs/cloud-local.md): its resources created from the template
 * (provision.ts), the secrets its configuration names seeded where the functions read them, and what
 * AWS plays around the functions played here from the same template — each function's containers
 * (lambda-container.ts), Lambda's Invoke API and asynchronous retries (lambda-api.ts), the schedule, the
 * table's stream and the queues' event source mappings, the pipes, and the HTTP API.
 */
import { join } from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { CloudWatchLogsClient } from "@aws-sdk/client-cloudwatch-logs";
import { SQSClient } from "@aws-sdk/client-sqs";
import { PutParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { CreateSecretCommand, PutSecretValueCommand, ResourceExistsException, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { CreateEmailIdentityCommand, SESv2Client } from "@aws-sdk/client-sesv2";
import { type Account, type Cfn, type Template, TemplateError } from "./template.js";
import { provision, type ProvisionReport } from "./provision.js";
import { type FunctionDefinition, FunctionHost } from "./lambda-container.js";
import { type AsyncInvokeConfig, type LambdaApi, startLambdaApi } from "./lambda-api.js";
import { ratePeriodMs, type RunningSchedule, runSchedule } from "./scheduler.js";
import { type Activity, functionNameOf } from "./call-function.js";
import { type HttpApi, routesFromTemplate, startHttpApi } from "./http-api.js";
import { StreamMapping, type StreamMappingProperties } from "./stream-mapping.js";
import { SqsMapping, type SqsMappingProperties } from "./sqs-mapping.js";
import { SqsPipe, type SqsPipeProperties } from "./pipe.js";
import { hasSecretsExtension, type SecretsExtension, startSecretsExtension } from "./secrets-extension.js";

/** What moves events between the parts on its own: each can be started, stopped, and drained of what it holds now. */
interface Mover {
  drain(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

/** Where the emulators listen. */
export interface Emulators {
  /** DynamoDB Local (the table and its stream). */
  dynamodb: string;
  /** moto_server (queues, bus, rules, logs, SSM, Secrets Manager, SES). */
  moto: string;
}

export interface CloudLocalStackOptions {
  template: Template;
  /** The directory holding the template's zips (`.serverless`). */
  packageDir: string;
  account: Account;
  emulators: Emulators;
  /** Where task roots and function logs go. */
  workDir: string;
  /** Values for the configuration's `ssm:` and `secretsmanager:` references, seeded before anything runs. */
  secrets?: Record<string, string>;
  /** SES identities to verify (the configuration's sender), as an account's would be. */
  sesIdentities?: string[];
  /** Extra environment for every container (`LOOKOUT_SLACK_API_URL` for the local Slack). */
  env?: Record<string, string>;
  /** Waits before an asynchronous event's retries (default Lambda's minute and two). */
  asyncRetryDelaysMs?: readonly number[];
  /** The HTTP API's port (default a free one). */
  httpPort?: number;
  /**
   * Run on its own (the command): the schedules at their rate, the stream, queues and pipes polled. Or
   * only when told (tests): `fireSchedules()` and `settle()`. Default true.
   */
  continuous?: boolean;
  activity?: Activity;
}

// DynamoDB Local takes only letters and digits in an access key.
const CREDENTIALS = { accessKeyId: "cloudlocal", secretAccessKey: "cloudlocal" };

export class CloudLocalStack {
  readonly functions = new Map<string, FunctionHost>();
  report!: ProvisionReport;
  lambda!: LambdaApi;
  /** The HTTP API in front of the audit function, when the template has one. */
  httpApi: HttpApi | undefined;
  private readonly schedules: RunningSchedule[] = [];
  private readonly movers: Mover[] = [];
  private readonly clients;
  private readonly queueUrls = new Map<string, string>();
  /** The Parameters and Secrets extension, played when a function has its layer. */
  private secretsExtension: SecretsExtension | undefined;

  constructor(private readonly opts: CloudLocalStackOptions) {
    const { region } = opts.account;
    const moto = { endpoint: opts.emulators.moto, region, credentials: CREDENTIALS };
    const ddb = { endpoint: opts.emulators.dynamodb, region, credentials: CREDENTIALS };
    this.clients = {
      dynamodb: new DynamoDBClient(ddb),
      streams: new DynamoDBStreamsClient(ddb),
      sqs: new SQSClient(moto),
      events: new EventBridgeClient(moto),
      logs: new CloudWatchLogsClient(moto),
      ssm: new SSMClient(moto),
      secrets: new SecretsManagerClient(moto),
      ses: new SESv2Client(moto),
    };
  }

  get template(): Template {
    return this.opts.template;
  }

  get emulators(): Emulators {
    return this.opts.emulators;
  }

  /** The environment every container gets besides its own: the account, and the emulators as AWS's endpoints. */
  private baseEnv(lambdaUrl: string): Record<string, string> {
    const { region } = this.opts.account;
    return {
      AWS_REGION: region,
      AWS_DEFAULT_REGION: region,
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL: this.opts.emulators.moto,
      AWS_ENDPOINT_URL_DYNAMODB: this.opts.emulators.dynamodb,
      AWS_ENDPOINT_URL_LAMBDA: lambdaUrl,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      ...this.opts.env,
    };
  }

  /** Creates the resources, seeds the secrets, and starts everything the template plays. */
  async start(): Promise<void> {
    const { template, account } = this.opts;
    const { resolver, report } = await provision(template, account, this.clients);
    this.report = report;
    await this.seed();
    for (const [id, r] of Object.entries(template.Resources)) {
      if (r.Type === "AWS::SQS::Queue") {
        const p = resolver.get(id)!;
        this.queueUrls.set(p.attrs.Arn!, p.ref);
      }
    }
    const resolved = (id: string, omit: string[] = []): Cfn => {
      const props = { ...(template.Resources[id]!.Properties ?? {}) };
      for (const k of omit) delete props[k];
      return resolver.resolve(props, `Resources.${id}.Properties`) as Cfn;
    };
    const ofType = (type: string) => Object.keys(template.Resources).filter((id) => template.Resources[id]!.Type === type);

    const asyncConfig = new Map<string, AsyncInvokeConfig>();
    for (const id of ofType("AWS::Lambda::EventInvokeConfig")) {
      const p = resolved(id);
      asyncConfig.set(functionNameOf(String(p.FunctionName)), {
        maximumRetryAttempts: p.MaximumRetryAttempts ?? 2,
        maximumEventAgeSec: p.MaximumEventAgeInSeconds ?? 21_600,
        ...(p.DestinationConfig?.OnFailure?.Destination ? { onFailure: String(p.DestinationConfig.OnFailure.Destination) } : {}),
      });
    }
    this.lambda = await startLambdaApi({
      functions: this.functions,
      asyncConfig,
      sqs: this.clients.sqs,
      queueUrlOf: (arn) => this.queueUrlOf(arn),
      ...(this.opts.asyncRetryDelaysMs ? { retryDelaysMs: this.opts.asyncRetryDelaysMs } : {}),
      ...(this.opts.activity ? { activity: this.opts.activity } : {}),
    });
    const baseEnv = this.baseEnv(this.lambda.url);
    for (const id of ofType("AWS::Lambda::Function")) {
      const def = this.functionDefinition(id, resolved(id, ["Code", "Role"]), template.Resources[id]!.Properties!);
      // A function with the extension's layer reaches it on localhost, as in Lambda.
      if (hasSecretsExtension(def.layers)) this.secretsExtension ??= await startSecretsExtension(this.clients);
      const env = hasSecretsExtension(def.layers) ? { ...baseEnv, ...this.secretsExtension!.env } : baseEnv;
      this.functions.set(def.name, new FunctionHost(def, { workDir: join(this.opts.workDir, "functions"), baseEnv: env, ...(this.opts.activity ? { activity: this.opts.activity } : {}) }));
    }
    await this.startHttpApi((v, p) => resolver.resolve(v, p));
    this.startMovers(ofType, resolved);
    for (const id of ofType("AWS::Scheduler::Schedule")) {
      const p = resolved(id);
      const target = p.Target as Cfn;
      if (p.State === "DISABLED") continue;
      const name = functionNameOf(String(target.Arn));
      if (!this.functions.has(name)) throw new TemplateError(`Resources.${id}.Properties.Target.Arn`, `${target.Arn} is not a function of this template`);
      const period = ratePeriodMs(String(p.ScheduleExpression), `Resources.${id}.Properties.ScheduleExpression`);
      const input = target.Input === undefined ? {} : JSON.parse(String(target.Input));
      this.schedules.push(runSchedule(period, () => {
        this.opts.activity?.(`schedule ${p.Name ?? id} → ${name}`);
        this.lambda.enqueue(name, input);
      }, { running: this.opts.continuous ?? true }));
    }
  }

  private async startHttpApi(resolve: (value: unknown, path: string) => unknown): Promise<void> {
    const { template, account } = this.opts;
    const routes = routesFromTemplate(template.Resources, (v, p) => functionNameOf(String(resolve(v, p))));
    if (!routes.length) return;
    this.httpApi = await startHttpApi({
      routes, invoke: this.lambda.invoke, apiId: "cloudlocal", accountId: account.accountId, region: account.region,
      ...(this.opts.httpPort !== undefined ? { port: this.opts.httpPort } : {}),
      ...(this.opts.activity ? { activity: this.opts.activity } : {}),
    });
  }

  /** The table's stream and the queues' mappings, and the pipes: what the template plays between the bus and the functions. */
  private startMovers(ofType: (type: string) => string[], resolved: (id: string) => Cfn): void {
    const activity = this.opts.activity ? { activity: this.opts.activity } : {};
    const onError = (err: unknown) => this.opts.activity?.(`error: ${(err as Error).message}`);
    const common = { invoke: this.lambda.invoke, sqs: this.clients.sqs, queueUrlOf: (arn: string) => this.queueUrlOf(arn), onError, ...activity };
    for (const id of ofType("AWS::Lambda::EventSourceMapping")) {
      const p = resolved(id);
      if (p.Enabled === false) continue;
      const source = String(p.EventSourceArn);
      if (source.includes(":dynamodb:") || source.includes("/stream/")) {
        const table = /:table\/([^/]+)\/stream\//.exec(source)?.[1];
        if (!table) throw new TemplateError(`Resources.${id}.Properties.EventSourceArn`, `${source} is not a table's stream`);
        this.movers.push(new StreamMapping(p as StreamMappingProperties, {
          ...common, dynamodb: this.clients.dynamodb, streams: this.clients.streams, tableName: table, dataDir: join(this.opts.workDir, "mappings", id),
        }));
      } else if (source.includes(":sqs:")) {
        // The change feed's loop is not played: its ticks are SQS delays of real seconds, while the
        // rehearsal moves a simulated clock by passes. Dispatch reads the feed each pass instead, as it
        // does whenever the loop is lost (docs/cloud-local.md).
        if (String(p.FunctionName).endsWith("-feed-tick")) continue;
        this.movers.push(new SqsMapping(p as SqsMappingProperties, common));
      } else throw new TemplateError(`Resources.${id}.Properties.EventSourceArn`, `${source}: cloud-local plays DynamoDB stream and SQS mappings only`);
    }
    for (const id of ofType("AWS::Pipes::Pipe")) this.movers.push(new SqsPipe(resolved(id) as SqsPipeProperties, common));
    if (this.opts.continuous ?? true) for (const m of this.movers) m.start();
  }

  /**
   * Until nothing moves: every asynchronous event run (retries included), the stream and the queues
   * drained and their batches handed over. What waits for a visibility timeout is not waited for.
   */
  async settle(): Promise<void> {
    for (let quiet = 0; quiet < 2;) {
      await this.lambda.settled();
      let moved = 0;
      for (const m of this.movers) moved += await m.drain();
      quiet = moved === 0 && this.lambda.inFlight() === 0 ? quiet + 1 : 0;
    }
  }

  /** Fires every schedule now, as the Scheduler does at its rate. */
  fireSchedules(): void {
    for (const s of this.schedules) s.fire();
  }

  queueUrlOf(arn: string): string {
    const url = this.queueUrls.get(arn);
    if (!url) throw new Error(`${arn} is not a queue of this template`);
    return url;
  }

  async stop(): Promise<void> {
    for (const s of this.schedules) s.stop();
    await Promise.all(this.movers.map((m) => m.stop()));
    await this.httpApi?.close();
    await this.lambda?.close();
    await Promise.all([...this.functions.values()].map((f) => f.stop()));
    await this.secretsExtension?.close();
    for (const c of Object.values(this.clients)) c.destroy();
  }

  private functionDefinition(id: string, p: Cfn, raw: Cfn): FunctionDefinition {
    const path = `Resources.${id}.Properties`;
    const key = raw.Code?.S3Key;
    if (typeof key !== "string") throw new TemplateError(`${path}.Code.S3Key`, "no packaged zip named (cloud-local runs what `serverless package` made)");
    const name = String(p.FunctionName ?? `${this.opts.account.stackName}-${id}`);
    const variables = (p.Environment?.Variables ?? {}) as Record<string, unknown>;
    return {
      logicalId: id,
      name,
      arn: `arn:aws:lambda:${this.opts.account.region}:${this.opts.account.accountId}:function:${name}`,
      handler: String(p.Handler),
      runtime: String(p.Runtime ?? "nodejs22.x"),
      memoryMb: Number(p.MemorySize ?? 128),
      timeoutSec: Number(p.Timeout ?? 3),
      environment: Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, String(v)])),
      layers: Array.isArray(p.Layers) ? p.Layers.map(String) : [],
      zip: join(this.opts.packageDir, key.split("/").pop()!),
      ...(p.ReservedConcurrentExecutions !== undefined ? { reservedConcurrency: Number(p.ReservedConcurrentExecutions) } : {}),
    };
  }

  /** The secrets and the sender identity an account would hold before the stack is deployed. */
  private async seed(): Promise<void> {
    for (const [ref, value] of Object.entries(this.opts.secrets ?? {})) {
      const [scheme, ...rest] = ref.split(":");
      const name = rest.join(":");
      if (scheme === "ssm") {
        await this.clients.ssm.send(new PutParameterCommand({ Name: name, Value: value, Type: "SecureString", Overwrite: true }));
      } else if (scheme === "secretsmanager") {
        try {
          await this.clients.secrets.send(new CreateSecretCommand({ Name: name, SecretString: value }));
        } catch (err) {
          if (!(err instanceof ResourceExistsException)) throw err;
          await this.clients.secrets.send(new PutSecretValueCommand({ SecretId: name, SecretString: value }));
        }
      } else throw new Error(`${ref}: not a secret reference the deployed functions read (ssm:/… or secretsmanager:…)`);
    }
    for (const identity of this.opts.sesIdentities ?? []) {
      try {
        await this.clients.ses.send(new CreateEmailIdentityCommand({ EmailIdentity: identity }));
      } catch (err) {
        if ((err as Error).name !== "AlreadyExistsException") throw err;
      }
    }
  }
}
