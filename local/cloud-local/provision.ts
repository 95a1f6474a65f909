/**
 * Creates the packaged stack's resources on one machine from its CloudFormation template, in
 * CloudFormation's order (docs/cloud-local.md): the table (keys, indexes, stream, TTL) in DynamoDB
 * Local; the queues (with their redrive), the bus and its rules with their targets in moto_server.
 * What the runner plays itself (functions, event source mappings, pipes, the schedule, the HTTP API,
 * the functions' retry settings) is named, with the physical ids the template's references need; what
 * one machine does not enforce (IAM roles, alarms, encryption, backups, the bucket, the topic) is listed
 * as such, so that nothing of the template is passed over in silence.
 */
import {
  CreateTableCommand, type CreateTableCommandInput, DescribeTableCommand, type DynamoDBClient, ResourceInUseException, UpdateTimeToLiveCommand,
} from "@aws-sdk/client-dynamodb";
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { CreateEventBusCommand, type EventBridgeClient, PutRuleCommand, PutTargetsCommand, ResourceAlreadyExistsException } from "@aws-sdk/client-eventbridge";
import { type Account, type Cfn, creationOrder, type Physical, Resolver, type Template, TemplateError } from "./template.js";

export interface ProvisionClients {
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
  events: EventBridgeClient;
  /** moto_server's endpoint: log groups are created through its JSON API (no logs client is bundled). */
  motoEndpoint: string;
}

/** What became of each resource of the template. */
export interface ProvisionReport {
  /** Created on DynamoDB Local or moto_server. */
  created: Array<{ id: string; type: string; name: string }>;
  /** Played by the cloud-local runner (functions, mappings, pipes, schedule, HTTP API). */
  played: Array<{ id: string; type: string }>;
  /** Not enforced on one machine, and why. */
  notEmulated: Array<{ id: string; type: string; why: string }>;
}

export interface Provisioned {
  resolver: Resolver;
  template: Template;
  report: ProvisionReport;
}

const PLAYED = new Set([
  "AWS::Lambda::Function", "AWS::Lambda::EventSourceMapping", "AWS::Lambda::EventInvokeConfig", "AWS::Pipes::Pipe",
  "AWS::Scheduler::Schedule", "AWS::ApiGatewayV2::Api", "AWS::ApiGatewayV2::Stage", "AWS::ApiGatewayV2::Route",
  "AWS::ApiGatewayV2::Integration", "AWS::Lambda::Permission",
]);

const NOT_EMULATED: Record<string, string> = {
  "AWS::IAM::Role": "permissions are not enforced on one machine (test/unit/stack.test.ts checks each role against its function's calls)",
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

/** Creates what the template defines, in CloudFormation's order; the report says what became of each resource. */
export async function provision(template: Template, account: Account, clients: ProvisionClients): Promise<Provisioned> {
  const resolver = new Resolver(account);
  const report: ProvisionReport = { created: [], played: [], notEmulated: [] };
  for (const id of creationOrder(template)) {
    const resource = template.Resources[id]!;
    const path = `Resources.${id}.Properties`;
    const props = (resolver.resolve(resource.Properties ?? {}, path) ?? {}) as Cfn;
    const made = await create(id, resource.Type, props, account, clients, path);
    resolver.set(id, made.physical);
    if (made.created) report.created.push({ id, type: resource.Type, name: made.physical.ref });
    else if (PLAYED.has(resource.Type)) report.played.push({ id, type: resource.Type });
    else report.notEmulated.push({ id, type: resource.Type, why: NOT_EMULATED[resource.Type] ?? "not emulated by cloud-local" });
  }
  return { resolver, template, report };
}

async function create(id: string, type: string, p: Cfn, a: Account, c: ProvisionClients, path: string): Promise<{ physical: Physical; created: boolean }> {
  switch (type) {
    case "AWS::DynamoDB::Table": {
      const name = String(p.TableName ?? generatedName(a, id));
      const streamArn = await createTable(name, p, c.dynamodb, path);
      return { created: true, physical: { ref: name, attrs: { Arn: arn(a, "dynamodb", `table/${name}`), ...(streamArn ? { StreamArn: streamArn } : {}) } } };
    }
    case "AWS::SQS::Queue": {
      const name = String(p.QueueName ?? generatedName(a, id));
      const { QueueUrl } = await c.sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: queueAttributes(p) }));
      const { Attributes } = await c.sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }));
      const queueArn = Attributes?.QueueArn ?? arn(a, "sqs", name);
      return { created: true, physical: { ref: QueueUrl!, attrs: { Arn: queueArn, QueueName: name, QueueUrl: QueueUrl! } } };
    }
    case "AWS::Events::EventBus": {
      const name = String(p.Name);
      await ignoreExisting(() => c.events.send(new CreateEventBusCommand({ Name: name })));
      return { created: true, physical: { ref: name, attrs: { Arn: arn(a, "events", `event-bus/${name}`), Name: name } } };
    }
    case "AWS::Events::Rule": {
      const name = String(p.Name ?? generatedName(a, id));
      const bus = p.EventBusName === undefined ? undefined : String(p.EventBusName);
      await c.events.send(new PutRuleCommand({
        Name: name, EventBusName: bus, EventPattern: typeof p.EventPattern === "string" ? p.EventPattern : JSON.stringify(p.EventPattern),
        State: p.State, Description: p.Description, ScheduleExpression: p.ScheduleExpression,
      }));
      if (Array.isArray(p.Targets) && p.Targets.length) await c.events.send(new PutTargetsCommand({ Rule: name, EventBusName: bus, Targets: p.Targets }));
      const ruleArn = arn(a, "events", `rule/${bus ? `${bus}/` : ""}${name}`);
      return { created: true, physical: { ref: bus ? `${bus}|${name}` : name, attrs: { Arn: ruleArn } } };
    }
    case "AWS::Logs::LogGroup": {
      const name = String(p.LogGroupName ?? generatedName(a, id));
      await createLogGroup(c.motoEndpoint, a, name, path);
      return { created: true, physical: { ref: name, attrs: { Arn: arn(a, "logs", `log-group:${name}:*`) } } };
    }
    case "AWS::Lambda::Function": {
      const name = String(p.FunctionName ?? generatedName(a, id));
      return { created: false, physical: { ref: name, attrs: { Arn: arn(a, "lambda", `function:${name}`) } } };
    }
    case "AWS::IAM::Role": {
      const name = String(p.RoleName ?? generatedName(a, id));
      return { created: false, physical: { ref: name, attrs: { Arn: `arn:aws:iam::${a.accountId}:role/${name}`, RoleId: name } } };
    }
    default: {
      const name = String(p.Name ?? generatedName(a, id));
      return { created: false, physical: { ref: name, attrs: { Arn: arn(a, type.split("::")[1]!.toLowerCase(), name) } } };
    }
  }
}

