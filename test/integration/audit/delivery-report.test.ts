/**
 * The delivery report end to end: a small fixed set of deployments on two services of the platform
 * simulator, read through the real pipeline (pollSource → DynamoDB Local), then reported by `lookout
 * report` in its three formats and by the audit API's GET /report. Every figure is computed by hand
 * below and asserted exactly.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { APIGatewayProxyEventV2, Context } from "aws-lambda";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { createPlatformClient } from "../../../lib/platform/client.js";
import { DynamoIngestStore } from "../../../lib/store/ingest-store.js";
import { pollSource, type PollDeps } from "../../../lib/poll/poll.js";
import type { SourceRef } from "../../../lib/model/source.js";
import { AuditTrail } from "../../../lib/audit/trail.js";
import { DynamoAuditItems } from "../../../lib/store/audit-store.js";
import { parseAuditQuery } from "../../../lib/audit/parse.js";
import type { AuditRow } from "../../../lib/model/audit-row.js";
import type { DeliveryReport } from "../../../lib/audit/delivery-report.js";
import { REPORT_CSV_COLUMNS } from "../../../lib/audit/delivery-report-format.js";
import { reportCommand, type ReportArgs } from "../../../local/cli/report-command.js";
import { createAuditApiHandler } from "../../../lib/app/lambda/audit-api.js";
import { freshTable, TEST_RETENTION_MS, dynamodbEndpoint } from "../../support/dynamodb.js";

const silent = { info() {}, warn() {}, error() {} };
const MIN = 60_000;
const DAY = 1440 * MIN;
/** Every deployment: building 1 minute, deploying 1 minute (a build error ends after building). */
const durations = { queuedMs: 0, buildingMs: MIN, deployingMs: MIN };

let sim: Simulator;
let audit: AuditTrail;
let t0: number;
const iso = (offsetMin: number) => new Date(t0 + offsetMin * MIN).toISOString();
const exec: Record<string, string> = {};
let A: string;
let B: string;
/** The incidents: the ids of the alerts that opened them. */
const incident: Record<string, string> = {};
let period: { from: string; to: string };
let table: string;

beforeAll(async () => {
  const { client, tableName } = await freshTable("report");
  table = tableName;
  sim = await startSimulator({ seed: 5, size: { applications: 2, clusters: 1, webhooks: 1 } });
  t0 = sim.clock.nowMs();
  period = { from: iso(0), to: new Date(t0 + DAY).toISOString() };
  const store = new DynamoIngestStore({ client, tableName, retentionMs: TEST_RETENTION_MS, now: () => sim.clock.now() });
  const deps: PollDeps = {
    client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token", sleep: async () => {} }),
    // Nothing here is older than the window at first sight: every alert is raised (none backfilled).
    store, now: () => sim.clock.now(), backfillWindowMs: DAY, log: silent,
  };
  const org = sim.ids.organizationId;
  [A, B] = sim.ids.applicationIds as [string, string];
  const sources: SourceRef[] = [
    // First: the change feed names the services, so executions get their environment.
    { kind: "webhook", organizationId: org, id: sim.ids.webhookIds[0]! },
    { kind: "deployment", organizationId: org, id: A },
    { kind: "deployment", organizationId: org, id: B },
  ];

  const deploy = (name: string, svc: string, startMin: number, outcome: string, commitMin: number | null) => {
    exec[name] = `${svc}:${sim.scenario.deploy(svc, {
      outcome, at: iso(startMin), durations, commit: commitMin === null ? null : { created_at: iso(commitMin) },
    })}`;
  };
  // Service A                                    ends at   commit at  lead time
  deploy("A1", A, 10, "DEPLOYED", 0); //           +12 min   +0         720 s
  deploy("A2", A, 60, "DEPLOYMENT_ERROR", 50); //  +62       opens incident I1 at +62
  deploy("A3", A, 120, "DEPLOYED", 100); //        +122      +100       1320 s; closes I1: 60 min = 3600 s
  deploy("A4", A, 180, "BUILD_ERROR", 170); //     +181      opens incident I2 at +181
  deploy("A5", A, 200, "DEPLOYED", null); //       +202      no commit: no lead time; closes I2: 21 min = 1260 s
  // Service B
  deploy("B1", B, 30, "DEPLOYED", 20); //          +32       +20        720 s
  deploy("B2", B, 240, "DEPLOYMENT_ERROR", 230); // +242     opens incident I3, still open
  deploy("B3", B, 250, "CANCELED", 245); //        cancelled: no deployment

  // Read every ten simulated minutes, as `lookout start` would, for five hours.
  for (let m = 0; m < 300; m += 10) {
    sim.clock.advance(10 * MIN);
    for (const s of sources) await pollSource({ source: s }, deps);
  }
  audit = new AuditTrail(new DynamoAuditItems({ client, tableName }));
  // The incidents' ids are the opening alerts' (derived from content): found by the execution that raised them.
  const failed = await audit.query(parseAuditQuery({ type: "alert", transition: "failed", limit: "100" }, sim.clock.now()), { deliveries: false });
  const opener = (e: string) => failed.rows.find((r: AuditRow) => r.source === exec[e])!.id;
  incident.I1 = opener("A2");
  incident.I2 = opener("A4");
  incident.I3 = opener("B2");
}, 300_000);

