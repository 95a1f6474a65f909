/**
 * Routing parity with EventBridge: every route's pattern becomes a rule on the "lookout" bus in
 * moto_server with its own SQS queue as target (through the route's InputTransformer), a table of
 * events covering every match operator is put on the bus, and for each event the routes whose queue
 * received it must be exactly those `routeEvent` gives. Skipped, saying so, where moto_server is absent.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CreateEventBusCommand,
  EventBridgeClient,
  PutEventsCommand,
  PutRuleCommand,
  PutTargetsCommand,
} from "@aws-sdk/client-eventbridge";
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { detailTypeOf, type LookoutEventDetail } from "../../../lib/model/event.js";
import { toEnvelope } from "../../../lib/alerts/publish.js";
import { loadConfigFile } from "../../../lib/config/load.js";
import { decideRoutes, routeEvent } from "../../../lib/routes/match.js";
import { eventPattern } from "../../../lib/config/route-patterns.js";
import { inputTemplate, ruleResources } from "../../../lib/routes/rules.js";
import type { Route } from "../../../lib/config/route-types.js";
import { patternMatches } from "../../fixtures/routes/eventbridge.js";
import { PARITY_EVENTS, detail } from "../../fixtures/routes/parity-events.js";
import { MOTO_ABSENT, type MotoServer, motoAvailable, startMoto } from "../../../local/runtime/moto.js";

const available = motoAvailable();
if (!available) console.warn(MOTO_ABSENT);

const BUS = "lookout";
const routes: Route[] = loadConfigFile(new URL("../../fixtures/routes/parity.yaml", import.meta.url).pathname, {}).routes;

let moto: MotoServer;
let eb: EventBridgeClient;
let sqs: SQSClient;

/** Everything a queue holds now (moto delivers during PutEvents, so nothing is still on its way). */
async function drain<T>(queueUrl: string): Promise<T[]> {
  const got: T[] = [];
  for (;;) {
    const res = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    if (!res.Messages?.length) return got;
    got.push(...res.Messages.map((m) => JSON.parse(m.Body!) as T));
  }
}

