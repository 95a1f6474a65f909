/**
 * Order per incident on moto_server (docs/architecture.md, "Order per incident"): the bus, the route
 * rules, the Slack inbox and queue and their dead-letter queues are created as the stack's template
 * defines them (infra/*.yml and what infra/stack.ts generates from a configuration), the Slack pipe's
 * definition is run by local/cloud-local/pipe.ts (moto stores pipes but does not run them), and two
 * incidents' events are put on the bus interleaved, with events of no incident among them. The queue
 * then holds each incident's messages in publish order, each incident one message group, every event
 * of no incident a group of its own; and a group held by a failure does not hold the others.
 * Skipped, saying so, where moto_server is absent.
 */
import { describe, expect, it } from "vitest";
import { CreateEventBusCommand, PutEventsCommand, PutRuleCommand, PutTargetsCommand } from "@aws-sdk/client-eventbridge";
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
} from "@aws-sdk/client-sqs";
import { detailTypeOf, type LookoutEventDetail } from "../../../lib/model/event.js";
import type { Cfn } from "../../../infra/stack.js";
import { INBOX_GROUP } from "../../../infra/stack.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";
import { MOTO_ABSENT, motoAvailable } from "../../../local/runtime/moto.js";
import { motoBusAndQueues } from "../../support/moto-bus.js";
import { resolveRefs, stackResources } from "../../support/stack-template.js";
import { runSqsPipe, type SqsPipeDefinition } from "../../../local/cloud-local/pipe.js";

const available = motoAvailable();
if (!available) console.warn(MOTO_ABSENT);

const STACK = { service: "lookout", stage: "test" };
const resources = stackResources("test/fixtures/stack/slack-only.yaml", STACK);

/** Set in the describe block below (test/support/moto-bus.ts). */
let aws: ReturnType<typeof motoBusAndQueues>;

// Two incidents (a, b) as a service's poll raises them, and two events of no incident.
const ofIncident = (type: keyof typeof EXAMPLE_DETAILS, id: string, incident: string, over: Partial<LookoutEventDetail> = {}): LookoutEventDetail =>
  ({ ...EXAMPLE_DETAILS[type], id, incident_id: incident, ...over }) as LookoutEventDetail;
const a1 = ofIncident("Deployment Failed", "a1", "a1");
const b1 = ofIncident("Deployment Failed", "b1", "b1", { service: { id: "svc-b", name: "worker" } } as Partial<LookoutEventDetail>);
const a2 = ofIncident("Deployment Still Failing", "a2", "a1");
const b2 = ofIncident("Deployment Changes Listed", "b2", "b1", { amends: "b1" });
const a3 = ofIncident("Deployment Changes Listed", "a3", "a1", { amends: "a1" });
const b3 = ofIncident("Deployment Still Failing", "b3", "b1");
const a4 = ofIncident("Deployment Recovered", "a4", "a1");
const b4 = ofIncident("Deployment Recovered", "b4", "b1");
const { incident_id: _h, ...health } = { ...EXAMPLE_DETAILS["Lookout Health"], id: "h1" };
const { incident_id: _c, ...cancelled } = { ...EXAMPLE_DETAILS["Deployment Cancelled"], id: "c1" };
const PUBLISHED: LookoutEventDetail[] = [a1, b1, a2, health, b2, a3, b3, cancelled, a4, b4];

/** Creates a queue of the template (its dead-letter queue first), returning its URL and ARN. */
async function createQueue(id: string, made: Map<string, { url: string; arn: string }>): Promise<{ url: string; arn: string }> {
  const have = made.get(id);
  if (have) return have;
  const p = resources[id]!.Properties as Cfn;
  const dlq = (p.RedrivePolicy as Cfn | undefined)?.deadLetterTargetArn as Cfn | undefined;
  const redrive = dlq ? { deadLetterTargetArn: (await createQueue((dlq["Fn::GetAtt"] as string[])[0]!, made)).arn, maxReceiveCount: (p.RedrivePolicy as Cfn).maxReceiveCount } : undefined;
  const attr = (k: string) => (p[k] === undefined ? {} : { [k]: String(p[k]) });
  const { QueueUrl } = await aws.sqs.send(new CreateQueueCommand({
    QueueName: p.QueueName as string,
    Attributes: { ...attr("FifoQueue"), ...attr("ContentBasedDeduplication"), ...attr("VisibilityTimeout"), ...attr("MessageRetentionPeriod"), ...(redrive ? { RedrivePolicy: JSON.stringify(redrive) } : {}) },
  }));
  const { Attributes } = await aws.sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }));
  const out = { url: QueueUrl!, arn: Attributes!.QueueArn! };
  made.set(id, out);
  return out;
}

