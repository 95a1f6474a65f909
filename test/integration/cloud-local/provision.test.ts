/**
 * `lookout cloud-local`'s first step (docs/cloud-local.md): the packaged template's resources created
 * from the template itself — the table on DynamoDB Local, the queues, bus, rules and log groups on
 * moto_server — and every other resource accounted for; an event put on the bus reaches the queues the
 * deployed rules name, in the shape their input transformers give it.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DescribeTableCommand, DescribeTimeToLiveCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import { CloudWatchLogsClient, FilterLogEventsCommand } from "@aws-sdk/client-cloudwatch-logs";
import { GetQueueAttributesCommand, type Message, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { examplePackage } from "../../support/packaged-example.js";
import { type Provisioned, provision } from "../../../local/cloud-local/provision.js";
import { readPackagedTemplate, type Template } from "../../../local/cloud-local/template.js";
import { detailTypeOf, type LookoutEventDetail } from "../../../lib/model/event.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";
import { localDynamoClient } from "../../support/dynamodb.js";
import { MOTO_ABSENT, MOTO_ACCOUNT, MOTO_REGION, type MotoServer, motoAvailable, startMoto } from "../../../local/runtime/moto.js";

const available = motoAvailable();
if (!available) console.warn(MOTO_ABSENT);

let moto: MotoServer;
let sqs: SQSClient;
let events: EventBridgeClient;
let logs: CloudWatchLogsClient;
let template: Template;
let stack: Provisioned;
const dynamodb = localDynamoClient();
// The table's name comes from the stack's: one of its own, on the run's shared DynamoDB Local.
const account = { region: MOTO_REGION, accountId: MOTO_ACCOUNT, stackName: `lookout-prod-${randomUUID().slice(0, 8)}` };

beforeAll(async () => {
  if (!available) return;
  template = readPackagedTemplate((await examplePackage()).template);
  moto = await startMoto();
  // A shared moto_server (MOTO_ENDPOINT) may hold an earlier run's queues and log events.
  await moto.reset();
  sqs = new SQSClient(moto.clientConfig);
  events = new EventBridgeClient(moto.clientConfig);
  logs = new CloudWatchLogsClient(moto.clientConfig);
  stack = await provision(template, account, { dynamodb, sqs, events, logs });
}, 240_000);

afterAll(async () => {
  sqs?.destroy();
  events?.destroy();
  logs?.destroy();
  dynamodb.destroy();
  await moto?.stop();
});

const ofType = (type: string) => Object.entries(template.Resources).filter(([, r]) => r.Type === type).map(([id]) => id).sort();
const url = (id: string) => stack.resolver.get(id)!.ref;
const receiveAll = async (queueUrl: string): Promise<Message[]> =>
  (await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, MessageSystemAttributeNames: ["All"] }))).Messages ?? [];

describe.skipIf(!available)("the packaged stack's resources, created from its template", () => {
  it("accounts for every resource: created, played by the runner, or named as not emulated with why", () => {
    const { created, played, notEmulated } = stack.report;
    const all = [...created, ...played, ...notEmulated].map((r) => r.id).sort();
    expect(all).toEqual(Object.keys(template.Resources).sort());
    const createdOf = (type: string) => created.filter((r) => r.type === type).map((r) => r.id).sort();
    for (const type of ["AWS::DynamoDB::Table", "AWS::SQS::Queue", "AWS::Events::EventBus", "AWS::Events::Rule", "AWS::Logs::LogGroup"]) {
      expect(createdOf(type), type).toEqual(ofType(type));
    }
    expect(played.filter((r) => r.type === "AWS::Lambda::Function").map((r) => r.id).sort()).toEqual(ofType("AWS::Lambda::Function"));
    for (const type of ["AWS::Lambda::EventSourceMapping", "AWS::Pipes::Pipe", "AWS::Scheduler::Schedule"]) {
      expect(played.map((r) => r.type)).toContain(type);
    }
    // Each has a reason of its own: no type of the template falls through to the generic one.
    for (const r of notEmulated) expect(r.why, r.id).not.toBe("not emulated by cloud-local");
    // What a created resource's template says that one machine does not apply is named.
    expect(created.find((r) => r.id === "LookoutTable")!.ignored.sort()).toEqual(["DeletionProtectionEnabled", "PointInTimeRecoverySpecification", "SSESpecification"]);
    expect(notEmulated.map((r) => r.type)).toContain("AWS::IAM::Role");
  });

  it("makes the table the template defines: keys, every index with its projection, the stream, the TTL", async () => {
    const want = template.Resources.LookoutTable!.Properties!;
    const name = url("LookoutTable");
    expect(name).toBe(`${account.stackName}-LookoutTable`);
    const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: name }));
    expect(Table!.KeySchema).toEqual(want.KeySchema);
    const indexes = Object.fromEntries((Table!.GlobalSecondaryIndexes ?? []).map((i) => [i.IndexName, { KeySchema: i.KeySchema, Projection: i.Projection }]));
    expect(indexes).toEqual(Object.fromEntries(want.GlobalSecondaryIndexes.map((i: any) => [i.IndexName, { KeySchema: i.KeySchema, Projection: i.Projection }])));
    expect(Table!.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: want.StreamSpecification.StreamViewType });
    expect(stack.resolver.get("LookoutTable")!.attrs.StreamArn).toBe(Table!.LatestStreamArn);
    const ttl = await dynamodb.send(new DescribeTimeToLiveCommand({ TableName: name }));
    expect(ttl.TimeToLiveDescription?.AttributeName).toBe(want.TimeToLiveSpecification.AttributeName);
  });

  it("makes the queues with the template's attributes and redrive, and resolves the functions' environment against them", async () => {
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url("SlackQueue"), AttributeNames: ["All"] }));
    expect(Attributes).toMatchObject({ FifoQueue: "true", VisibilityTimeout: "360", ContentBasedDeduplication: "false" });
    expect(JSON.parse(Attributes!.RedrivePolicy!)).toEqual({ deadLetterTargetArn: stack.resolver.get("SlackDeadLetterQueue")!.attrs.Arn, maxReceiveCount: 5 });
    const env = stack.resolver.resolve(template.Resources.DispatchLambdaFunction!.Properties!.Environment.Variables, "dispatch.Environment");
    expect(env).toMatchObject({ TABLE_NAME: url("LookoutTable"), POLL_FUNCTION_NAME: "lookout-prod-poll", NOTIFY_SLACK_FUNCTION_NAME: "lookout-prod-notify-slack" });
    // The queues dispatch watches, named by their URLs on moto_server.
    const watched = JSON.parse(env.WATCHED_QUEUES) as Array<{ queue: string; url: string }>;
    expect(watched.find((q) => q.queue === "SlackQueue")?.url).toBe(url("SlackQueue"));
    // Every queue but the change feed's loop's (infra/stack.ts, watchedQueues).
    expect(watched.length).toBe(ofType("AWS::SQS::Queue").length - 1);
    expect(watched.every((q) => q.url.startsWith(moto.endpoint))).toBe(true);
  });

  it("runs again on what it made; refuses, naming what differs, a table of the same name that is not the template's; says where it could not create", async () => {
    const again = await provision(template, account, { dynamodb, sqs, events, logs });
    expect(again.report.created.length).toBe(stack.report.created.length);
    expect(again.resolver.get("SlackQueue")!.ref).toBe(url("SlackQueue"));
    // The template of a later version, with one index less: the table left by this one is not it.
    const table = template.Resources.LookoutTable!;
    const fewer: Template = {
      Resources: {
        LookoutTable: {
          ...table,
          Properties: {
            ...table.Properties,
            GlobalSecondaryIndexes: table.Properties!.GlobalSecondaryIndexes.slice(1),
            AttributeDefinitions: table.Properties!.AttributeDefinitions.filter((a: { AttributeName: string }) => a.AttributeName !== "ix_project"),
          },
        },
      },
    };
    await expect(provision(fewer, account, { dynamodb, sqs, events, logs })).rejects.toThrow(
      /^Resources\.LookoutTable\.Properties: table \S+ exists and differs from the template: index audit-project is not in the definition\. Remove the data folder/);
    const nowhere = new DynamoDBClient({ endpoint: "http://127.0.0.1:9", region: MOTO_REGION, credentials: { accessKeyId: "x", secretAccessKey: "x" }, maxAttempts: 1 });
    try {
      await expect(provision(fewer, { ...account, stackName: "elsewhere" }, { dynamodb: nowhere, sqs, events, logs })).rejects.toThrow(
        /^Resources\.LookoutTable\.Properties: AWS::DynamoDB::Table could not be created on DynamoDB Local: .*\(is DynamoDB Local running and reachable\?\)$/);
    } finally {
      nowhere.destroy();
    }
  });

  it("routes an event on the bus as the deployed rules do: to each route's inboxes, in the transformer's shape; a health event to its log group too", async () => {
    const failed = { ...EXAMPLE_DETAILS["Deployment Failed"], id: "a1", incident_id: "a1", environment: { id: "env-1", name: "prod" } } as LookoutEventDetail;
    const bus = url("LookoutBus");
    const put = await events.send(new PutEventsCommand({
      Entries: [
        { EventBusName: bus, Source: "lookout", DetailType: detailTypeOf(failed.kind, failed.transition), Detail: JSON.stringify(failed) },
        { EventBusName: bus, Source: "lookout", DetailType: "Lookout Health", Detail: JSON.stringify({ ...EXAMPLE_DETAILS["Lookout Health"], id: "h1" }) },
      ],
    }));
    expect(put.FailedEntryCount).toBe(0);
    for (const inbox of ["SlackInbox", "EmailInbox"]) {
      const got = await receiveAll(url(inbox));
      const bodies = got.map((m) => JSON.parse(m.Body!) as { route?: string; group?: string; event?: { detail?: { id?: string } } });
      const a1 = bodies.filter((b) => b.event?.detail?.id === "a1");
      // Once for each route whose rule matches: prod-failures, and the default route (notify delivers it only where no route did).
      expect(a1.map((b) => b.route).sort(), inbox).toEqual(["default", "prod-failures"]);
      expect(a1.every((b) => b.group === "a1"), inbox).toBe(true);
      expect(got.every((m) => m.Attributes?.MessageGroupId === "inbox"), inbox).toBe(true);
    }
    // The health rule's target: the log group, as moto_server's CloudWatch Logs holds it.
    const { events: logged = [] } = await logs.send(new FilterLogEventsCommand({ logGroupName: url("HealthLogGroup") }));
    expect(logged.map((e) => (JSON.parse(e.message!) as { detail: { id: string } }).detail.id)).toEqual(["h1"]);
  });
});
