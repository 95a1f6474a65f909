/**
 * The audit trail on DynamoDB Local with a few thousand records from the simulator, produced through the
 * real pipeline (pollSource → store, deliver → notify store): every filter and combinations of them,
 * paging without gaps or repeats (all pages against an oracle computed from the stored items), explain
 * of a delivered, a muted, a stormed and a backfilled alert, the CLI and the API on the same table, no
 * Scan anywhere on the read path, and a TTL on every item kind.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pMap from "p-map";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, PutCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { APIGatewayProxyEventV2, Context } from "aws-lambda";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { createPlatformClient } from "../../../lib/platform/client.js";
import { DynamoIngestStore } from "../../../lib/store/ingest-store.js";
import type { Mute } from "../../../lib/model/notify-store.js";
import { DynamoNotifyStore } from "../../../lib/store/notify-store.js";
import { DynamoDispatchStore } from "../../../lib/store/dispatch-store.js";
import { initialState } from "../../../lib/dispatch/source-state.js";
import { watchlist } from "../../../lib/dispatch/watchlist.js";
import { pollSource, type PollDeps } from "../../../lib/poll/poll.js";
import type { SourceRef } from "../../../lib/model/source.js";
import { deliver, flushHeld, type DeliverDeps } from "../../../lib/notify/deliver.js";
import type { AlertItem } from "../../../lib/model/alert-item.js";
import { TTL_ATTRIBUTE } from "../../../lib/model/items.js";
import { AuditTrail } from "../../../lib/audit/trail.js";
import { DynamoAuditItems } from "../../../lib/store/audit-store.js";
import { parseAuditQuery } from "../../../lib/audit/parse.js";
import type { Filters, TimeRange } from "../../../lib/audit/model.js";
import type { AuditRow } from "../../../lib/model/audit-row.js";
import { auditCommand, explainCommand } from "../../../local/cli/audit-commands.js";
import { createAuditApiHandler } from "../../../lib/app/lambda/audit-api.js";
import { freshTable, localDynamoClient, TEST_RETENTION_MS, scanTable, dynamodbEndpoint } from "../../support/dynamodb.js";
import { expandRecords } from "../../../lib/store/routine-batches.js";
import { recordingChannel } from "../../support/recording-channel.js";
import { batchBeforeLeanEntries, batchBeforeSourceKeys, beforeLeanEntries } from "../../support/earlier-formats.js";
import { auditRowOf } from "../../../lib/model/audit-index.js";

const silent = { info() {}, warn() {}, error() {} };
const HOUR = 3_600_000;

let sim: Simulator;
let client: DynamoDBClient;
let tableName: string;
let doc: DynamoDBDocumentClient;
let notify: DynamoNotifyStore;
let audit: AuditTrail;
let readClient: DynamoDBClient;
/** Every command the audit store's client sent. */
const commands: string[] = [];
let items: Array<Record<string, unknown>>;
const simNow = () => sim.clock.now();

let delivered: AlertItem;
let muted: AlertItem;
let backfilled: AlertItem;
let stormed: AlertItem;
const mute: Mute = {
  id: "mute-audit-1", scope: {}, until: "", reason: "database migration", created_by: "ann@example.com", created_at: "",
};

/** Every stored item, the records kept in batches as record items again (what the oracle reads). */
async function scanAll(): Promise<Array<Record<string, unknown>>> {
  return expandRecords(await scanTable(doc, tableName));
}

