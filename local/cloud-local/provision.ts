/**
 * Creates the packaged stack's resources on one machine from its CloudFormation template, in
 * CloudFormation's order (docs/cloud-local.md): the table (keys, indexes, stream, TTL) in DynamoDB
 * Local; the queues (with their redrive), the bus and its rules with their targets in moto_server.
 * What the runner plays itself (functions, event source mappings, pipes, the schedule, the HTTP API,
 * the functions' retry settings) is named, with the physical ids the template's references need; what
 * one machine does not enforce (IAM roles, alarms, encryption, backups, the bucket, the topic) is listed
 * as such, so that nothing of the template is passed over in silence.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { CreateEventBusCommand, type EventBridgeClient, PutRuleCommand, PutTargetsCommand, ResourceAlreadyExistsException as BusExists } from "@aws-sdk/client-eventbridge";
import { type CloudWatchLogsClient, CreateLogGroupCommand, ResourceAlreadyExistsException as LogGroupExists } from "@aws-sdk/client-cloudwatch-logs";
import { ensureTableFrom, tableDifferences } from "../../lib/store/table.js";
import { type Account, type Cfn, creationOrder, type Physical, Resolver, type Template, TemplateError } from "./template.js";

export interface ProvisionClients {
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
  events: EventBridgeClient;
  logs: CloudWatchLogsClient;
}

/** What became of each resource of the template. */
export interface ProvisionReport {
  /** Created on DynamoDB Local or moto_server, with the properties one machine does not apply (encryption, backups, tags). */
  created: Array<{ id: string; type: string; ref: string; ignored: string[] }>;
  /** Played by the cloud-local runner (functions, mappings, pipes, schedule, HTTP API). */
  played: Array<{ id: string; type: string }>;
  /** Not enforced on one machine, and why. */
  notEmulated: Array<{ id: string; type: string; why: string }>;
}

export interface Provisioned {
  resolver: Resolver;
  report: ProvisionReport;
}

const PLAYED = new Set([
  "AWS::Lambda::Function", "AWS::Lambda::EventSourceMapping", "AWS::Lambda::EventInvokeConfig", "AWS::Pipes::Pipe",
  "AWS::Scheduler::Schedule", "AWS::ApiGatewayV2::Api", "AWS::ApiGatewayV2::Stage", "AWS::ApiGatewayV2::Route",
  "AWS::ApiGatewayV2::Integration", "AWS::Lambda::Permission",
]);

const NOT_EMULATED: Record<string, string> = {
  "AWS::IAM::Role": "permissions are not enforced on one machine (test/integration/infra/stack.test.ts checks each role against its function's calls)",
  "AWS::CloudWatch::Alarm": "no CloudWatch here: `lookout status` and the health events say what an alarm would",
  "AWS::SQS::QueuePolicy": "policies are not enforced on one machine",
  "AWS::Logs::ResourcePolicy": "policies are not enforced on one machine",
  "AWS::S3::Bucket": "the deployment bucket: the zips are read from the package directory",
  "AWS::S3::BucketPolicy": "policies are not enforced on one machine",
  "AWS::SNS::Topic": "the alarms' topic: no alarms here",
  "AWS::Events::Archive": "the bus's archive (replay) is not emulated",
};

const arn = (a: Account, service: string, resource: string) => `arn:aws:${service}:${a.region}:${a.accountId}:${resource}`;

/** The physical name CloudFormation gives a resource without one: the stack's name and the logical id (without its random suffix). */
const generatedName = (a: Account, id: string) => `${a.stackName}-${id}`;

/** The properties of each created type that are applied; the others are reported as ignored. */
const APPLIED: Record<string, readonly string[]> = {
  "AWS::DynamoDB::Table": ["TableName", "BillingMode", "KeySchema", "AttributeDefinitions", "GlobalSecondaryIndexes", "LocalSecondaryIndexes", "ProvisionedThroughput", "StreamSpecification", "TimeToLiveSpecification"],
  "AWS::SQS::Queue": ["QueueName", "FifoQueue", "ContentBasedDeduplication", "VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds", "ReceiveMessageWaitTimeSeconds", "MaximumMessageSize", "RedrivePolicy"],
  "AWS::Events::EventBus": ["Name"],
  "AWS::Events::Rule": ["Name", "Description", "EventBusName", "EventPattern", "State", "ScheduleExpression", "Targets"],
  "AWS::Logs::LogGroup": ["LogGroupName"],
};

