/**
 * The real EventBridge adapter against moto_server: PutEvents on the "lookout" bus, a rule matching
 * source "lookout" delivering to SQS, and the envelope that arrives; the deployed handler, and its quarantine
 * on DynamoDB Local. Skipped where moto_server is absent.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { Context } from "aws-lambda";
import { CreateEventBusCommand, EventBridgeClient, PutRuleCommand, PutTargetsCommand } from "@aws-sdk/client-eventbridge";
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { eventBridgeBus } from "../../../lib/alerts/bus.js";
import type { LookoutEventEnvelope } from "../../../lib/model/event.js";
import { publishAlerts } from "../../../lib/alerts/publish.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";
import { MOTO_ABSENT, type MotoServer, motoAvailable, startMoto } from "../../../local/runtime/moto.js";
import { alertInsert, recordInsert } from "../../support/stream-records.js";
import { freshTable, scanTable, dynamodbEndpoint } from "../../support/dynamodb.js";

const available = motoAvailable();
if (!available) console.warn(MOTO_ABSENT);

const BUS = "lookout";
let moto: MotoServer;
let eb: EventBridgeClient;
let sqs: SQSClient;

async function queueWithRule(name: string, pattern: object): Promise<string> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name }));
  const attrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }));
  await eb.send(new PutRuleCommand({ Name: `${name}-rule`, EventBusName: BUS, EventPattern: JSON.stringify(pattern) }));
  await eb.send(new PutTargetsCommand({ Rule: `${name}-rule`, EventBusName: BUS, Targets: [{ Id: "q", Arn: attrs.Attributes!.QueueArn! }] }));
  return QueueUrl!;
}

/** Receives until `n` messages arrived (or a few empty polls in a row). */
async function receive(queueUrl: string, n: number): Promise<LookoutEventEnvelope[]> {
  const got: LookoutEventEnvelope[] = [];
  for (let empty = 0; got.length < n && empty < 5; ) {
    const res = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    const msgs = res.Messages ?? [];
    if (!msgs.length) {
      empty++;
      await new Promise((r) => setTimeout(r, 100));
    }
    got.push(...msgs.map((m) => JSON.parse(m.Body!) as LookoutEventEnvelope));
  }
  return got;
}

