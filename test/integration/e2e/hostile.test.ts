/**
 * A corpus of hostile platform answers, served by a plain HTTP server to the real CLI (`lookout run
 * --once`, a child process) — DESIGN's "Never silent": no record can block a source. Every hostile item
 * sits in a list beside genuine, fresh failures. After the run: each genuine failure is alerted exactly
 * once, each hostile item is stored (clipped) or quarantined, and a second run adds nothing while every
 * source with a hostile item polls without failing. Sources whose whole answer is hostile (a stalled
 * body, a gzip bomb, garbage) fail alone: everything beside them is read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { randomUUID } from "node:crypto";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { nestedJson, startHostilePlatform, type HostilePlatform } from "../../support/hostile-platform.js";
import { delivery, deployment, iso, logEntry, set, type Json } from "../../support/platform-items.js";
import { localDynamoClient, scanTable, dynamodbEndpoint } from "../../support/dynamodb.js";
import { expandRecords } from "../../../lib/store/routine-batches.js";
import type { LookoutEventEnvelope } from "../../../lib/model/event.js";

const ROOT = resolve(import.meta.dirname, "..", "..", "..");
const ORG = randomUUID();
const SIZES = [3_000, 300_000];
const MIN = 60_000;

let platform: HostilePlatform;
beforeAll(async () => {
  platform = await startHostilePlatform();
});
afterAll(() => platform.close());

const big = (marker: string, size: number) => `${marker}-${"x".repeat(size)}`;

// ---- Deployments: one application per hostile item, its genuine failure beside it --------------------

const DEPLOY_TEXT_FIELDS = [
  "identifier.name", "identifier.service_id", "identifier.service_type", "identifier.execution_id", "status",
  "auditing_data.created_at", "auditing_data.updated_at", "auditing_data.triggered_by", "auditing_data.origin",
  "details.commit.git_commit_id", "details.commit.tag", "details.commit.message", "details.commit.author_name",
  "details.commit.author_avatar_url", "details.commit.commit_page_url", "details.build_pod_name",
  "status_details.action", "status_details.status", "status_details.sub_action", "icon_uri", "total_duration",
];

interface AppCase {
  name: string;
  app: string;
  /** The page before (run 1) and after (runs 2 and 3). */
  before: Json[];
  after: Json[];
  /** Executions (service id, execution id) that must be alerted exactly once. */
  genuine: Array<{ service: string; exec: string; transition?: string }>;
  /** Strings that must be found in the table (stored, or in a quarantine item's excerpt or ids). */
  hostile: string[];
}