afterAll(async () => {
  await sim?.close();
});

/**
 * By hand, over the day from the simulator's start (1 day):
 *   A: successful A1, A3, A5 = 3 → 3 a day, 21 a week. Lead times 720 and 1320 s (A5 has no commit):
 *      median (720 + 1320) / 2 = 1020, p90 by nearest rank (the 2nd of 2) 1320. Failed A2, A4: 2 of 5
 *      = 0.4, incidents I1, I2. Restores I1 3600 s, I2 1260 s: median 2430, p90 3600. Nothing open.
 *   B: successful B1 = 1 → 1 a day, 7 a week. Lead time 720: median and p90 720. Failed B2: 1 of 2
 *      (B3 was cancelled) = 0.5, incident I3, open since +242. No restore.
 *   All: 4 successful → 4 a day, 28 a week. Lead times 720, 720, 1320: median 720, p90 1320 (the 3rd of
 *      3). Failed 3 of 7 = 0.4286. Restores 3600, 1260: median 2430, p90 3600; I3 open.
 */
function expected() {
  const a = {
    deployment_frequency: { deployments: 3, per_day: 3, per_week: 21, executions: [exec.A1, exec.A3, exec.A5] },
    lead_time: {
      deployments: 2, median_sec: 1020, p90_sec: 1320,
      executions: [
        { id: exec.A1, commit_at: iso(0), deployed_at: iso(12), lead_time_sec: 720 },
        { id: exec.A3, commit_at: iso(100), deployed_at: iso(122), lead_time_sec: 1320 },
      ],
      unknown: [{ id: exec.A5, reason: "no commit: the platform gave none for this deployment" }],
    },
    change_failure_rate: { rate: 0.4, failed: 2, deployments: 5, failed_executions: [exec.A2, exec.A4], incidents: [incident.I1, incident.I2] },
    time_to_restore: {
      restored: 2, median_sec: 2430, p90_sec: 3600, unknown: [], open: [],
      incidents: [
        { id: incident.I1, opened_at: iso(62), restored_at: iso(122), restore_sec: 3600, closed_by: expect.any(String) },
        { id: incident.I2, opened_at: iso(181), restored_at: iso(202), restore_sec: 1260, closed_by: expect.any(String) },
      ],
    },
  };
  const b = {
    deployment_frequency: { deployments: 1, per_day: 1, per_week: 7, executions: [exec.B1] },
    lead_time: { deployments: 1, median_sec: 720, p90_sec: 720, executions: [{ id: exec.B1, commit_at: iso(20), deployed_at: iso(32), lead_time_sec: 720 }], unknown: [] },
    change_failure_rate: { rate: 0.5, failed: 1, deployments: 2, failed_executions: [exec.B2], incidents: [incident.I3] },
    time_to_restore: { restored: 0, median_sec: null, p90_sec: null, incidents: [], unknown: [], open: [{ id: incident.I3, opened_at: iso(242) }] },
  };
  const total = {
    deployment_frequency: { deployments: 4, per_day: 4, per_week: 28 },
    lead_time: { deployments: 3, median_sec: 720, p90_sec: 1320 },
    change_failure_rate: { rate: 0.4286, failed: 3, deployments: 7 },
    time_to_restore: { restored: 2, median_sec: 2430, p90_sec: 3600, open: [{ id: incident.I3, opened_at: iso(242) }] },
  };
  return { a, b, total };
}

