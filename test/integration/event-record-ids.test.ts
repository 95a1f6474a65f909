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
import { createPlatformClient } from "../../lib/platform/client.js";
import { DynamoIngestStore } from "../../lib/store/ingest-store.js";
import { DynamoAuditStore } from "../../lib/audit/dynamo.js";
import { pollSource, type PollDeps } from "../../lib/ingest/poll.js";
import type { LookoutEventDetail } from "../../lib/alerts/event.js";
import { explainCommand } from "../../local/audit-commands.js";
import { freshTable, TEST_RETENTION_MS } from "../support/dynamodb.js";

const ORG = randomUUID();
const WEBHOOK = randomUUID();
const CLUSTER = randomUUID();
const DELIVERY = randomUUID();
// The platform's own spelling of the time, nanoseconds and all: the event keeps it as written.
const LOG_TIME = "2026-03-02T13:55:10.123456789Z";
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

describe("platform ids in events, and explain by them", () => {
  it("a delivery's event carries its id; explain <delivery id> shows the record and its alert", async () => {
    const { client: dynamodb, tableName } = await freshTable("record-ids");
    const raised: LookoutEventDetail[] = [];
    // A window wide enough that the fixed 2026 log time is not backfill at first sight.
    const deps: PollDeps = {
      client: createPlatformClient({ baseUrl: url, token: "t-ids", auth: "token" }),
      store: new DynamoIngestStore({ client: dynamodb, tableName, retentionMs: TEST_RETENTION_MS }),
      now: () => new Date(),
      backfillWindowMs: 400 * 86_400_000,
      log: { info() {}, warn() {}, error() {} },
      onAlert: (d) => void raised.push(d),
    };
    await pollSource({ source: { kind: "webhook", organizationId: ORG, id: WEBHOOK } }, deps);
    await pollSource({ source: { kind: "cluster", organizationId: ORG, id: CLUSTER } }, deps);

    const delivery = raised.find((d) => d.kind === "webhook_delivery")!;
    expect(delivery.record).toEqual({ type: "webhook_delivery", id: DELIVERY });
    expect(delivery.http?.delivery_id).toBe(DELIVERY);
    const log = raised.find((d) => d.kind === "cluster_log")!;
    expect(log.record).toMatchObject({ type: "cluster_log_entry", timestamp: LOG_TIME, step: "CreateError" });

    const audit = new DynamoAuditStore({ client: dynamodb, tableName });
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