function appCases(): AppCase[] {
  const cases: AppCase[] = [];
  const add = (name: string, build: (app: string) => Omit<AppCase, "name" | "app">) => {
    const app = randomUUID();
    cases.push({ name, app, ...build(app) });
  };
  for (const field of DEPLOY_TEXT_FIELDS) {
    for (const size of SIZES) {
      add(`${field} at ${size} characters`, (app) => {
        const exec = `h-${randomUUID()}`;
        const marker = `HOSTILE-${field}-${size}`;
        const hostile = set(deployment(app, exec, "DEPLOYED", 4 * MIN), field, big(marker, size));
        const g = `g-${randomUUID()}`;
        // Found by its execution id (a field Lookout does not keep, such as the avatar, leaves no trace of its own).
        const find = field === "identifier.execution_id" ? marker : exec;
        return { before: [], after: [deployment(app, g, "DEPLOYMENT_ERROR", MIN), hostile], genuine: [{ service: app, exec: g }], hostile: [find] };
      });
    }
  }
  const simple = (name: string, hostileItem: (app: string, exec: string) => Json) =>
    add(name, (app) => {
      const exec = `h-${randomUUID()}`;
      const g = `g-${randomUUID()}`;
      return { before: [], after: [deployment(app, g, "DEPLOYMENT_ERROR", MIN), hostileItem(app, exec)], genuine: [{ service: app, exec: g }], hostile: [exec] };
    });
  simple("nulls where nullable", (app, exec) => ({ ...deployment(app, exec, "DEPLOYED", 4 * MIN), details: { commit: null, build_pod_name: null }, auditing_data: null, status_details: null, total_duration: null }));
  simple("numbers where strings are expected", (app, exec) => set(set(set(deployment(app, exec, "DEPLOYED", 4 * MIN), "auditing_data.triggered_by", 42), "details.commit.message", 7), "total_duration", 131));
  simple("control characters", (app, exec) => set(deployment(app, exec, "DEPLOYED", 4 * MIN), "auditing_data.triggered_by", "ann\u0000\u001b[31m\u0007\r\n<!channel>\u2028"));
  simple("JSON nested 10,000 deep", (app, exec) => set(deployment(app, exec, "DEPLOYED", 4 * MIN), "details.commit.tag", nested(10_000)));
  for (const [name, stamp] of [["without a zone", "2026-11-23T08:00:00"], ["with nanoseconds and +02:00", "2026-11-23T10:00:00.123456789+02:00"], ["in year 9999", "9999-12-31T23:59:59Z"], ["unparsable", "yesterday-ish"]] as const) {
    add(`a timestamp ${name}`, (app) => {
      const h = `h-${randomUUID()}`;
      const ok = `ok-${randomUUID()}`;
      const g = `g-${randomUUID()}`;
      const odd = set(set(deployment(app, h, "DEPLOYMENT_ERROR", 10 * MIN), "auditing_data.created_at", stamp), "auditing_data.updated_at", stamp);
      // The odd failure, then a recovery and a fresh failure: the fresh one must open its own incident.
      return {
        before: [], after: [deployment(app, g, "DEPLOYMENT_ERROR", MIN), deployment(app, ok, "DEPLOYED", 3 * MIN), odd],
        genuine: [{ service: app, exec: g, transition: "failed" }, { service: app, exec: h }], hostile: [h],
      };
    });
  }
  add("the same execution listed twice", (app) => {
    const g = `g-${randomUUID()}`;
    const item = deployment(app, g, "DEPLOYMENT_ERROR", MIN);
    return { before: [], after: [item, item], genuine: [{ service: app, exec: g }], hostile: [g] };
  });
  add("two services sharing one execution id", (app) => {
    const g = `g-${randomUUID()}`;
    const other = randomUUID();
    return {
      before: [], after: [deployment(app, g, "DEPLOYMENT_ERROR", MIN), deployment(other, g, "DEPLOYMENT_ERROR", MIN)],
      genuine: [{ service: app, exec: g }, { service: other, exec: g }], hostile: [g],
    };
  });
  add("a history of 10,000 items, whatever pageSize asked", (app) => {
    const old = Array.from({ length: 10_000 }, (_, i) => deployment(app, `old-${i}-${app}`, "DEPLOYED", 60 * MIN + i * 1000));
    const g = `g-${randomUUID()}`;
    return { before: old, after: [deployment(app, g, "DEPLOYMENT_ERROR", MIN), ...old], genuine: [{ service: app, exec: g }], hostile: [`old-0-${app}`] };
  });
  return cases;
}

const nested = nestedJson;

// ---- Webhook deliveries and cluster logs: one list each, hostile items among genuine failures --------

const WEBHOOK_TEXT_FIELDS = ["id", "created_at", "kind", "matched_event", "target_url_used", "target_response_body", "request.payload.applications.0.id", "request.event_type"];

const LOG_TEXT_FIELDS = ["type", "timestamp", "step", "message.safe_message", "error.tag", "error.user_log_message", "error.link", "error.hint_message", "error.underlying_error.message", "error.event_details.region", "error.event_details.transmitter.name"];

// ---- Running the real CLI -----------------------------------------------------------------------------

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function lookoutOnce(config: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ["bin/lookout.mjs", "run", "--once", "--config", config], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
      if (process.env.HOSTILE_VERBOSE) appendFileSync(process.env.HOSTILE_VERBOSE, d);
    });
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", fail);
    child.on("exit", (code) => done({ code, stdout, stderr }));
  });
}

