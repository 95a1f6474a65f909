/**
 * The delivery report's latency (docs/report.md): `lookout report` / GET /report over the audit bench's
 * items (bench/audit.ts: the same seeded world and shapes, stored as they are now), for the whole
 * organization, one environment and one service over 30 days. The report reads every page of its rows:
 * its time grows with the executions and deployment alerts in the period, not with the table.
 */
import { DeleteTableCommand } from "@aws-sdk/client-dynamodb";
import { AuditTrail } from "../lib/audit/trail.js";
import { DynamoAuditItems } from "../lib/store/audit-store.js";
import { parseReportQuery, readReportInput } from "../lib/audit/delivery-report-read.js";
import { deliveryReport } from "../lib/audit/delivery-report.js";
import type { RecordItem } from "../lib/model/ingest-store.js";
import { makeItem, seededWorld, setRoutineAside, writeBatch, writeRoutine } from "./audit.js";
import { p50p95, report, section } from "./support.js";

const TOTAL = Number(process.env.BENCH_AUDIT_ITEMS ?? 100_000);
const RUNS = 5;
const END = Date.parse("2026-03-31T00:00:00Z");

export async function benchReport() {
  section({
    id: "report",
    title: "Delivery report latency",
    method:
      `The audit bench's ${TOTAL.toLocaleString("en")} items over 30 days (the same seeded generator: 12 % deployment executions, 8 % alerts; ` +
      "200 services in 12 environments), written as the store writes them now (records that raised nothing in batches), into a fresh table on a " +
      "DynamoDB Local of its own. The report of the last 30 days (lib/audit/delivery-report-read.ts, then delivery-report.ts: every page of 1,000 rows of the " +
      `executions and of the failed, still failing and recovered alerts, through the audit indexes) is asked ${RUNS} times for each scope; the figures ` +
      "are the wall time of each from Node. `BENCH_AUDIT_ITEMS=N` sets another size.",
  });
  const { client, tableName, doc, r, w, expires } = await seededWorld();
  const routine = new Map<string, RecordItem[]>();
  const writes: Promise<unknown>[] = [];
  let executions = 0;
  let someService: string | undefined;
  for (let i = 0; i < TOTAL; i += 25) {
    const chunk = Array.from({ length: Math.min(25, TOTAL - i) }, (_, j) => makeItem(i + j, w, r, expires));
    for (const item of chunk) if (item.item_type === "execution") (executions++, (someService ??= (item.row as { service: { id: string } }).service.id));
    const whole = setRoutineAside(chunk, routine);
    if (whole.length) writes.push(writeBatch(doc, tableName, whole));
    if (writes.length >= 32) await Promise.all(writes.splice(0));
  }
  await Promise.all(writes);
  await writeRoutine(doc, tableName, routine, expires);

  const reader = new AuditTrail(new DynamoAuditItems({ client, tableName }));
  const now = new Date(END);
  const env = w.services.find((s) => s.id === someService)!.env;
  for (const [name, raw] of [
    ["the organization", {}],
    ["one environment", { environment: env.id }],
    ["one service", { service: someService! }],
  ] as const) {
    const times: number[] = [];
    let rows = 0;
    let services = 0;
    for (let run = 0; run < RUNS; run++) {
      const t = performance.now();
      const q = parseReportQuery({ ...raw, since: "30d" }, now);
      const input = await readReportInput(reader, q, now);
      services = deliveryReport(input, q.period).services.length;
      times.push(performance.now() - t);
      rows = input.executions.length + input.alerts.length;
    }
    report({
      name: `report p50 / p95: ${name}, 30 days`, value: p50p95(times), unit: `ms (${rows.toLocaleString("en")} rows, ${services} service${services === 1 ? "" : "s"})`,
      method: `${RUNS} runs; of ${executions.toLocaleString("en")} executions stored`,
    });
  }
  await client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
  client.destroy();
}