beforeAll(async () => {
  const t = await freshTable("audit");
  client = t.client;
  tableName = t.tableName;
  doc = DynamoDBDocumentClient.from(client);
  sim = await startSimulator({ seed: 11, size: { applications: 16, clusters: 4, webhooks: 1 } });
  const store = new DynamoIngestStore({ client, tableName, retentionMs: TEST_RETENTION_MS, now: simNow });
  notify = new DynamoNotifyStore({ client, tableName, retentionMs: TEST_RETENTION_MS, now: simNow });
  const deps: PollDeps = {
    client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token", sleep: async () => {} }),
    store, now: simNow, backfillWindowMs: 15 * 60_000, log: silent,
  };
  const org = sim.ids.organizationId;
  const webhook: SourceRef = { kind: "webhook", organizationId: org, id: sim.ids.webhookIds[0]! };
  const clusters: SourceRef[] = sim.ids.clusterIds.map((id) => ({ kind: "cluster", organizationId: org, id }));
  const apps: SourceRef[] = sim.ids.applicationIds.map((id) => ({ kind: "deployment", organizationId: org, id }));
  const poll = (s: SourceRef) => pollSource({ source: s }, deps);
  const round = async () => {
    await poll(webhook); // first: the change feed names services, so executions get their project and environment
    await Promise.all([...clusters, ...apps].map(poll));
  };

  // An hour-old cluster run with errors, first seen now: stored, but kept quiet (backfill).
  sim.scenario.clusterRun(sim.ids.clusterIds[0]!, { entries: 20, errors: 2 });
  sim.clock.advance(HOUR);
  await round();

  // Twelve hours of activity over sixteen applications and four clusters, read every two hours; the
  // webhook's target fails for an hour.
  const a0 = sim.ids.applicationIds[0]!;
  sim.scenario.randomActivity({ durationMs: 12 * HOUR, deploymentsPerHour: 32, failureRate: 0.15, clusterRunsPerHour: 8, clusterErrorRate: 0.3 });
  sim.scenario.deploy(a0, { outcome: "DEPLOYMENT_ERROR", triggeredBy: "Ann@Example.com", origin: "CLI", at: new Date(sim.clock.nowMs() + 90 * 60_000) });
  sim.scenario.deploy(a0, { outcome: "DEPLOYED", triggeredBy: "ann@example.com", origin: "CLI", at: new Date(sim.clock.nowMs() + 150 * 60_000) });
  for (let h = 0; h < 12; h += 2) {
    if (h === 4) sim.scenario.setWebhookTarget(sim.ids.webhookIds[0]!, { status: 503, body: "upstream down, retry" });
    sim.clock.advance(HOUR);
    if (h === 4) sim.scenario.setWebhookTarget(sim.ids.webhookIds[0]!, { status: 200 });
    sim.clock.advance(HOUR);
    await round();
  }

  // Deliveries: one sent, one muted, three in a storm (one sent, two held then sent as a digest).
  items = await scanAll();
  const alerts = items.filter((i) => i.item_type === "alert") as unknown as AlertItem[];
  const pending = alerts.filter((a) => a.state === "pending");
  delivered = pending.find((a) => a.detail.transition === "failed")!;
  muted = pending.find((a) => a.detail.kind === "webhook_delivery")!;
  backfilled = alerts.find((a) => a.suppression?.reason === "backfill")!;
  const deliverDeps: DeliverDeps = { store: notify, now: simNow, rate: { perSecond: 1, burst: 10 }, log: silent };
  await deliver(delivered.detail, "prod-failures", recordingChannel("oncall"), [], deliverDeps);
  Object.assign(mute, {
    scope: { service: muted.detail.service!.id }, created_at: new Date(sim.clock.nowMs() - 1000).toISOString(),
    until: new Date(sim.clock.nowMs() + HOUR).toISOString(),
  });
  await notify.putMute(mute);
  await deliver(muted.detail, "everything", recordingChannel("noisy"), [mute], deliverDeps);
  const storm = pending.filter((a) => a.detail.kind === "cluster_log").slice(0, 3);
  const tight: DeliverDeps = { ...deliverDeps, rate: { perSecond: 0.01, burst: 1 } };
  const stormChannel = recordingChannel("storm");
  for (const a of storm) await deliver(a.detail, "clusters", stormChannel, [], tight);
  sim.clock.advance(200_000);
  await flushHeld(stormChannel, tight);
  stormed = storm[1]!;
  // One left held (its HELD# item stays), and the dispatch state, for the TTL check.
  const held = recordingChannel("held");
  for (const a of storm.slice(0, 2)) await deliver(a.detail, "clusters", held, [], tight);
  await new DynamoDispatchStore({ client, tableName }).update("audit-test", () =>
    initialState(watchlist({ watch: [], platform: { requestsPerHour: 1000 } } as never), sim.clock.nowMs()));

  // Every third execution, alert and record stored whole as the version before lean index entries
  // wrote it (its row in every index entry): a table upgraded in place, read in both formats at once.
  const whole = (await scanTable(doc, tableName)).filter((i) => ["execution", "alert", "record"].includes(String(i.item_type)));
  await pMap(whole.filter((_, n) => n % 3 === 0), (i) => doc.send(new PutCommand({ TableName: tableName, Item: beforeLeanEntries(i) })), { concurrency: 8 });
  // Every third batch of records that raised nothing as the version before found them by source and
  // kind wrote it (in every index of its records' dimensions); every fifth as the one before lean entries.
  const batches = (await scanTable(doc, tableName)).filter((i) => i.item_type === "routine_batch");
  expect(batches.length).toBeGreaterThan(30);
  const earlier = batches.flatMap((b, n) => (n % 5 === 0 ? [batchBeforeLeanEntries(b)] : n % 3 === 0 ? [batchBeforeSourceKeys(b)] : []));
  await pMap(earlier, (Item) => doc.send(new PutCommand({ TableName: tableName, Item })), { concurrency: 8 });

  items = await scanAll();
  // The reader's own client: every command it sends is seen here, and a Scan fails the query.
  readClient = localDynamoClient();
  readClient.middlewareStack.add(
    (next, context) => async (args) => {
      commands.push(context.commandName ?? "?");
      if (context.commandName === "ScanCommand") throw new Error("the audit read path issued a Scan");
      return next(args);
    },
    { step: "initialize", name: "recordCommands" },
  );
  audit = new AuditTrail(new DynamoAuditItems({ client: readClient, tableName }));
}, 300_000);