describe.skipIf(!available)("eventBridgeBus against moto_server", () => {
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

  it("puts every detail-type on the bus; a source rule delivers EventBridge's envelope to SQS", async () => {
    await moto.reset();
    await eb.send(new CreateEventBusCommand({ Name: BUS }));
    const all = await queueWithRule("all-lookout", { source: ["lookout"] });
    const failures = await queueWithRule("deploy-failures", { source: ["lookout"], "detail-type": ["Deployment Failed"], detail: { severity: ["critical"] } });

    const details = Object.values(EXAMPLE_DETAILS);
    const r = await publishAlerts(details, eventBridgeBus(eb, BUS), { busName: BUS });
    expect(r).toEqual({ published: details.map((d) => d.id), failed: [], clipped: [] });

    const envelopes = await receive(all, details.length);
    expect(envelopes).toHaveLength(details.length);
    const byId = new Map(envelopes.map((e) => [e.detail.id, e]));
    for (const [detailType, detail] of Object.entries(EXAMPLE_DETAILS)) {
      const env = byId.get(detail.id)!;
      expect(env).toMatchObject({ version: "0", source: "lookout", "detail-type": detailType, resources: [] });
      expect(env.detail).toEqual(detail);
      expect(env.id).toEqual(expect.any(String));
      expect(new Date(env.time).getTime()).toBe(Math.floor(new Date(detail.observed_at).getTime() / 1000) * 1000);
    }

    const routed = await receive(failures, 2);
    expect(routed.map((e) => e.detail.id)).toEqual([EXAMPLE_DETAILS["Deployment Failed"].id]);
  });

  it("fails an alert for a bus that does not exist at once: no retry can fix that", async () => {
    await moto.reset();
    const real = eventBridgeBus(eb, "no-such-bus");
    let calls = 0;
    const counting = { putEvents: (entries: Parameters<typeof real.putEvents>[0]) => (calls++, real.putEvents(entries)) };
    const r = await publishAlerts([EXAMPLE_DETAILS["Cluster Error"]], counting, { busName: "no-such-bus", maxAttempts: 3, sleep: async () => {} });
    expect(r.published).toEqual([]);
    expect(r.failed).toEqual([{ id: EXAMPLE_DETAILS["Cluster Error"].id, errorCode: "ResourceNotFoundException", errorMessage: expect.stringContaining("no-such-bus") }]);
    expect(calls).toBe(1);
  });

  it("the deployed handler builds its bus from the environment and publishes a stream batch", async () => {
    await moto.reset();
    await eb.send(new CreateEventBusCommand({ Name: BUS }));
    const q = await queueWithRule("handler", { source: ["lookout"] });
    Object.assign(process.env, {
      EVENT_BUS_NAME: BUS,
      AWS_ENDPOINT_URL_EVENTBRIDGE: moto.endpoint,
      AWS_REGION: moto.clientConfig.region,
      AWS_ACCESS_KEY_ID: moto.clientConfig.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: moto.clientConfig.credentials.secretAccessKey,
      POWERTOOLS_LOG_LEVEL: "SILENT",
      POWERTOOLS_METRICS_DISABLED: "true",
    });
    const { handler } = await import("../../../functions/publish.js");
    const detail = EXAMPLE_DETAILS["Deployment Recovered"];
    const res = await handler({ Records: [recordInsert("dl-9"), alertInsert(detail)] }, { awsRequestId: "r", functionName: "publish" } as Context);
    expect(res).toEqual({ batchItemFailures: [] });
    const got = await receive(q, 1);
    expect(got.map((e) => [e["detail-type"], e.detail.id])).toEqual([["Deployment Recovered", detail.id]]);
  });

  it("the deployed handler quarantines an alert no retry can publish, reading the configuration and the table only then", async () => {
    // The quarantine is loaded on the first one (lib/app/cloud/publish.ts): the handler's cold start read
    // no configuration, and publishes without one (the test above).
    const { client, tableName } = await freshTable("publish-deployed");
    const dir = mkdtempSync(join(tmpdir(), "lookout-publish-"));
    const file = join(dir, "lookout.yaml");
    writeFileSync(file, 'platform: { url: "http://127.0.0.1:9", token: "env:UNUSED_TOKEN" }\nwatch: [{ organization: 5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01 }]\nretention: 45d\n');
    const added = {
      EVENT_BUS_NAME: BUS, AWS_ENDPOINT_URL_EVENTBRIDGE: moto.endpoint, AWS_REGION: moto.clientConfig.region,
      AWS_ACCESS_KEY_ID: moto.clientConfig.credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: moto.clientConfig.credentials.secretAccessKey,
      POWERTOOLS_LOG_LEVEL: "SILENT", POWERTOOLS_METRICS_DISABLED: "true",
      LOOKOUT_CONFIG_FILE: file, TABLE_NAME: tableName, AWS_ENDPOINT_URL_DYNAMODB: dynamodbEndpoint(),
    };
    const saved = Object.fromEntries(Object.keys(added).map((k) => [k, process.env[k]]));
    Object.assign(process.env, added);
    try {
      const { handler } = await import("../../../functions/publish.js");
      const poisoned = { ...EXAMPLE_DETAILS["Cluster Error"], id: "poisoned-deployed", transition: "melted" as never };
      expect(await handler({ Records: [alertInsert(poisoned)] }, { awsRequestId: "r", functionName: "publish" } as Context)).toEqual({ batchItemFailures: [] });
      const quarantined = (await scanTable(DynamoDBDocumentClient.from(client), tableName)).filter((i) => i.item_type === "quarantine");
      expect(quarantined.map((i) => i.subject_id)).toEqual(["poisoned-deployed"]);
      // Kept as long as the configuration read at this first quarantine says.
      expect(Math.round(((quarantined[0]!.expires_at as number) * 1000 - Date.now()) / 86_400_000)).toBe(45);
    } finally {
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
      rmSync(dir, { recursive: true, force: true });
      client.destroy();
    }
  });
});
