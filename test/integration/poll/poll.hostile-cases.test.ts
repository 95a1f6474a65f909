/**
 * Polls of hostile answers on DynamoDB Local, over HTTP from the hostile platform
 * (test/support/hostile-platform.ts): times in the plausible future, an id listed twice in one answer,
 * ids and values of 300,000 characters that differ only past where they are clipped, an answer far
 * over its page whose old entries have no usable time, enum values longer than a kilobyte, and whole
 * answers that are not what the spec shows. Each case is a failure that must reach the alerts, once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { createPlatformClient } from "../../../lib/platform/client.js";
import { DynamoIngestStore } from "../../../lib/store/ingest-store.js";
import { pollSource, type PollDeps } from "../../../lib/poll/poll.js";
import type { SourceRef } from "../../../lib/model/source.js";
import type { LookoutEventDetail } from "../../../lib/model/event.js";
import { freshTable, TEST_RETENTION_MS } from "../../support/dynamodb.js";
import { startHostilePlatform, type HostilePlatform } from "../../support/hostile-platform.js";
import { delivery, deployment, logEntry, set, type Json } from "../../support/platform-items.js";

const MIN = 60_000;
let platform: HostilePlatform;
let deps: PollDeps;
let clock = Date.now();
const alerts: LookoutEventDetail[] = [];
const logs: string[] = [];
const ORG = randomUUID();

beforeAll(async () => {
  platform = await startHostilePlatform();
  const t = await freshTable("hostile-cases");
  const now = () => new Date(clock);
  const store = new DynamoIngestStore({ client: t.client, tableName: t.tableName, retentionMs: TEST_RETENTION_MS, now });
  deps = {
    client: createPlatformClient({ baseUrl: platform.url, token: platform.token, auth: "token", sleep: async () => {} }),
    store, now, backfillWindowMs: 15 * MIN,
    log: { info: (m) => void logs.push(`info ${m}`), warn: (m, x) => void logs.push(`warn ${m} ${JSON.stringify(x ?? {}).slice(0, 300)}`), error: (m, x) => void logs.push(`error ${m} ${JSON.stringify(x ?? {}).slice(0, 300)}`) },
    onAlert: (d, s) => void (s ? undefined : alerts.push(d)),
  };
});
afterAll(() => platform.close());

const src = (kind: SourceRef["kind"], id: string): SourceRef => ({ kind, organizationId: ORG, id });
const path = {
  app: (id: string) => `/application/${id}/deploymentHistoryV2`,
  webhook: (id: string) => `/organization/${ORG}/webhook/${id}/event`,
  cluster: (id: string) => `/organization/${ORG}/cluster/${id}/logs`,
};
const at = (t: number) => new Date(t).toISOString();
function dep(app: string, exec: string, status: string, createdAt: number): Json {
  const d = deployment(app, exec, status, 0);
  (d.auditing_data as Json).created_at = at(createdAt);
  (d.auditing_data as Json).updated_at = at(createdAt + MIN);
  return d;
}

describe("time in the plausible future", () => {
  it("a failed deployment dated 2 h ahead (plausible) does not swallow the later real recovery", async () => {
    const app = randomUUID();
    const s = src("deployment", app);
    platform.list(path.app(app), []);
    await pollSource({ source: s }, deps);
    clock += MIN;
    const future = dep(app, `fut-${randomUUID()}`, "DEPLOYMENT_ERROR", clock + 2 * 60 * MIN);
    platform.list(path.app(app), [future]);
    await pollSource({ source: s }, deps);
    const mine = () => alerts.filter((a) => a.service?.id === app && !a.amends).map((a) => `${a.transition}:${a.deployment?.execution_id.slice(0, 4)}`);
    clock += 5 * MIN;
    const ok = dep(app, `ok-${randomUUID()}`, "DEPLOYED", clock - 2 * MIN);
    platform.list(path.app(app), [ok, future]);
    await pollSource({ source: s }, deps);
    clock += 5 * MIN;
    const bad = dep(app, `bad-${randomUUID()}`, "BUILD_ERROR", clock - 2 * MIN);
    platform.list(path.app(app), [bad, ok, future]);
    await pollSource({ source: s }, deps);
    expect(mine().some((x) => x.startsWith("recovered:ok-"))).toBe(true);
    expect(mine().some((x) => x.startsWith("failed:bad-"))).toBe(true);
  });

  it("a cluster error dated 20 h ahead does not swallow a later, real incident", async () => {
    const cl = randomUUID();
    const s = { ...src("cluster", cl) };
    platform.list(path.cluster(cl), []);
    await pollSource({ source: s }, deps);
    clock += MIN;
    const fut = set(logEntry("CreateError", "error", 0, "future error"), "timestamp", at(clock + 20 * 60 * MIN));
    platform.list(path.cluster(cl), [fut]);
    await pollSource({ source: s }, deps);
    clock += 5 * MIN;
    const fixed = set(logEntry("Created", "info", 0, "created"), "timestamp", at(clock - MIN));
    platform.list(path.cluster(cl), [fut, fixed]);
    await pollSource({ source: s }, deps);
    clock += 60 * MIN;
    await pollSource({ source: s }, deps);
    clock += 5 * MIN;
    const again = set(logEntry("UpgradeError", "error", 0, "real error later"), "timestamp", at(clock - MIN));
    platform.list(path.cluster(cl), [fut, fixed, again]);
    await pollSource({ source: s }, deps);
    const mine = alerts.filter((a) => a.cluster?.id === cl).map((a) => `${a.transition}${a.incident?.repeat ? "(repeat)" : ""}:${a.error?.message ?? ""}`);
    expect(mine.map((m) => m.split(":")[0])).toEqual(["cluster_error", "cluster_recovered", "cluster_error"]);
  });
});

describe("duplicate ids in one page", () => {
  it("a delivery id listed twice, 200 copy first then 503: the failure is alerted, whichever order", async () => {
    const hook = randomUUID();
    const s = src("webhook", hook);
    platform.list(path.webhook(hook), []);
    await pollSource({ source: s }, deps);
    clock += MIN;
    const id = `dup-${randomUUID()}`;
    const okCopy = { ...delivery(id, 200, 0), created_at: at(clock - 30_000) };
    const badCopy = { ...delivery(id, 503, 0), created_at: at(clock - 30_000) };
    platform.list(path.webhook(hook), [okCopy, badCopy]);
    const r1 = await pollSource({ source: s }, deps);
    platform.list(path.webhook(hook), [badCopy, okCopy]);
    const r2 = await pollSource({ source: s }, deps);
    const mine = alerts.filter((a) => a.webhook?.id === hook);
    expect(mine.filter((a) => a.transition === "delivery_failed").length).toBe(1);
  });

  it("a failing delivery listed twice identically alerts once", async () => {
    const hook = randomUUID();
    const s = src("webhook", hook);
    platform.list(path.webhook(hook), []);
    await pollSource({ source: s }, deps);
    clock += MIN;
    const d = { ...delivery(`d-${randomUUID()}`, 503, 0), created_at: at(clock - 30_000) };
    platform.list(path.webhook(hook), [d, d, d]);
    const r = await pollSource({ source: s }, deps);
    expect(r.ok).toBe(true);
    expect(alerts.filter((a) => a.webhook?.id === hook).length).toBe(1);
  });
});

describe("malformed whole answers", () => {
  const BODIES: Array<[string, string]> = [
    ["empty body", ""], ["null", "null"], ["results null", '{"results": null}'], ["results object", '{"results": {"0": {}}}'],
    ["top-level array", "[]"], ["error body", '{"status": 500, "error": "Internal Server Error"}'], ["string", '"ok"'],
    ["BOM then JSON", '\uFEFF{"results": []}'], ["results as string", '{"results": "[]"}'], ["duplicate keys", '{"results": [], "results": null}'],
    ["truncated", '{"results": [{"id": "x"'], ["NaN", '{"results": NaN}'],
  ];
  it.each(["webhook", "cluster", "deployment"] as const)("%s: each fails the poll, moves no cursor, logs an error", async (kind) => {
    const id = randomUUID();
    const p = kind === "webhook" ? path.webhook(id) : kind === "cluster" ? path.cluster(id) : path.app(id);
    const good = kind === "webhook" ? [delivery(`d-${randomUUID()}`, 503, MIN)] : kind === "cluster" ? [logEntry("CreateError", "error", MIN, "x")] : [deployment(id, `e-${randomUUID()}`, "DEPLOYMENT_ERROR", MIN)];
    platform.list(p, []);
    await pollSource({ source: src(kind, id) }, deps);
    const before = JSON.stringify(await deps.store.getCursor(`${kind}:${ORG}/${id}`));
    const bad: string[] = [];
    for (const [name, text] of BODIES) {
      platform.answer(p, { kind: "raw", text });
      logs.length = 0;
      const r = await pollSource({ source: src(kind, id) }, deps);
      const after = JSON.stringify(await deps.store.getCursor(`${kind}:${ORG}/${id}`));
      if (r.ok) bad.push(`${name}: ok`);
      if (after !== before) bad.push(`${name}: cursor moved`);
      if (!logs.some((l) => l.startsWith("error"))) bad.push(`${name}: nothing logged`);
    }
    platform.list(p, good);
    const r = await pollSource({ source: src(kind, id) }, deps);
    expect(r.alerts, "the failure after the bad answers").toBe(1);
    expect(bad).toEqual([]);
  });
});

describe("huge ids that differ only at their end", () => {
  it("two failing deliveries with 300,000-character ids differing at the end: both kept", async () => {
    const hook = randomUUID();
    const s = src("webhook", hook);
    platform.list(path.webhook(hook), []);
    await pollSource({ source: s }, deps);
    clock += MIN;
    const stem = "D".repeat(300_000);
    const items = [1, 2].map((i) => ({ ...delivery(`${stem}-${i}-${randomUUID()}`, 503, 0), created_at: at(clock - 30_000 + i) }));
    platform.list(path.webhook(hook), items);
    const r = await pollSource({ source: s }, deps);
    const r2 = await pollSource({ source: s }, deps);
    expect(r.ok).toBe(true);
    expect(alerts.filter((a) => a.webhook?.id === hook && a.transition === "delivery_failed").length + (r.quarantined ?? 0)).toBe(2);
  });
  it("two failing executions with 300,000-character execution ids: both alerted", async () => {
    const app = randomUUID();
    const s = src("deployment", app);
    platform.list(path.app(app), []);
    await pollSource({ source: s }, deps);
    clock += MIN;
    const stem = "E".repeat(300_000);
    const items = [1, 2].map((i) => dep(app, `${stem}-${i}-${randomUUID()}`, i === 1 ? "BUILD_ERROR" : "DEPLOYMENT_ERROR", clock - 5 * MIN + i * 1000));
    platform.list(path.app(app), items);
    const r = await pollSource({ source: s }, deps);
    const r2 = await pollSource({ source: s }, deps);
    const mine = alerts.filter((a) => a.service?.id === app && !a.amends);
    expect(r.ok && r2.ok).toBe(true);
    expect(mine.length + (r.quarantined ?? 0)).toBe(2);
    expect(r2.alerts).toBe(0);
  });
});

describe("cluster entries that differ only past the clip point", () => {
  it("two error entries with 300,000-character messages differing at the end: both alerted", async () => {
    const cl = randomUUID();
    const s = src("cluster", cl);
    platform.list(path.cluster(cl), []);
    await pollSource({ source: s }, deps);
    clock += MIN;
    const stem = "M".repeat(300_000);
    const items = [1, 2].map((i) => set(set(set(logEntry("CreateError", "error", 0, "x"), "timestamp", at(clock - 30_000)), "error.user_log_message", `${stem}-${i}`), "message", null));
    const tags = [1, 2].map((i) => set(set(logEntry("CreateError", "error", 0, "x"), "timestamp", at(clock - 20_000)), "error.tag", `${"T".repeat(3000)}-${i}`));
    platform.list(path.cluster(cl), [...items, ...tags]);
    const r = await pollSource({ source: s }, deps);
    const r2 = await pollSource({ source: s }, deps);
    expect(r.newRecords + (r.quarantined ?? 0)).toBe(4);
  });
});

describe("a page far over pageSize whose old entries have no usable time", () => {
  it("a fresh failure beside 600 timeless old entries (answer over DEPLOYMENT_READ_MAX) is read", async () => {
    const app = randomUUID();
    const s = src("deployment", app);
    const old = Array.from({ length: 600 }, (_, i) => set(set(deployment(app, `old-${i}`, "DEPLOYED", 0), "auditing_data.created_at", "not a time"), "auditing_data.updated_at", "not a time"));
    // Known from earlier polls (their cursor as those polls saved it; storing 600 executions first is
    // slow): 500 of them, as first sight reads; the other 100 are read for the first time below.
    const known = old.slice(0, 500).map((o) => ({ service_id: app, execution_id: (o.identifier as Json).execution_id as string, status: "DEPLOYED" }));
    await deps.store.saveCursor({ source: `deployment:${ORG}/${app}`, version: 1, deployments: known, page_size: 100, first_polled_at: new Date(clock - MIN).toISOString() }, undefined);
    const fail = dep(app, `fresh-${randomUUID()}`, "DEPLOYMENT_ERROR", clock - 2 * MIN);
    platform.list(path.app(app), [fail, ...old]);
    const first = await pollSource({ source: s }, deps);
    expect(first.gapSuspected).toBe(true);
    clock += MIN;
    await pollSource({ source: s }, deps);
    clock += MIN;
    await pollSource({ source: s }, deps);
    // Once: and the old successes listed below it, without a time, never resolve it.
    expect(alerts.filter((a) => a.service?.id === app && !a.amends).map((a) => a.transition)).toEqual(["failed"]);
  });
});

describe("long enum values are classified before they are clipped", () => {
  it("a 3,000-character deployment status ending in _ERROR is a failure", async () => {
    const app = randomUUID();
    const s = src("deployment", app);
    platform.list(path.app(app), []);
    await pollSource({ source: s }, deps);
    clock += MIN;
    platform.list(path.app(app), [dep(app, `long-${randomUUID()}`, `QUANTUM${"_X".repeat(1500)}_ERROR`, clock - 2 * MIN)]);
    const r = await pollSource({ source: s }, deps);
    expect(alerts.filter((a) => a.service?.id === app && a.transition === "failed").length).toBe(1);
  });
  it("a warning entry whose 3,000-character step ends in Error is a cluster failure", async () => {
    const cl = randomUUID();
    const s = src("cluster", cl);
    platform.list(path.cluster(cl), []);
    await pollSource({ source: s }, deps);
    clock += MIN;
    platform.list(path.cluster(cl), [set(set(logEntry("x", "warning", 0, "long step"), "timestamp", at(clock - 30_000)), "step", `${"Quantum".repeat(430)}Error`)]);
    const r = await pollSource({ source: s }, deps);
    expect(alerts.filter((a) => a.cluster?.id === cl && a.transition === "cluster_error").length).toBe(1);
  });
});