afterAll(async () => {
  await sim?.close();
});

// ---- The oracle: the stored rows, filtered and ordered independently of the indexes ------------------

function matches(row: AuditRow, f: Filters, range: TimeRange): boolean {
  const eq = (a: string | undefined, b: string | undefined) => b === undefined || a?.toLowerCase() === b.toLowerCase();
  return (
    eq(row.organization, f.organization) && eq(row.project?.id, f.project) && eq(row.environment?.id, f.environment) &&
    eq(row.service?.id, f.service) && eq(row.cluster?.id, f.cluster) && eq(row.webhook?.id, f.webhook) &&
    eq(row.actor, f.actor) && eq(row.status, f.status) && eq(row.kind, f.kind) && eq(row.severity, f.severity) &&
    eq(row.type, f.type) && (f.transition === undefined || (row.type === "alert" && row.transition === f.transition)) &&
    (f.commit === undefined || (row.commit ?? "").startsWith(f.commit)) &&
    (range.from === undefined || row.at >= range.from) && (range.to === undefined || row.at < range.to) &&
    // An item is keyed by one subject and one "who": a service hides its cluster, an actor its webhook.
    !(f.cluster && row.service) && !(f.webhook && row.actor)
  );
}

const entryKey = (r: AuditRow) => `${r.type}:${r.id}`;

function oracle(f: Filters, range: TimeRange): string[] {
  return items
    .filter((i) => auditRowOf(i) && matches(auditRowOf(i)!, f, range))
    // By code unit, as DynamoDB orders strings (localeCompare would not).
    .sort((a, b) => (String(b.ix_at) < String(a.ix_at) ? -1 : 1))
    .map((i) => entryKey(auditRowOf(i)!));
}

async function allPages(raw: Record<string, string>, limit: number) {
  const keys: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  const first = parseAuditQuery({ ...raw, limit: String(limit) }, simNow());
  do {
    const q = parseAuditQuery({ ...raw, limit: String(limit), ...(cursor ? { cursor } : {}) }, simNow());
    const page = await audit.query(q, { deliveries: false });
    expect(page.rows.length).toBeLessThanOrEqual(limit);
    if (page.cursor) expect(page.rows).toHaveLength(limit);
    keys.push(...page.rows.map(entryKey));
    cursor = page.cursor;
    pages++;
  } while (cursor);
  return { keys, pages, query: first };
}

// ---- The queries -------------------------------------------------------------------------------------