describe.skipIf(!available)("routes as EventBridge rules, against moto_server", () => {
  beforeAll(async () => {
    moto = await startMoto();
    eb = new EventBridgeClient(moto.clientConfig);
    sqs = new SQSClient(moto.clientConfig);
  });
  afterAll(async () => {
    eb?.destroy();
    sqs?.destroy();
    await moto?.stop();
  });

  it("delivers every event to exactly the routes routeEvent selects", async () => {
    await moto.reset();
    await eb.send(new CreateEventBusCommand({ Name: BUS }));
    const queues: string[] = [];
    for (const [i, route] of routes.entries()) {
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `route-${i}` }));
      const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }));
      await eb.send(new PutRuleCommand({ Name: route.name, EventBusName: BUS, EventPattern: JSON.stringify(eventPattern(routes, i)) }));
      // The stack's template. moto compiles every JSONPath of InputPathsMap per delivery (~13 ms each) and
      // uses eight default ones when the map is empty, or when there is no transformer: one keeps it fast.
      const InputTransformer = { InputPathsMap: { id: "$.id" }, InputTemplate: inputTemplate(route.name) };
      await eb.send(new PutTargetsCommand({ Rule: route.name, EventBusName: BUS, Targets: [{ Id: "q", Arn: Attributes!.QueueArn!, InputTransformer }] }));
      queues.push(QueueUrl!);
    }

    for (let i = 0; i < PARITY_EVENTS.length; i += 10) {
      const batch = PARITY_EVENTS.slice(i, i + 10);
      const res = await eb.send(
        new PutEventsCommand({
          Entries: batch.map((d) => ({ EventBusName: BUS, Source: "lookout", DetailType: detailTypeOf(d.kind, d.transition), Detail: JSON.stringify(d) })),
        }),
      );
      expect(res.FailedEntryCount).toBe(0);
    }

    const delivered = new Map<string, string[]>(PARITY_EVENTS.map((d) => [d.id, []]));
    for (const [i, queue] of queues.entries()) {
      for (const msg of await drain<{ route: string; event: { detail: LookoutEventDetail } }>(queue)) {
        expect(msg.route).toBe(routes[i]!.name);
        delivered.get(msg.event.detail.id)!.push(msg.route);
      }
    }

    const byEventBridge = Object.fromEntries([...delivered].map(([id, names]) => [id, names.sort()]));
    const local = Object.fromEntries(PARITY_EVENTS.map((d) => [d.id, routeEvent(d, routes).map((r) => r.route.name).sort()]));
    expect(byEventBridge).toEqual(local);

    // The tests' own evaluator agrees with moto too, so the fuzzed parity test measures the same thing.
    const byEvaluator = Object.fromEntries(
      PARITY_EVENTS.map((d) => {
        const env = toEnvelope(d, { account: "123456789012", region: "us-east-1", time: d.observed_at, eventId: d.id });
        return [d.id, routes.filter((_, i) => patternMatches(eventPattern(routes, i), env)).map((r) => r.name).sort()];
      }),
    );
    expect(byEvaluator).toEqual(byEventBridge);

    // The table exercises every route, and the chains stop something.
    const reached = new Set(Object.values(local).flat());
    expect(routes.map((r) => r.name).filter((n) => !reached.has(n))).toEqual([]);
    expect(local["chain-prod-api"]).toEqual(["env-names", "stop-prod-api", "svc-wild"]);
    expect(local["chain-staging"]).toEqual(["stop-staging", "svc-wild"]);
    // What follows a transition goes where it went: stop-acme-deploys names failed and still_failing.
    expect(byEventBridge["chain-acme-amended"]).toEqual(byEventBridge["chain-acme-failed"]);
    expect(byEventBridge["chain-acme-recovered"]).toContain("stop-acme-deploys");
    expect(byEventBridge["target-recovered-acme"]).toContain("org-by-id");
  });

  it("a route on transition: failed receives the amendment (changes_listed) and the close of what it received", async () => {
    await moto.reset();
    await eb.send(new CreateEventBusCommand({ Name: BUS }));
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "failures" }));
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }));
    const failures: Route[] = [{ name: "failures", match: { transition: ["failed"] }, slack: [{ type: "slack", form: "webhook", webhookUrlRef: "env:H" }], continue: true }];
    await eb.send(new PutRuleCommand({ Name: "failures", EventBusName: BUS, EventPattern: JSON.stringify(eventPattern(failures, 0)) }));
    const InputTransformer = { InputPathsMap: { id: "$.id" }, InputTemplate: inputTemplate("failures") };
    await eb.send(new PutTargetsCommand({ Rule: "failures", EventBusName: BUS, Targets: [{ Id: "q", Arn: Attributes!.QueueArn!, InputTransformer }] }));
    const events = (["failed", "changes_listed", "recovered", "still_failing", "delivery_failed", "cancelled"] as const).map((t) =>
      detail(`ev-${t}`, t, { service: { id: "s-1", name: "api" }, ...(t === "changes_listed" ? { amends: "ev-failed" } : {}) }),
    );
    const res = await eb.send(
      new PutEventsCommand({ Entries: events.map((d) => ({ EventBusName: BUS, Source: "lookout", DetailType: detailTypeOf(d.kind, d.transition), Detail: JSON.stringify(d) })) }),
    );
    expect(res.FailedEntryCount).toBe(0);
    const got = await drain<{ route: string; event: { detail: LookoutEventDetail } }>(QueueUrl!);
    expect(got.map((m) => m.event.detail.transition).sort()).toEqual(["changes_listed", "failed", "recovered"]);
    expect(events.filter((d) => routeEvent(d, failures).length).map((d) => d.transition).sort()).toEqual(["changes_listed", "failed", "recovered"]);
  });

  it("a rule of the stack hands its target the route's name and the whole event", async () => {
    await moto.reset();
    await eb.send(new CreateEventBusCommand({ Name: BUS }));
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "slack-notifier" }));
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }));
    const resources = ruleResources(routes, { slack: { Id: "slack", Arn: Attributes!.QueueArn! }, email: { Id: "email", Arn: "arn:aws:sqs:us-east-1:123456789012:unused" } });
    const rule = resources.RouteStopProdApi!.Properties;
    await eb.send(new PutRuleCommand({ Name: rule.Name, EventBusName: BUS, EventPattern: JSON.stringify(rule.EventPattern) }));
    await eb.send(new PutTargetsCommand({ Rule: rule.Name, EventBusName: BUS, Targets: rule.Targets.map((t) => ({ Id: t.Id, Arn: t.Arn as string, InputTransformer: t.InputTransformer })) }));
    const d = PARITY_EVENTS.find((e) => e.id === "chain-prod-api")!;
    await eb.send(new PutEventsCommand({ Entries: [{ EventBusName: BUS, Source: "lookout", DetailType: detailTypeOf(d.kind, d.transition), Detail: JSON.stringify(d) }] }));
    const got = await drain<{ route: string; event: { source: string; "detail-type": string; detail: LookoutEventDetail } }>(QueueUrl!);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ route: "stop-prod-api", event: { source: "lookout", "detail-type": "Deployment Failed", detail: d } });
  });

  it("the default route's rule hands every event to its notifier, which keeps exactly those no route matches", async () => {
    await moto.reset();
    await eb.send(new CreateEventBusCommand({ Name: BUS }));
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "default-notifier" }));
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }));
    const notify = { default: { slack: { type: "slack" as const, form: "webhook" as const, webhookUrlRef: "env:DEFAULT" } } };
    // Without its catch-all, the parity configuration leaves events to the default route.
    const routes_ = routes.filter((r) => r.name !== "catch-all");
    const resources = ruleResources(routes_, { slack: { Id: "slack", Arn: Attributes!.QueueArn! }, email: { Id: "email", Arn: "arn:aws:sqs:us-east-1:123456789012:unused" } }, { defaultRoute: notify.default });
    const rule = resources.RouteDefault!.Properties;
    await eb.send(new PutRuleCommand({ Name: rule.Name, EventBusName: BUS, EventPattern: JSON.stringify(rule.EventPattern) }));
    const targets = rule.Targets.map((t) => ({ Id: t.Id, Arn: t.Arn as string, InputTransformer: { InputPathsMap: { id: "$.id" }, ...t.InputTransformer } }));
    await eb.send(new PutTargetsCommand({ Rule: rule.Name, EventBusName: BUS, Targets: targets }));
    for (let i = 0; i < PARITY_EVENTS.length; i += 10) {
      const batch = PARITY_EVENTS.slice(i, i + 10);
      await eb.send(new PutEventsCommand({ Entries: batch.map((d) => ({ EventBusName: BUS, Source: "lookout", DetailType: detailTypeOf(d.kind, d.transition), Detail: JSON.stringify(d) })) }));
    }
    const got = await drain<{ route: string; event: { detail: LookoutEventDetail } }>(QueueUrl!);
    expect(got.map((m) => m.event.detail.id).sort()).toEqual(PARITY_EVENTS.map((d) => d.id).sort());
    // lib/app/lambda/notify.ts keeps a `default` message when decideRoutes gives it to the default route.
    const kept = got.filter((m) => decideRoutes(m.event.detail, routes_, notify).some((x) => x.route === "default")).map((m) => m.event.detail.id).sort();
    const unrouted = PARITY_EVENTS.filter((d) => routeEvent(d, routes_).length === 0).map((d) => d.id).sort();
    expect(kept).toEqual(unrouted);
    expect(unrouted.length).toBeGreaterThan(0);
  });
});