function checkJson(report: DeliveryReport) {
  const { a, b, total } = expected();
  expect(report.period).toEqual({ ...period, days: 1 });
  expect(report.services.map((s) => s.service.id).sort()).toEqual([A, B].sort());
  const of = (id: string) => report.services.find((s) => s.service.id === id)!;
  expect(of(A)).toMatchObject(a);
  expect(of(B)).toMatchObject(b);
  expect(of(A).environment?.id).toMatch(/^[0-9a-f-]{36}$/);
  expect(report.total).toMatchObject(total);
  expect(report.total.daily).toEqual([{ date: period.from.slice(0, 10), deployed: 4, failed: 3 }]);
}

/** The command's flags; the store is the reader given, so no configuration is opened. */
const flags = (a: Omit<ReportArgs, "config">): ReportArgs => ({ config: "unused.yaml", ...a });

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

describe("lookout report", () => {
  it("--format json: the figures computed by hand, with the executions and incidents behind them", async () => {
    const t = io();
    expect(await reportCommand(flags({ from: period.from, to: period.to, format: "json" }), t.io, audit)).toBe(0);
    checkJson(JSON.parse(t.out.join("\n")) as DeliveryReport);
  });

  it("--format csv: a line per service and one for all, the same figures", async () => {
    const t = io();
    expect(await reportCommand(flags({ from: period.from, to: period.to, format: "csv" }), t.io, audit)).toBe(0);
    const [header, ...lines] = t.out;
    expect(header).toBe(`${REPORT_CSV_COLUMNS.join(",")}\r`);
    const rows = lines.map((l) => Object.fromEntries(l.replace(/\r$/, "").split(",").map((v, i) => [REPORT_CSV_COLUMNS[i]!, v])));
    const a = rows.find((r) => r.service_id === A)!;
    const b = rows.find((r) => r.service_id === B)!;
    const all = rows.at(-1)!;
    expect(rows).toHaveLength(3);
    const figures = (r: Record<string, string>) => [r.deployments, r.per_day, r.per_week, r.lead_time_median_sec, r.lead_time_p90_sec, r.lead_time_unknown,
      r.change_failure_rate, r.failed, r.deployments_all, r.restored, r.restore_median_sec, r.restore_p90_sec, r.open_incidents];
    expect(figures(a)).toEqual(["3", "3", "21", "1020", "1320", "1", "0.4", "2", "5", "2", "2430", "3600", "0"]);
    expect(figures(b)).toEqual(["1", "1", "7", "720", "720", "0", "0.5", "1", "2", "0", "", "", "1"]);
    expect(figures(all)).toEqual(["4", "4", "28", "720", "1320", "1", "0.4286", "3", "7", "2", "2430", "3600", "1"]);
    expect(all.service).toBe("all");
    expect(a.deployed_executions).toBe([exec.A1, exec.A3, exec.A5].join(" "));
    expect(a.failure_incidents).toBe(`${incident.I1} ${incident.I2}`);
    expect(a.restored_incidents).toBe(`${incident.I1} ${incident.I2}`);
    expect(b.open_incident_ids).toBe(incident.I3);
    expect(a.lead_time_unknown_executions).toBe(exec.A5);
  });

  it("--format table: the four figures of each service for people", async () => {
    const t = io();
    expect(await reportCommand(flags({ from: period.from, to: period.to, service: A }), t.io, audit)).toBe(0);
    const text = t.out.join("\n");
    expect(text).toContain(`Delivery report, ${period.from} to ${period.to} (1 day)`);
    expect(text).toContain("deployment frequency  3 in 1 day: 3 a day, 21 a week");
    expect(text).toContain("lead time             median 17m, p90 22m over 2 deployments");
    expect(text).toContain(`    not known for 1: ${exec.A5} (no commit: the platform gave none for this deployment)`);
    expect(text).toContain(`change failure rate   40 % (2 of 5): failed ${exec.A2}, ${exec.A4}`);
    expect(text).toContain("time to restore       median 40m 30s, p90 1h over 2 incidents");
    expect(text).toContain(`    ${incident.I1}  1h (${iso(62)} → ${iso(122)})`);
    expect(text).not.toContain(B);
  });

  it("opens the store as lookout start and run write it (the configuration's, or DYNAMODB_ENDPOINT and LOOKOUT_TABLE)", async () => {
    const saved = { endpoint: process.env.DYNAMODB_ENDPOINT, table: process.env.LOOKOUT_TABLE };
    const dir = mkdtempSync(join(tmpdir(), "lookout-report-"));
    try {
      process.env.DYNAMODB_ENDPOINT = dynamodbEndpoint();
      process.env.LOOKOUT_TABLE = table;
      const config = join(dir, "lookout.yaml");
      writeFileSync(config, `platform: { url: "http://127.0.0.1:1", token: "env:T" }\nwatch: [{ organization: ${sim.ids.organizationId} }]\ndata_dir: ${dir}\n`);
      const t = io();
      expect(await reportCommand({ config, from: period.from, to: period.to, format: "json" }, t.io), t.err.join("\n")).toBe(0);
      checkJson(JSON.parse(t.out.join("\n")) as DeliveryReport);
    } finally {
      for (const [k, v] of [["DYNAMODB_ENDPOINT", saved.endpoint], ["LOOKOUT_TABLE", saved.table]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("narrows to a service; a bad flag exits 2 naming it, before reading anything", async () => {
    const t = io();
    expect(await reportCommand(flags({ from: period.from, to: period.to, service: B, format: "json" }), t.io, audit)).toBe(0);
    const r = JSON.parse(t.out.join("\n")) as DeliveryReport;
    expect(r.services.map((s) => s.service.id)).toEqual([B]);
    expect(r.total.change_failure_rate).toMatchObject({ failed: 1, deployments: 2 });
    for (const [args, message] of [
      [{ since: "soon" }, 'lookout report: --since: "soon" is not a duration like 7d, 12h or 30m'],
      [{ service: "not-a-uuid-nor-known" }, '--service: no service named "not-a-uuid-nor-known"'],
      [{ from: "yesterday" }, 'lookout report: --from: "yesterday" is not an ISO 8601 date'],
      [{ format: "xml" }, '--format: "xml" is not one of table, json, csv'],
    ] as const) {
      const e = io();
      expect(await reportCommand(flags(args), e.io, audit), JSON.stringify(args)).toBe(2);
      expect(e.err.join("\n")).toContain(message);
      expect(e.out).toEqual([]);
    }
  });
});

describe("GET /report on the audit API", () => {
  const context = { functionName: "audit-api", awsRequestId: "r", getRemainingTimeInMillis: () => 10_000 } as unknown as Context;
  const get = (query: Record<string, string>): APIGatewayProxyEventV2 => ({
    version: "2.0", routeKey: "GET /report", rawPath: "/report", rawQueryString: new URLSearchParams(query).toString(),
    headers: {}, queryStringParameters: query,
    requestContext: { http: { method: "GET", path: "/report" } } as APIGatewayProxyEventV2["requestContext"], isBase64Encoded: false,
  });

  it("answers the same report as JSON, and as CSV with format=csv", async () => {
    // Asked a day after the simulator's start: the period is that day, as for the command.
    const handler = createAuditApiHandler({ reader: audit, now: () => new Date(t0 + DAY) });
    const res = await handler(get({ from: period.from, to: period.to }), context);
    expect(res.statusCode).toBe(200);
    const body = JSON.parse(res.body!) as DeliveryReport;
    checkJson(body);
    expect(JSON.parse((await handler(get({ since: "1d" }), context)).body!)).toEqual(body);
    const csv = await handler(get({ from: period.from, to: period.to, format: "csv", service: A }), context);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers?.["content-type"]).toBe("text/csv; charset=utf-8");
    const lines = csv.body!.split("\r\n");
    expect(lines[0]).toBe(REPORT_CSV_COLUMNS.join(","));
    expect(lines[1]).toContain(`,${A},`);
    expect(lines[1]).toContain(",3,3,21,2,1020,1320,1,0.4,2,5,2,2430,3600,0,");
  });

  it("cuts a period that runs past now to now: the future holds no deployment", async () => {
    const handler = createAuditApiHandler({ reader: audit, now: () => sim.clock.now() });
    const body = JSON.parse((await handler(get({ from: period.from, to: period.to }), context)).body!) as DeliveryReport;
    expect(body.period.to).toBe(sim.clock.nowIso());
    expect(body.total.deployment_frequency.deployments).toBe(4);
  });

  it("refuses a bad parameter with a 400 naming it, as GET /events does", async () => {
    const handler = createAuditApiHandler({ reader: audit, now: () => sim.clock.now() });
    for (const [query, field] of [
      [{ service: "api" }, "service"], [{ since: "7d", from: "2026-01-01" }, "since"], [{ kind: "deployment" }, "kind"],
      [{ format: "xml" }, "format"], [{ to: "2026-01-01T08:00" }, "to"],
    ] as const) {
      const res = await handler(get(query), context);
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
      expect(JSON.parse(res.body!).field).toBe(field);
    }
  });
});