describe("the stored trail", () => {
  it("holds a few thousand executions, records and alerts from the simulator", () => {
    const count = (type: string) => items.filter((i) => auditRowOf(i)?.type === type).length;
    expect(count("record")).toBeGreaterThan(1200);
    expect(count("execution")).toBeGreaterThan(300);
    expect(count("alert")).toBeGreaterThan(60);
    expect(count("record") + count("execution") + count("alert")).toBeGreaterThan(2000);
    // Every record, execution and alert carries its audit row, and nothing else does.
    for (const i of items) expect(Boolean(auditRowOf(i))).toBe(["record", "execution", "alert"].includes(String(i.item_type)));
    // Both formats: rows on the items (the index entries carry only what filters read), and older items' rows whole in their entries.
    const lean = items.filter((i) => i.row);
    expect(lean.length).toBeGreaterThan(items.filter((i) => auditRowOf(i)).length / 2);
    for (const i of lean) expect(Object.keys(i.audit as object).every((f) => ["type", "kind", "severity", "commit", "status"].includes(f))).toBe(true);
    expect(items.filter((i) => !i.row && auditRowOf(i)).length).toBeGreaterThan(200);
  });
});

describe("every filter, alone and combined, over all pages", () => {
  const pick = () => {
    const rows = items.map(auditRowOf).filter((r): r is AuditRow => !!r);
    const exec = rows.find((r) => r.type === "execution" && r.actor?.toLowerCase() === "ann@example.com" && r.commit)!;
    const byService = new Map<string, number>();
    for (const r of rows) if (r.service) byService.set(r.service.id, (byService.get(r.service.id) ?? 0) + 1);
    const busiest = [...byService].sort((a, b) => b[1] - a[1])[0]![0];
    const env = rows.find((r) => r.environment)!.environment!.id;
    const project = rows.find((r) => r.project)!.project!.id;
    const at = rows.map((r) => r.at).sort();
    return { exec, busiest, env, project, from: at[Math.floor(at.length * 0.3)]!, to: at[Math.floor(at.length * 0.6)]! };
  };

  it("returns exactly the oracle's rows, newest first, with no gap and no repeat", async () => {
    const p = pick();
    const org = sim.ids.organizationId;
    const c0 = sim.ids.clusterIds[0]!;
    const wh = sim.ids.webhookIds[0]!;
    const cases: Array<[Record<string, string>, number]> = [
      [{}, 400],
      [{ organization: org }, 350],
      [{ project: p.project }, 300],
      [{ environment: p.env }, 300],
      [{ service: p.busiest }, 9],
      [{ cluster: c0 }, 60],
      [{ webhook: wh }, 150],
      [{ kind: "deployment" }, 70],
      [{ kind: "webhook_delivery" }, 150],
      [{ kind: "cluster_log" }, 150],
      [{ status: "DEPLOYMENT_ERROR" }, 6],
      [{ status: "error" }, 7],
      [{ status: "503" }, 11],
      [{ transition: "failed" }, 4],
      [{ transition: "delivery_failed" }, 9],
      [{ severity: "error" }, 8],
      [{ severity: "info" }, 5],
      [{ severity: "warning" }, 10],
      [{ actor: "ANN@example.com" }, 2],
      [{ commit: p.exec.commit!.slice(0, 7) }, 1],
      [{ commit: p.exec.commit! }, 1],
      [{ type: "execution" }, 90],
      [{ type: "alert" }, 25],
      [{ type: "record" }, 250],
      [{ since: "3h" }, 90],
      [{ from: p.from, to: p.to }, 120],
      // combinations: the most selective key, the rest filtered
      [{ service: p.busiest, since: "6h" }, 4],
      [{ environment: p.env, transition: "failed" }, 3],
      [{ kind: "deployment", status: "DEPLOYED" }, 40],
      [{ organization: org, severity: "error", from: p.from, to: p.to }, 2],
      [{ actor: "ann@example.com", kind: "deployment", type: "alert" }, 1],
      [{ cluster: c0, status: "ERROR" }, 3],
      [{ webhook: wh, status: "503", since: "10h" }, 6],
      [{ type: "alert", service: p.busiest }, 2],
      [{ kind: "cluster_log", severity: "error", cluster: c0 }, 2],
      [{ kind: "cluster_log", type: "alert" }, 3],
      [{ project: p.project, environment: p.env, kind: "webhook_delivery", status: "200" }, 100],
      // records that raised nothing: found by their source and kind, their other dimensions filtered
      [{ status: "200" }, 60],
      [{ service: p.busiest, status: "200" }, 3],
      [{ webhook: wh, project: p.project, environment: p.env }, 40],
      [{ cluster: c0, status: "INFO" }, 20],
    ];
    await pMap(cases, async ([raw, limit]) => {
      const { keys, pages, query } = await allPages(raw, limit);
      const expected = oracle(query.filters, query.range);
      expect(expected.length, JSON.stringify(raw)).toBeGreaterThan(0);
      expect(new Set(keys).size, JSON.stringify(raw)).toBe(keys.length);
      expect(keys, JSON.stringify(raw)).toEqual(expected);
      if (expected.length > limit) expect(pages, JSON.stringify(raw)).toBeGreaterThan(1);
    }, { concurrency: 4 });
    // A contradiction finds nothing (a service is never a cluster), and says so in one empty page.
    const none = await allPages({ cluster: c0, service: p.busiest }, 5);
    expect(none).toMatchObject({ keys: [], pages: 1 });
  }, 60_000);

  it("joins who was told to alert rows", async () => {
    const page = await audit.query(parseAuditQuery({ service: delivered.detail.service!.id, type: "alert", limit: "100" }, simNow()));
    const row = page.rows.find((r) => r.id === delivered.alert_id)!;
    expect(row.deliveries).toEqual([expect.objectContaining({ route: "prod-failures", receiver: "slack #oncall", state: "sent", attempts: 1 })]);
    const quiet = (await audit.query(parseAuditQuery({ cluster: backfilled.detail.cluster!.id, type: "alert", limit: "100" }, simNow())))
      .rows.find((r) => r.id === backfilled.alert_id)!;
    expect(quiet).toMatchObject({ state: "suppressed", suppression: { reason: "backfill" } });
  });
});