describe("hostile platform answers through lookout run --once", () => {
  it("alerts every genuine failure once, stores or quarantines every hostile item, and is done after one run", async () => {
    const apps = appCases();
    const webhook = randomUUID();
    const cluster = randomUUID();
    const whole = { stall: randomUUID(), bomb: randomUUID(), garbage: randomUUID() };

    // Webhook deliveries: genuine failures first, in the middle and last; hostile ones between.
    const genuineDeliveries = [0, 1, 2].map(() => `g-${randomUUID()}`);
    const hostileDeliveries: Array<{ item: Json; find: string }> = [];
    for (const field of WEBHOOK_TEXT_FIELDS) {
      for (const size of SIZES) {
        const id = field === "id" ? big(`HOSTILE-wh-id-${size}`, size) : `h-${randomUUID()}`;
        const marker = field === "id" ? `HOSTILE-wh-id-${size}` : `HOSTILE-wh-${field}-${size}`;
        const item = field === "id" ? delivery(id, 503, 3 * MIN) : set(delivery(id, 503, 3 * MIN), field, big(marker, size));
        hostileDeliveries.push({ item, find: field === "id" ? marker : id });
      }
    }
    for (const [i, item] of ([
      { ...delivery(`h-${randomUUID()}`, null, 3 * MIN), target_response_body: null, request: null, kind: null },
      { ...delivery(`h-${randomUUID()}`, 503, 3 * MIN), target_response_status_code: "503", kind: 5 },
      { ...delivery(`h-${randomUUID()}`, 503, 3 * MIN), target_response_body: "bad\u0000\u001b[0m<!here>\u2029" },
      { ...delivery(`h-${randomUUID()}`, 503, 3 * MIN), request: { payload: nested(10_000) } },
    ] as Json[]).entries()) hostileDeliveries.push({ item, find: String(item.id ?? `shape-${i}`) });
    const half = Math.floor(hostileDeliveries.length / 2);
    const deliveries = [
      delivery(genuineDeliveries[0]!, 503, 2 * MIN),
      ...hostileDeliveries.slice(0, half).map((h) => h.item),
      delivery(genuineDeliveries[1]!, 500, 2 * MIN),
      ...hostileDeliveries.slice(half).map((h) => h.item),
      delivery(genuineDeliveries[2]!, 404, 2 * MIN),
    ];

    // Cluster logs: the same, with error messages as markers of the genuine ones.
    const genuineLogs = [0, 1, 2].map(() => `GENUINE-${randomUUID()}`);
    // Told apart in events by their timestamp (record.timestamp, as the platform wrote it).
    const genuineLogEntries = (["CreateError", "Create", "UpgradeError"] as const).map((step, i) => logEntry(step, "error", 2 * MIN + i * 1000, genuineLogs[i]!));
    const hostileLogs: Array<{ item: Json; find: string }> = [];
    for (const field of LOG_TEXT_FIELDS) {
      for (const size of SIZES) {
        const marker = `HOSTILE-log-${field}-${size}`;
        hostileLogs.push({ item: set(logEntry("Create", "info", 3 * MIN, `info ${marker}`), field, big(marker, size)), find: marker });
      }
    }
    for (const item of [
      { type: null, timestamp: null, step: null, message: null, error: null, details: null },
      { type: 5, timestamp: 1_700_000_000, step: ["Create"], message: { safe_message: 12 } },
      logEntry("Create", "info", 3 * MIN, "ctl\u0000\u001b[31m<!channel>"),
      { ...logEntry("Create", "info", 3 * MIN, "deep"), details: nested(10_000) },
      { ...logEntry("Create", "info", 3 * MIN, "late"), timestamp: "9999-12-31T23:59:59.999999999Z" },
    ]) hostileLogs.push({ item, find: "" });
    const logs = [
      genuineLogEntries[0]!,
      ...hostileLogs.slice(0, 10).map((h) => h.item),
      genuineLogEntries[1]!,
      ...hostileLogs.slice(10).map((h) => h.item),
      genuineLogEntries[2]!,
    ];

    // Run 1 (first sight): the lists as they were; whole-answer sources hostile from the start.
    const path = {
      app: (id: string) => `/application/${id}/deploymentHistoryV2`,
      webhook: (id: string) => `/organization/${ORG}/webhook/${id}/event`,
      cluster: (id: string) => `/organization/${ORG}/cluster/${id}/logs`,
    };
    for (const c of apps) platform.list(path.app(c.app), c.before);
    platform.list(path.webhook(webhook), []);
    platform.list(path.cluster(cluster), []);
    platform.answer(path.app(whole.stall), { kind: "stall" });
    platform.answer(path.app(whole.bomb), { kind: "gzip-bomb", bytes: 4 * 2 ** 30 });
    platform.answer(path.cluster(whole.garbage), { kind: "raw", text: '{"results": [ {"type": "error",' });

    const dataDir = mkdtempSync(join(tmpdir(), "lookout-hostile-"));
    const config = join(dataDir, "lookout.json");
    // A one-second timeout: each run lasts as long as the stalled answer's four attempts (with 3 s, 15 s a run).
    writeFileSync(config, JSON.stringify({
      platform: { url: platform.url, token: "env:PLATFORM_API_TOKEN", timeout: "1s" },
      watch: [{ organization: ORG, webhooks: [webhook], clusters: [cluster, whole.garbage], applications: [...apps.map((c) => c.app), whole.stall, whole.bomb] }],
      data_dir: join(dataDir, "data"),
      health: { failing_after: 10 },
    }));
    const tableName = `hostile-${randomUUID().slice(0, 8)}`;
    const env = { ...process.env, PLATFORM_API_TOKEN: platform.token, DYNAMODB_ENDPOINT: dynamodbEndpoint(), LOOKOUT_TABLE: tableName };
    let t = performance.now();
    const took = (what: string) => {
      console.log(`hostile: ${what} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
      t = performance.now();
    };
    const first = await lookoutOnce(config, env);
    took("first sight");
    // Exit 1: the three whole-answer sources failed (docs: exit codes); nothing else may.
    const failedPolls = (r: Run) => r.stdout.split("\n").filter((l) => l.includes(" poll ") && l.includes("FAILED"));
    const wholeIds = Object.values(whole).map((id) => id.slice(0, 8));
    const onlyWholeFailed = (r: Run) => {
      expect(r.code, r.stderr.slice(-2000)).toBe(1);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(failedPolls(r).filter((l) => !wholeIds.some((id) => l.includes(id))), r.stderr.slice(-2000)).toEqual([]);
      expect(failedPolls(r)).toHaveLength(3);
    };
    onlyWholeFailed(first);

    // Run 2: the hostile lists with fresh genuine failures.
    for (const c of apps) platform.list(path.app(c.app), c.after);
    platform.list(path.webhook(webhook), deliveries);
    platform.list(path.cluster(cluster), logs);
    const second = await lookoutOnce(config, env);
    took("the hostile run");
    onlyWholeFailed(second);

    const eventsFile = join(dataDir, "data", "events.ndjson");
    const events = (): LookoutEventEnvelope[] =>
      existsSync(eventsFile) ? readFileSync(eventsFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
    const afterSecond = events();
    // An amendment (what changed) updates its failure's messages: not a failure of its own.
    const failures = afterSecond.filter((e) => e.detail.kind !== "health" && !e.detail.amends);

    // Every genuine failure exactly once.
    for (const c of apps) {
      for (const g of c.genuine) {
        const got = failures.filter((e) => e.detail.deployment?.execution_id === g.exec && e.detail.service?.id === g.service);
        expect(got.length, `${c.name}: ${g.exec} of ${g.service}`).toBe(1);
        if (g.transition) expect(got[0]!.detail.transition, c.name).toBe(g.transition);
      }
    }
    for (const id of genuineDeliveries) {
      expect(failures.filter((e) => e.detail.kind === "webhook_delivery" && JSON.stringify(e.detail).includes(id)).length, `delivery ${id}`).toBe(1);
    }
    for (const entry of genuineLogEntries) {
      const at = entry.timestamp as string;
      expect(failures.filter((e) => e.detail.kind === "cluster_log" && e.detail.record?.timestamp === at).length, `log at ${at}`).toBe(1);
    }

    // Every hostile item stored (maybe clipped) or quarantined: its marker or id is in the table.
    const doc = DynamoDBDocumentClient.from(localDynamoClient());
    // Records that raised nothing are kept in compressed batches: read as the records they hold.
    const texts = expandRecords(await scanTable(doc, tableName)).map((item) => JSON.stringify(item));
    const inTable = (s: string) => texts.some((t) => t.includes(s));
    for (const c of apps) for (const h of c.hostile) expect(inTable(h), `${c.name}: ${h} stored or quarantined`).toBe(true);
    for (const h of hostileDeliveries) expect(inTable(h.find), `delivery ${h.find.slice(0, 60)} stored or quarantined`).toBe(true);
    for (const h of hostileLogs.filter((l) => l.find)) expect(inTable(h.find), `log ${h.find} stored or quarantined`).toBe(true);

    // Run 3 adds nothing, and every source with a hostile item polls without failing.
    const third = await lookoutOnce(config, env);
    took("the run after it");
    // The whole-answer sources fail again (the stall within the timeout, the bomb within its limit), alone.
    onlyWholeFailed(third);
    expect(events().filter((e) => e.detail.kind !== "health" && !e.detail.amends).length).toBe(failures.length);
  }, 600_000);
});