/** The table as the template defines it; an existing one (a run before) must have the same keys and indexes. */
async function createTable(name: string, p: Cfn, client: DynamoDBClient, path: string): Promise<string | undefined> {
  const input: CreateTableCommandInput = {
    TableName: name, BillingMode: p.BillingMode, KeySchema: p.KeySchema, AttributeDefinitions: p.AttributeDefinitions,
    GlobalSecondaryIndexes: p.GlobalSecondaryIndexes, LocalSecondaryIndexes: p.LocalSecondaryIndexes, ProvisionedThroughput: p.ProvisionedThroughput,
    ...(p.StreamSpecification ? { StreamSpecification: { StreamEnabled: true, StreamViewType: p.StreamSpecification.StreamViewType } } : {}),
  };
  try {
    await client.send(new CreateTableCommand(input));
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err;
  }
  const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
  const want = (p.GlobalSecondaryIndexes ?? []).map((i: Cfn) => String(i.IndexName)).sort();
  const have = (Table?.GlobalSecondaryIndexes ?? []).map((i) => String(i.IndexName)).sort();
  if (JSON.stringify(want) !== JSON.stringify(have)) {
    throw new TemplateError(`${path}.GlobalSecondaryIndexes`, `table ${name} exists with indexes ${have.join(", ") || "none"}, the template has ${want.join(", ")}: remove its data folder or use another`);
  }
  const ttl = p.TimeToLiveSpecification;
  if (ttl?.Enabled) {
    try {
      await client.send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { AttributeName: ttl.AttributeName, Enabled: true } }));
    } catch (err) {
      // Already on (a run before): DynamoDB refuses to enable it twice.
      if (!/already enabled/i.test((err as Error).message)) throw err;
    }
  }
  return Table?.LatestStreamArn;
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

async function ignoreExisting(send: () => Promise<unknown>): Promise<void> {
  try {
    await send();
  } catch (err) {
    if (!(err instanceof ResourceAlreadyExistsException)) throw err;
  }
}

/** CloudWatch Logs' CreateLogGroup on moto_server, by its JSON protocol; an existing group is kept. */
async function createLogGroup(endpoint: string, a: Account, name: string, path: string): Promise<void> {
  const res = await fetch(endpoint, {
    method: "POST",
    headers: {
      "content-type": "application/x-amz-json-1.1", "x-amz-target": "Logs_20140328.CreateLogGroup",
      authorization: `AWS4-HMAC-SHA256 Credential=testing/20260101/${a.region}/logs/aws4_request, SignedHeaders=host, Signature=0`,
    },
    body: JSON.stringify({ logGroupName: name }),
  });
  if (res.ok || (await res.text()).includes("ResourceAlreadyExists")) return;
  throw new TemplateError(path, `moto_server refused the log group ${name}: HTTP ${res.status}`);
}