// ---- explain ---------------------------------------------------------------------------------------

describe("explain", () => {
  it("a delivered deployment alert: the execution as read, each status, each alert, who was told", async () => {
    const e = (await audit.explain(delivered.alert_id))!;
    expect(e.subject).toMatchObject({ type: "execution", service_id: delivered.detail.service!.id, execution_id: delivered.detail.deployment!.execution_id });
    const s = e.subject as Extract<typeof e.subject, { type: "execution" }>;
    expect(s.history.map((h) => h.status)).toContain(delivered.detail.status);
    expect(s.observation).toMatchObject({ execution_id: delivered.detail.deployment!.execution_id });
    const a = e.alerts.find((x) => x.id === delivered.alert_id)!;
    expect(a).toMatchObject({ transition: "failed", published: true, deliveries: [{ route: "prod-failures", receiver: "slack #oncall", state: "sent", attempts: 1, ts: "1.000100" }] });
    expect(a.verdict).toBe("told: slack #oncall (route prod-failures)");
    // The same execution, asked by its own id, explains the same.
    expect(await audit.explain(s.id)).toEqual({ ...e, id: s.id });
  });

  it("a muted alert: the record as read (redacted), the mute with its reason", async () => {
    const e = (await audit.explain(muted.alert_id))!;
    expect(e.subject).toMatchObject({ type: "record", kind: "webhook_delivery" });
    const a = e.alerts[0]!;
    expect(a.deliveries[0]).toMatchObject({ state: "suppressed", suppression: { reason: "mute", mute: { id: mute.id, reason: "database migration", created_by: "ann@example.com" } } });
    expect(a.verdict).toBe("nobody was told: not slack #noisy (route everything): muted by ann@example.com: database migration");
    const json = JSON.stringify(e);
    expect(json).toContain("[REDACTED]");
    expect(json).not.toMatch(/shh-|sig_[a-z0-9]{8}/i);
    // By the delivery's own id too.
    expect((await audit.explain((e.subject as { id: string }).id))!.alerts[0]!.id).toBe(muted.alert_id);
  });

  it("a backfilled alert: kept quiet at first sight, with the reason", async () => {
    const e = (await audit.explain(backfilled.alert_id))!;
    expect(e.subject).toMatchObject({ type: "record", kind: "cluster_log" });
    expect(e.alerts[0]).toMatchObject({ published: false, suppression: { reason: "backfill" }, deliveries: [] });
    expect(e.alerts[0]!.verdict).toMatch(/^nobody was told: backfill — older than the 15m backfill window/);
  });

  it("a stormed alert: held back, then sent in a digest", async () => {
    const a = (await audit.explain(stormed.alert_id))!.alerts[0]!;
    const d = a.deliveries.find((x) => x.receiver === "slack #storm")!;
    expect(d).toMatchObject({ state: "sent", suppression: { reason: "storm" }, digest: { state: "sent" } });
    expect(d.digest!.id).toMatch(/^digest-/);
  });

  it("an unknown id is undefined", async () => {
    expect(await audit.explain("no-such-id")).toBeUndefined();
  });
});

