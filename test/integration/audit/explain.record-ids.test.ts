/**
 * Events name the platform record they are about (docs/events.md, `record`, 1.1), and `lookout explain`
 * finds the record by that id and shows the alert it raised: a webhook delivery by the platform's
 * delivery id, a cluster log entry (no platform id) by the id the event carries. A plain node:http
 * server plays the platform; the table is DynamoDB Local.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { AuditTrail } from "../../../lib/audit/trail.js";
import { DynamoAuditItems } from "../../../lib/store/audit-store.js";
import { pollSource } from "../../../lib/poll/poll.js";
import { parseConfig } from "../../../lib/config/load.js";
import { composeIngest } from "../../../lib/app/ingest.js";
import type { LookoutEventDetail } from "../../../lib/model/event.js";
import { explainCommand } from "../../../local/cli/audit-commands.js";
import { freshTable } from "../../support/dynamodb.js";

const ORG = randomUUID();
const WEBHOOK = randomUUID();
const CLUSTER = randomUUID();
const DELIVERY = randomUUID();
// The platform's own spelling of the time, nanoseconds and all: the event keeps it as written.
// A fresh time with nanoseconds, as the platform writes cluster log times: not backfill at first sight.
const LOG_TIME = `${new Date(Date.now() - 120_000).toISOString().slice(0, -1)}123456Z`;
let server: Server;
let url: string;

beforeAll(async () => {
  const minuteAgo = new Date(Date.now() - 60_000).toISOString();
  server = createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    if (req.url?.includes(`/webhook/${WEBHOOK}/event`)) {
      return res.end(JSON.stringify({
        results: [{
          id: DELIVERY, created_at: minuteAgo, kind: "STANDARD", matched_event: "DEPLOYMENT_FAILURE",
          target_url_used: "https://hooks.example.com/x", target_response_status_code: 503, target_response_body: "unavailable",
        }],
      }));
    }
    if (req.url?.includes(`/cluster/${CLUSTER}/logs`)) {
      return res.end(JSON.stringify({
        results: [{ type: "error", timestamp: LOG_TIME, step: "CreateError", error: { tag: "InsufficientCapacity", user_log_message: "no quota" } }],
      }));
    }
    res.statusCode = 404;
    res.end("{}");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("platform ids and configured names in events, and explain by id", () => {
  it("a delivery's event carries its id; explain <delivery id> shows the record and its alert", async () => {
    const { client: dynamodb, tableName } = await freshTable("record-ids");
    const raised: LookoutEventDetail[] = [];
    // Built as the functions and `lookout run` build it.
    const config = parseConfig(
      `platform: { url: "${url}", token: "env:T" }
watch: [{ organization: ${ORG}, name: acme, webhooks: [${WEBHOOK}], clusters: [{ id: ${CLUSTER}, name: eu-prod }] }]
`,
      "ids.yaml",
    );
    const { pollDeps: deps } = await composeIngest(config, {
      dynamodb, tableName, resolveSecret: async () => "t-ids", log: { info() {}, warn() {}, error() {} },
    });
    deps.onAlert = (d) => void raised.push(d);
    await pollSource({ source: { kind: "webhook", organizationId: ORG, id: WEBHOOK } }, deps);
    await pollSource({ source: { kind: "cluster", organizationId: ORG, id: CLUSTER } }, deps);

    const delivery = raised.find((d) => d.kind === "webhook_delivery")!;
    expect(delivery.record).toEqual({ type: "webhook_delivery", id: DELIVERY });
    expect(delivery.http?.delivery_id).toBe(DELIVERY);
    const log = raised.find((d) => d.kind === "cluster_log")!;
    expect(log.record).toMatchObject({ type: "cluster_log_entry", timestamp: LOG_TIME, step: "CreateError" });
    // Configured names reach the alerts: the cluster's and the organization's.
    expect(log.cluster).toEqual({ id: CLUSTER, name: "eu-prod" });
    expect(log.summary).toMatch(/^Cluster eu-prod InsufficientCapacity at CreateError/);
    for (const d of raised) expect(d.organization).toEqual({ id: ORG, name: "acme" });

    const audit = new AuditTrail(new DynamoAuditItems({ client: dynamodb, tableName }));
    for (const d of [delivery, log]) {
      const e = (await audit.explain(d.record!.id))!;
      expect(e.subject).toMatchObject({ type: "record", id: d.record!.id, kind: d.kind });
      expect(e.alerts.map((a) => a.id)).toEqual([d.id]);

      const lines: string[] = [];
      const io = { out: (l: string) => void lines.push(l), err: (l: string) => void lines.push(`ERR ${l}`) };
      expect(await explainCommand(d.record!.id, { config: "unused: the reader is given" }, io, audit)).toBe(0);
      const text = lines.join("\n");
      expect(text).toContain(d.record!.id);
      expect(text).toContain(d.summary);
    }
    dynamodb.destroy();
  });
});