/** The property that names a resource of a type not created here, for the physical id others refer to. */
const NAME_PROPERTY: Record<string, string> = { "AWS::Lambda::Function": "FunctionName", "AWS::IAM::Role": "RoleName" };

/** Creates what the template defines, in CloudFormation's order; the report says what became of each resource. */
export async function provision(template: Template, account: Account, clients: ProvisionClients): Promise<Provisioned> {
  const resolver = new Resolver(account);
  const report: ProvisionReport = { created: [], played: [], notEmulated: [] };
  for (const id of creationOrder(template)) {
    const resource = template.Resources[id]!;
    const path = `Resources.${id}.Properties`;
    const applied = APPLIED[resource.Type];
    if (applied) {
      // Only what is created is resolved whole: an intrinsic in a resource not made here cannot stop the run.
      const props = (resolver.resolve(resource.Properties ?? {}, path) ?? {}) as Cfn;
      let physical: Physical;
      try {
        physical = await create(id, resource.Type, props, account, clients, path);
      } catch (err) {
        if (err instanceof TemplateError) throw err;
        const where = resource.Type === "AWS::DynamoDB::Table" ? "DynamoDB Local" : "moto_server";
        const e = err as Error & { code?: string };
        const unreachable = /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ECONNRESET|socket hang up|fetch failed/.test(`${e.code ?? ""} ${e.message}`);
        throw new TemplateError(path, `${resource.Type} could not be created on ${where}: ${e.name}: ${e.message}${unreachable ? ` (is ${where} running and reachable?)` : ""}`);
      }
      resolver.set(id, physical);
      report.created.push({ id, type: resource.Type, ref: physical.ref, ignored: Object.keys(props).filter((k) => !applied.includes(k)) });
      continue;
    }
    const nameProp = NAME_PROPERTY[resource.Type] ?? "Name";
    const named = resource.Properties?.[nameProp];
    const name = named === undefined ? generatedName(account, id) : String(resolver.resolve(named, `${path}.${nameProp}`));
    resolver.set(id, notCreated(resource.Type, name, account));
    if (PLAYED.has(resource.Type)) report.played.push({ id, type: resource.Type });
    else report.notEmulated.push({ id, type: resource.Type, why: NOT_EMULATED[resource.Type] ?? "not emulated by cloud-local" });
  }
  return { resolver, report };
}

/** What a resource not created here answers to references: its name and an ARN of its kind. */
function notCreated(type: string, name: string, a: Account): Physical {
  if (type === "AWS::Lambda::Function") return { ref: name, attrs: { Arn: arn(a, "lambda", `function:${name}`) } };
  if (type === "AWS::IAM::Role") return { ref: name, attrs: { Arn: `arn:aws:iam::${a.accountId}:role/${name}`, RoleId: name } };
  return { ref: name, attrs: { Arn: arn(a, type.split("::")[1]!.toLowerCase(), name) } };
}