// ---- The CLI and the API on the same table -----------------------------------------------------------

describe("lookout audit and lookout explain on the local store", () => {
  let config: string;
  beforeAll(() => {
    process.env.DYNAMODB_ENDPOINT = dynamodbEndpoint();
    process.env.LOOKOUT_TABLE = tableName;
    const dir = mkdtempSync(join(tmpdir(), "lookout-audit-"));
    config = join(dir, "lookout.yaml");
    writeFileSync(config, `platform: { url: "http://127.0.0.1:1", token: "env:T" }\nwatch: [{ organization: ${sim.ids.organizationId} }]\ndata_dir: ${dir}\n`);
  });
  const io = () => {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
  };

  it("prints a table, JSON lines or CSV, with the next page's cursor", async () => {
    const service = delivered.detail.service!.id;
    const t = io();
    expect(await auditCommand({ config, service, limit: "3" }, t.io)).toBe(0);
    expect(t.out[0]).toMatch(/^TIME \(UTC\)\s+TYPE/);
    expect(t.out.at(-1)).toMatch(/^3 rows; next page: --cursor [A-Za-z0-9_-]+$/);

    const j = io();
    expect(await auditCommand({ config, service, type: "alert", format: "ndjson", limit: "100" }, j.io)).toBe(0);
    const rows = j.out.map((l) => JSON.parse(l) as AuditRow);
    expect(rows.map(entryKey)).toEqual(oracle({ service, type: "alert" }, {}));
    expect(rows.find((r) => r.id === delivered.alert_id)!.deliveries![0]!.state).toBe("sent");

    // --format json: one document, the rows and the next page's cursor in it, nothing on stderr.
    const d = io();
    expect(await auditCommand({ config, service, type: "alert", format: "json", limit: "100" }, d.io)).toBe(0);
    const doc = JSON.parse(d.out.join("\n")) as { rows: AuditRow[]; next_cursor: string | null };
    expect(doc.rows.map(entryKey)).toEqual(rows.map(entryKey));
    expect(doc.next_cursor).toBeNull();
    expect(d.err).toEqual([]);

    // A name where the id goes: the same rows (the name from the stored records).
    const byName = io();
    const serviceName = delivered.detail.service!.name!;
    expect(await auditCommand({ config, service: serviceName, type: "alert", format: "json", limit: "100" }, byName.io)).toBe(0);
    expect((JSON.parse(byName.out.join("\n")) as { rows: AuditRow[] }).rows.map(entryKey)).toEqual(rows.map(entryKey));
    const unknown = io();
    expect(await auditCommand({ config, service: "no-such-service", format: "json" }, unknown.io)).toBe(2);
    expect(unknown.err).toEqual([expect.stringMatching(/^lookout audit: --service: no service named "no-such-service"/)]);
    expect(unknown.out).toEqual([]);

    const c = io();
    expect(await auditCommand({ config, service, format: "csv", limit: "2" }, c.io)).toBe(0);
    expect(c.out[0]).toBe("at,type,kind,id,status,transition,severity,organization,project,environment,service,cluster,webhook,actor,commit,state,suppression,told,summary\r");
    expect(c.out).toHaveLength(3);
    expect(c.err[0]).toMatch(/^next page: --cursor /);
  });

  it("says which flag is wrong, and exits 2 without touching the store", async () => {
    for (const [args, message] of [
      // --service and the like take names too (resolved in the store); --webhook takes ids only.
      [{ webhook: "api" }, /^lookout audit: --webhook: "api" is not a uuid/],
      [{ from: "2026-13-01" }, /^lookout audit: --from: "2026-13-01" is not an ISO 8601/],
      [{ since: "7d", to: "2026-03-01" }, /^lookout audit: --since: give since, or from/],
      [{ format: "xml" }, /^lookout audit: --format: "xml" is not one of table, json, ndjson, csv/],
    ] as const) {
      const t = io();
      expect(await auditCommand({ config: "/nonexistent.yaml", ...args }, t.io)).toBe(2);
      expect(t.err[0]).toMatch(message);
    }
  });

  it("explains an alert for people, and an unknown id exits 1", async () => {
    const t = io();
    expect(await explainCommand(muted.alert_id, { config }, t.io)).toBe(0);
    const text = t.out.join("\n");
    expect(text).toContain("webhook delivery");
    expect(text).toContain("as read (redacted)");
    expect(text).toContain("mute: muted until");
    expect(text).toContain("→ nobody was told: not slack #noisy (route everything): muted by ann@example.com: database migration");
    const u = io();
    expect(await explainCommand("nope", { config }, u.io)).toBe(1);
    expect(u.err[0]).toMatch(/no record, alert or execution nope/);
  });
});