/** The bus, the Slack inbox and queue, and every route rule that sends to the inbox, as the template has them. */
async function createStack() {
  await aws.moto.reset();
  const made = new Map<string, { url: string; arn: string }>();
  const inbox = await createQueue("SlackInbox", made);
  const queue = await createQueue("SlackQueue", made);
  const bus = (resources.LookoutBus!.Properties as Cfn).Name as string;
  await aws.eb.send(new CreateEventBusCommand({ Name: bus }));
  const lookup = (id: string, attr: string) => {
    if (id === "LookoutBus") return bus;
    if (id === "SlackInbox" && attr === "Arn") return inbox.arn;
    // moto has no bus dead-letter queue to deliver to; the rule's retry policy is EventBridge's own.
    if (id === "BusDeadLetterQueue") return "arn:aws:sqs:us-east-1:123456789012:unused";
    throw new Error(`${id}.${attr}: not created in this test`);
  };
  const rules = Object.entries(resources).filter(([, r]) => r.Type === "AWS::Events::Rule" && JSON.stringify(r).includes('"SlackInbox"'));
  expect(rules.map(([id]) => id).sort()).toEqual(["RouteEverything", "RouteEverythingSolo"]);
  for (const [, r] of rules) {
    const p = resolveRefs(r.Properties, lookup) as Cfn;
    await aws.eb.send(new PutRuleCommand({ Name: p.Name as string, EventBusName: bus, EventPattern: JSON.stringify(p.EventPattern) }));
    await aws.eb.send(new PutTargetsCommand({ Rule: p.Name as string, EventBusName: bus, Targets: p.Targets as never }));
  }
  return { bus, inbox, queue, pipe: resources.SlackPipe!.Properties as SqsPipeDefinition };
}

const receive = async (url: string, max = 10): Promise<Message[]> =>
  (await aws.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: max, MessageSystemAttributeNames: ["All"], WaitTimeSeconds: 0 }))).Messages ?? [];
const alertOf = (m: Message) => (JSON.parse(m.Body!) as { event: { detail: LookoutEventDetail } }).event.detail.id;
const groupOf = (m: Message) => m.Attributes!.MessageGroupId!;

async function publish(bus: string, details: LookoutEventDetail[]) {
  // One PutEvents a call: the order they were published in is the order of the calls.
  for (const d of details) {
    const res = await aws.eb.send(new PutEventsCommand({ Entries: [{ EventBusName: bus, Source: "lookout", DetailType: detailTypeOf(d.kind, d.transition), Detail: JSON.stringify(d) }] }));
    expect(res.FailedEntryCount).toBe(0);
  }
}

describe.skipIf(!available)("order per incident, on moto_server", () => {
  aws = motoBusAndQueues();

  it("the queue holds each incident's messages in publish order, one group per incident, an event of no incident its own group", async () => {
    const { bus, inbox, queue, pipe } = await createStack();
    await publish(bus, PUBLISHED);
    expect(await runSqsPipe(aws.sqs, pipe, inbox.url, queue.url)).toBe(PUBLISHED.length);

    const got: Message[] = [];
    for (let batch = await receive(queue.url); batch.length; batch = await receive(queue.url)) {
      got.push(...batch);
      for (const m of batch) await aws.sqs.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: m.ReceiptHandle! }));
    }
    expect(got.map(alertOf)).toEqual(PUBLISHED.map((d) => d.id));
    const groups: Record<string, string[]> = {};
    for (const m of got) (groups[groupOf(m)] ??= []).push(alertOf(m));
    expect(groups).toEqual({ a1: ["a1", "a2", "a3", "a4"], b1: ["b1", "b2", "b3", "b4"], h1: ["h1"], c1: ["c1"] });
    // What the notify function reads: the route and the event, deduplicated per route and alert.
    const first = JSON.parse(got[0]!.Body!);
    expect(first).toMatchObject({ route: "everything", group: "a1", dedup: "everything/a1", event: { source: "lookout", "detail-type": "Deployment Failed", detail: a1 } });
    expect(got.map((m) => m.Attributes!.MessageDeduplicationId)).toEqual(PUBLISHED.map((d) => `everything/${d.id}`));
  });

  it("the inbox is one group in publish order; an alert published twice is queued once", async () => {
    const { bus, inbox, queue, pipe } = await createStack();
    // a2 again: the publisher retried it (a new event on the bus, the same alert).
    await publish(bus, [a1, b1, a2, a2, b2]);
    const inboxed = await receive(inbox.url);
    expect(inboxed.map(groupOf)).toEqual(Array(5).fill(INBOX_GROUP));
    expect(inboxed.map(alertOf)).toEqual(["a1", "b1", "a2", "a2", "b2"]);
    for (const m of inboxed) await aws.sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: inbox.url, ReceiptHandle: m.ReceiptHandle!, VisibilityTimeout: 0 }));
    await runSqsPipe(aws.sqs, pipe, inbox.url, queue.url);
    expect((await receive(queue.url)).map(alertOf)).toEqual(["a1", "b1", "a2", "b2"]);
  });

  it("an incident held by a failure holds only itself: the other incident goes on, and the failed message comes back before its follow-ups", async () => {
    const { bus, inbox, queue, pipe } = await createStack();
    await publish(bus, [a1, b1, a2, b2, a3, b3]);
    await runSqsPipe(aws.sqs, pipe, inbox.url, queue.url);
    // A consumer takes a1 and fails it (Lambda leaves it invisible until its visibility timeout ends).
    const [held] = await receive(queue.url, 1);
    expect(alertOf(held!)).toBe("a1");
    // Meanwhile another receive gets incident b only: a's later messages wait behind a1.
    const others = await receive(queue.url);
    expect(others.map(alertOf)).toEqual(["b1", "b2", "b3"]);
    for (const m of others) await aws.sqs.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: m.ReceiptHandle! }));
    // The failure's visibility timeout ends: a1 comes back first, then a2 and a3.
    await aws.sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: queue.url, ReceiptHandle: held!.ReceiptHandle!, VisibilityTimeout: 0 }));
    expect((await receive(queue.url)).map(alertOf)).toEqual(["a1", "a2", "a3"]);
  });
});