async function create(id: string, type: string, p: Cfn, a: Account, c: ProvisionClients, path: string): Promise<Physical> {
  switch (type) {
    case "AWS::DynamoDB::Table": {
      const name = String(p.TableName ?? generatedName(a, id));
      const streamArn = await createTable(name, p, c.dynamodb, path);
      return { ref: name, attrs: { Arn: arn(a, "dynamodb", `table/${name}`), ...(streamArn ? { StreamArn: streamArn } : {}) } };
    }
    case "AWS::SQS::Queue": {
      const name = String(p.QueueName ?? `${generatedName(a, id)}${p.FifoQueue ? ".fifo" : ""}`);
      const { QueueUrl } = await c.sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: queueAttributes(p) }));
      const { Attributes } = await c.sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }));
      return { ref: QueueUrl!, attrs: { Arn: Attributes?.QueueArn ?? arn(a, "sqs", name), QueueName: name, QueueUrl: QueueUrl! } };
    }
    case "AWS::Events::EventBus": {
      const name = String(p.Name);
      await ignoreExisting(() => c.events.send(new CreateEventBusCommand({ Name: name })), BusExists);
      return { ref: name, attrs: { Arn: arn(a, "events", `event-bus/${name}`), Name: name } };
    }
    case "AWS::Events::Rule": {
      const name = String(p.Name ?? generatedName(a, id));
      const bus = p.EventBusName === undefined ? undefined : String(p.EventBusName);
      await c.events.send(new PutRuleCommand({
        Name: name, EventBusName: bus, EventPattern: typeof p.EventPattern === "string" ? p.EventPattern : JSON.stringify(p.EventPattern),
        State: p.State, Description: p.Description, ScheduleExpression: p.ScheduleExpression,
      }));
      if (Array.isArray(p.Targets) && p.Targets.length) await c.events.send(new PutTargetsCommand({ Rule: name, EventBusName: bus, Targets: p.Targets }));
      return { ref: bus ? `${bus}|${name}` : name, attrs: { Arn: arn(a, "events", `rule/${bus ? `${bus}/` : ""}${name}`) } };
    }
    case "AWS::Logs::LogGroup": {
      const name = String(p.LogGroupName ?? generatedName(a, id));
      await ignoreExisting(() => c.logs.send(new CreateLogGroupCommand({ logGroupName: name })), LogGroupExists);
      return { ref: name, attrs: { Arn: arn(a, "logs", `log-group:${name}:*`) } };
    }
    default:
      throw new TemplateError(path, `${type} is not created by cloud-local`);
  }
}

/** The table as the template defines it; one left by an earlier run must be the template's in keys, indexes and stream. */
async function createTable(name: string, p: Cfn, client: DynamoDBClient, path: string): Promise<string | undefined> {
  const input = {
    TableName: name, BillingMode: p.BillingMode, KeySchema: p.KeySchema, AttributeDefinitions: p.AttributeDefinitions,
    GlobalSecondaryIndexes: p.GlobalSecondaryIndexes, LocalSecondaryIndexes: p.LocalSecondaryIndexes, ProvisionedThroughput: p.ProvisionedThroughput,
    ...(p.StreamSpecification ? { StreamSpecification: { StreamEnabled: true, StreamViewType: p.StreamSpecification.StreamViewType } } : {}),
  };
  const table = await ensureTableFrom(client, input, p.TimeToLiveSpecification?.Enabled ? p.TimeToLiveSpecification.AttributeName : undefined);
  const differences = tableDifferences(table, input);
  if (differences.length) {
    throw new TemplateError(path, `table ${name} exists and differs from the template: ${differences.join("; ")}. Remove the data folder it lives in, or use another`);
  }
  return table.LatestStreamArn;
}

/** A queue's CloudFormation properties as CreateQueue attributes (all strings; the redrive policy as JSON). */
function queueAttributes(p: Cfn): Record<string, string> {
  const names = ["FifoQueue", "ContentBasedDeduplication", "VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds", "ReceiveMessageWaitTimeSeconds", "MaximumMessageSize"];
  const out: Record<string, string> = {};
  for (const n of names) if (p[n] !== undefined) out[n] = String(p[n]);
  // moto refuses ContentBasedDeduplication on a standard queue as AWS does; false is the default anyway.
  if (out.FifoQueue !== "true") delete out.ContentBasedDeduplication;
  if (p.RedrivePolicy) out.RedrivePolicy = JSON.stringify({ ...p.RedrivePolicy, maxReceiveCount: Number(p.RedrivePolicy.maxReceiveCount) });
  return out;
}

async function ignoreExisting(send: () => Promise<unknown>, exists: abstract new (...args: never[]) => Error): Promise<void> {
  try {
    await send();
  } catch (err) {
    if (!(err instanceof exists)) throw err;
  }
}