describe("the audit API on the same table", () => {
  const context = { functionName: "audit-api", awsRequestId: "r", getRemainingTimeInMillis: () => 10_000 } as unknown as Context;
  const get = (path: string, query?: Record<string, string>): APIGatewayProxyEventV2 => ({
    version: "2.0", routeKey: path.startsWith("/explain/") ? "GET /explain/{id}" : "GET /events", rawPath: path, rawQueryString: "",
    headers: {}, ...(query ? { queryStringParameters: query } : {}),
    ...(path.startsWith("/explain/") ? { pathParameters: { id: path.slice(9) } } : {}),
    requestContext: { http: { method: "GET", path } } as APIGatewayProxyEventV2["requestContext"], isBase64Encoded: false,
  });

  it("pages with next_cursor, 400s a bad filter or another query's cursor, 404s an unknown id", async () => {
    const handler = createAuditApiHandler({ reader: audit, now: simNow });
    const webhook = sim.ids.webhookIds[0]!;
    const keys: string[] = [];
    let cursor: string | undefined;
    let first: string | undefined;
    do {
      const res = await handler(get("/events", { webhook, status: "503", limit: "4", ...(cursor ? { cursor } : {}) }), context);
      expect(res.statusCode).toBe(200);
      const body = JSON.parse(res.body!) as { events: AuditRow[]; next_cursor?: string };
      keys.push(...body.events.map(entryKey));
      cursor = body.next_cursor;
      first ??= cursor;
    } while (cursor);
    expect(keys).toEqual(oracle({ webhook, status: "503" }, {}));

    const bad: Array<Record<string, string>> = [{ webhook: "nope" }, { sinse: "7d" }, { to: "tomorrow" }, { service: webhook, cursor: first! }];
    for (const query of bad) {
      const res = await handler(get("/events", query), context);
      expect(res.statusCode).toBe(400);
      expect(JSON.parse(res.body!).error).toMatch(/^(webhook|sinse|to|cursor): /);
    }
    expect((await handler(get(`/explain/${delivered.alert_id}`), context)).statusCode).toBe(200);
    expect((await handler(get("/explain/unknown-id"), context)).statusCode).toBe(404);
  });
});

// ---- Retention ---------------------------------------------------------------------------------------

describe("retention", () => {
  it("gives every item of every kind a TTL", async () => {
    const all = await scanTable(doc, tableName);
    const kinds = new Set(all.map((i) => String(i.item_type)));
    expect([...kinds].sort()).toEqual([
      "alert", "bucket", "cursor", "delivery", "directory", "dispatch", "execution", "held", "incident", "incident_root", "mute", "record", "record_ref",
      "routine_batch", "service",
    ]);
    const missing = all.filter((i) => typeof i[TTL_ATTRIBUTE] !== "number" || (i[TTL_ATTRIBUTE] as number) * 1000 < sim.clock.nowMs());
    expect(missing.map((i) => `${String(i.item_type)} ${String(i.pk)}`)).toEqual([]);
  });
});

// ---- No Scan -----------------------------------------------------------------------------------------

describe("the read path", () => {
  it("issued no Scan in all of the above: Query on the indexes, GetItem, BatchGetItem and Query by key", async () => {
    expect(commands.length).toBeGreaterThan(300);
    expect(new Set(commands)).toEqual(new Set(["QueryCommand", "GetItemCommand", "BatchGetItemCommand"]));
    // The guard sees through the document client: a Scan on the reader's client fails.
    await expect(DynamoDBDocumentClient.from(readClient).send(new ScanCommand({ TableName: tableName, Limit: 1 }))).rejects.toThrow(/the audit read path issued a Scan/);
  });
});
