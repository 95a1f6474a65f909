/**
 * The audit query model and planner, pure: parsing with errors that name the filter, cursors bound to
 * their query, the choice of index, the filter of the rest, and the rows and index keys items carry.
 */
import { KINDS } from "../../../lib/model/event.js";
import { describe, expect, it } from "vitest";
import { detailTypeOf, severityOf } from "../../../lib/model/event.js";
import { AuditQueryError, TRANSITIONS, type AuditQuery } from "../../../lib/audit/model.js";
import { parseAuditQuery, parseInstant } from "../../../lib/audit/parse.js";
import { decodeCursor, encodeCursor } from "../../../lib/audit/cursor.js";
import { keyCondition, planQuery, whatPartitions } from "../../../lib/audit/query-plan.js";
import { alertRow, executionRow, recordRow } from "../../../lib/model/audit-row.js";
import { auditAttributes } from "../../../lib/model/audit-index.js";
import { INDEXES } from "../../../lib/store/table.js";
import { recordItem } from "../../../lib/model/items.js";
import { newAlertItem } from "../../../lib/alerts/outbox-item.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";

const now = new Date("2026-03-10T12:00:00Z");
const SVC = "3f2e1d0c-9b8a-4765-8432-10fedcba9876";
const ENV = "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b";
const PRJ = "0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f";
const parse = (raw: Record<string, string | undefined>) => parseAuditQuery(raw, now);
const problem = (raw: Record<string, string | undefined>) => {
  try {
    parse(raw);
  } catch (err) {
    expect(err).toBeInstanceOf(AuditQueryError);
    return (err as AuditQueryError).message;
  }
  throw new Error("parsed");
};

describe("parsing an audit query", () => {
  it("normalizes filters: ids and actors lower case, statuses upper case", () => {
    const q = parse({ service: SVC.toUpperCase(), actor: "Dana@Acme.io", status: "deployment_error", kind: "deployment", commit: "A94A8FE5", limit: "20" });
    expect(q.filters).toEqual({ service: SVC, actor: "dana@acme.io", status: "DEPLOYMENT_ERROR", kind: "deployment", commit: "a94a8fe5" });
    expect(q.limit).toBe(20);
    expect(q.range).toEqual({});
    expect(parse({}).limit).toBe(50);
  });

  it("resolves --since against now, and takes --from/--to as ISO dates or date-times", () => {
    expect(parse({ since: "7d" }).range).toEqual({ from: "2026-03-03T12:00:00.000Z" });
    expect(parse({ from: "2026-03-01", to: "2026-03-02T08:30:00+01:00" }).range).toEqual({ from: "2026-03-01T00:00:00.000Z", to: "2026-03-02T07:30:00.000Z" });
    expect(parseInstant("to", "2026-03-01T08:00:00.123456Z")).toBe("2026-03-01T08:00:00.123Z");
  });

  it("names the bad filter: unknown field, bad uuid, bad date, bad value", () => {
    expect(problem({ servce: SVC })).toMatch(/^servce: unknown filter \(filters: organization, project/);
    expect(problem({ service: "api" })).toMatch(/^service: "api" is not a uuid/);
    expect(problem({ organization: "5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a0" })).toMatch(/^organization: .* is not a uuid/);
    expect(problem({ from: "yesterday" })).toMatch(/^from: "yesterday" is not an ISO 8601 date/);
    expect(problem({ from: "2026-02-31" })).toMatch(/^from: "2026-02-31" is not an ISO 8601/);
    expect(problem({ to: "2026-03-01T08:00" })).toMatch(/^to: .* has no time zone/);
    expect(problem({ since: "7x" })).toMatch(/^since: "7x" is not a duration like 7d/);
    expect(problem({ since: "7d", from: "2026-03-01" })).toMatch(/^since: give since, or from and\/or to, not both/);
    expect(problem({ from: "2026-03-02", to: "2026-03-01" })).toMatch(/^from: .* is not before to/);
    expect(problem({ limit: "0" })).toMatch(/^limit: "0" is not a whole number from 1 to 1000/);
    expect(problem({ limit: "5.5" })).toMatch(/^limit:/);
    expect(problem({ kind: "deploy" })).toMatch(/^kind: "deploy" is not one of deployment, webhook_delivery, cluster_log, health/);
    expect(problem({ transition: "exploded" })).toMatch(/^transition: "exploded" is not one of failed, still_failing/);
    expect(problem({ severity: "fatal" })).toMatch(/^severity: "fatal" is not one of critical, error, warning, info/);
    expect(problem({ type: "row" })).toMatch(/^type: "row" is not one of execution, record, alert/);
    expect(problem({ commit: "abc" })).toMatch(/^commit: "abc" is not a commit id/);
    expect(problem({ actor: " " })).toMatch(/^actor: is empty/);
  });

  it("ignores absent flags (undefined) but not empty values", () => {
    expect(parse({ service: undefined, since: undefined }).filters).toEqual({});
    expect(problem({ service: "" })).toBe("service: is empty");
  });
});

describe("cursors", () => {
  const pos = { ix_at: "2026-03-01T00:00:00.000Z#ALERT#x", pk: "ALERT#x", sk: "ALERT" };

  it("continue the query that made them, with its first page's time range", () => {
    const first = parse({ service: SVC, since: "7d" });
    const cursor = encodeCursor(first.identity, pos, first.range);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    // A day later the same query continues where it stopped, in the same window.
    const next = parseAuditQuery({ service: SVC, since: "7d", cursor }, new Date(now.getTime() + 86_400_000));
    expect(next.after).toEqual(pos);
    expect(next.range).toEqual(first.range);
  });

  it("refuse another query's cursor and anything that is not a cursor", () => {
    const first = parse({ service: SVC });
    const cursor = encodeCursor(first.identity, pos, first.range);
    expect(problem({ environment: ENV, cursor })).toMatch(/^cursor: belongs to another query/);
    expect(problem({ service: SVC, since: "1d", cursor })).toMatch(/^cursor: belongs to another query/);
    expect(problem({ cursor: "not a cursor!" })).toMatch(/^cursor: is not a cursor Lookout gave/);
    expect(problem({ cursor: Buffer.from("{}").toString("base64url") })).toMatch(/^cursor: is not a cursor/);
    expect(() => decodeCursor("eyJ2IjoxfQ", first.identity)).toThrow(AuditQueryError);
  });
});

describe("the planner", () => {
  const plan = (raw: Record<string, string>) => planQuery(parse(raw));

  it("keys on the most selective filter and filters the rest", () => {
    const p = plan({ environment: ENV, service: SVC, status: "BUILD_ERROR", severity: "error" });
    expect(p).toMatchObject({ index: "audit-subject", keyAttr: "ix_subject", partitions: [`SVC#${SVC}`], by: "service" });
    // A service's partition holds batches of deliveries, which carry an environment and a status as filtered fields.
    expect(p.filter?.expression).toBe("(#ix_env = :f0 OR #row.#ix_env = :f0) AND (#ix_status = :f1 OR #row.#ix_status = :f1) AND #row.#severity = :f2");
    expect(p.filter?.values).toEqual({ ":f0": `ENV#${ENV}`, ":f1": "ST#BUILD_ERROR", ":f2": "error" });
    expect(plan({ actor: "Ann", service: SVC }).index).toBe("audit-who");
    expect(plan({ commit: "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3" })).toMatchObject({
      index: "audit-commit", partitions: ["CMT#a94a8fe"], filter: { expression: "begins_with(#row.#commit, :f0)" },
    });
    expect(plan({ commit: "a94a8fe" }).filter).toBeUndefined();
    // The organization has no index: every "what" partition, filtered (the projected key).
    expect(plan({ organization: "5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01" })).toMatchObject({
      index: "audit-what", by: "organization", filter: { expression: "#ix_org = :f0", values: { ":f0": "ORG#5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01" } },
    });
    expect(plan({ organization: "5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01" }).partitions).toEqual(plan({}).partitions);
    expect(plan({ status: "503", organization: "5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01" }).index).toBe("audit-status");
    // Alerts are few: alert-only partitions beat an environment, but not a service.
    expect(plan({ environment: ENV, transition: "failed" })).toMatchObject({ index: "audit-what", partitions: ["TR#failed"], filter: { expression: "#ix_env = :f0" } });
    expect(plan({ environment: ENV, severity: "error" }).index).toBe("audit-what");
    expect(plan({ environment: ENV, kind: "deployment" }).index).toBe("audit-env");
    expect(plan({ service: SVC, transition: "failed" }).index).toBe("audit-subject");
  });

  it("finds nothing, without reading, when two filters need one slot (an item has one subject)", () => {
    expect(plan({ service: SVC, cluster: "5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01" }).partitions).toEqual([]);
    expect(plan({ actor: "ann", webhook: "5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01" }).partitions).toEqual([]);
  });

  it("answers kind, severity, transition and entry type from the 'what' partitions", () => {
    expect(plan({ transition: "failed" })).toMatchObject({ index: "audit-what", partitions: ["TR#failed"] });
    expect(plan({ kind: "deployment" }).partitions).toEqual(["KIND#deployment", "TR#failed", "TR#still_failing", "TR#recovered", "TR#cancelled", "TR#changes_listed", "KIND#action:deployment"]);
    // A close has its incident's severity: a cluster's close is an error as its opening is.
    // Clicks on alerts (acknowledge, mute) are of any severity: a partition per kind, filtered by the row's.
    const actions = KINDS.map((k) => `KIND#action:${k}`);
    expect(plan({ severity: "error" }).partitions).toEqual(["TR#failed", "TR#still_failing", "TR#recovered", "TR#changes_listed", "TR#cluster_error", "TR#cluster_recovered", "TR#quarantined", "TR#dead_letters", ...actions]);
    // A deployment failure's severity follows its environment: its partitions hold several, the row says which.
    expect(plan({ severity: "critical" }).partitions).toEqual(["TR#failed", "TR#still_failing", "TR#recovered", "TR#changes_listed", "TR#token_rejected", "TR#polling_stalled", "TR#queue_backlog", ...actions]);
    expect(plan({ severity: "critical" }).filter?.expression).toBe("#row.#severity = :f0");
    expect(plan({ severity: "info", type: "alert" }).filter).toBeUndefined();
    expect(plan({ severity: "info" }).filter?.expression).toBe("#row.#severity = :f0");
    expect(plan({ type: "record" }).partitions).toEqual(["KIND#webhook_delivery", "KIND#cluster_log"]);
    expect(plan({ kind: "cluster_log", type: "alert" }).partitions).toEqual(["TR#cluster_error", "TR#cluster_recovered"]);
    expect(plan({ kind: "cluster_log", transition: "failed" }).partitions).toEqual([]);
    expect(plan({}).partitions).toHaveLength(3 + TRANSITIONS.length + 1 + KINDS.length); // + quarantined records and alerts, + clicks
    expect(plan({ type: "action" })).toMatchObject({ index: "audit-what", partitions: actions });
    expect(plan({ type: "action", kind: "cluster_log" }).partitions).toEqual(["KIND#action:cluster_log"]);
    expect(plan({ type: "quarantine" })).toMatchObject({ index: "audit-what", partitions: ["KIND#quarantine"] });
    expect(plan({ kind: "deployment" }).filter).toBeUndefined();
    // Not the key: the row says it.
    expect(plan({ service: SVC, kind: "deployment", type: "alert" }).filter?.expression).toBe("#row.#kind = :f0 AND #row.#type = :f1");
  });

  it("reads batches of records that raised nothing by their kind where the key is a dimension they are not found by", () => {
    const WH = "5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01";
    // A project: its partition, and the webhook deliveries' batches that carry its key among their filtered fields.
    expect(plan({ project: PRJ }).batches).toEqual({
      index: "audit-what", keyAttr: "ix_what", partitions: ["KIND#webhook_delivery"],
      filter: { expression: "begins_with(#item, :f0) AND #row.#ix_project = :f1", names: { "#item": "pk", "#row": "audit", "#ix_project": "ix_project" }, values: { ":f0": "RTN#", ":f1": `PRJ#${PRJ}` } },
    });
    // A status: both kinds' batches, deliveries' only for an HTTP status code; the other filters apply to them too.
    expect(plan({ status: "200", kind: "webhook_delivery", environment: ENV }).batches).toMatchObject({ partitions: ["KIND#webhook_delivery"] });
    expect(plan({ status: "204" }).batches?.partitions).toEqual(["KIND#webhook_delivery", "KIND#cluster_log"]);
    expect(plan({ status: "no_response" }).batches?.partitions).toEqual(["KIND#webhook_delivery", "KIND#cluster_log"]);
    expect(plan({ status: "info" }).batches?.partitions).toEqual(["KIND#cluster_log"]);
    expect(plan({ status: "DEPLOYMENT_ERROR" }).batches?.partitions).toEqual(["KIND#cluster_log"]);
    expect(plan({ status: "200", environment: ENV }).batches?.filter.expression).toBe("begins_with(#item, :f0) AND #row.#ix_env = :f1 AND #row.#ix_status = :f2");
    // Their source's partition holds them (a service's too): its other dimensions are the entry's key or the batch's filtered field.
    expect(plan({ webhook: WH, project: PRJ })).toMatchObject({ index: "audit-who", filter: { expression: "(#ix_project = :f0 OR #row.#ix_project = :f0)" } });
    expect(plan({ service: SVC, status: "200" })).toMatchObject({ index: "audit-subject", filter: { expression: "(#ix_status = :f0 OR #row.#ix_status = :f0)" } });
    expect(plan({ webhook: WH, project: PRJ }).batches).toBeUndefined();
    // No batch can match: alerts, executions, a source's or service's own partition, the "what" partitions themselves.
    const none: Array<Record<string, string>> = [
      { project: PRJ, type: "alert" }, { project: PRJ, kind: "deployment" }, { environment: ENV, transition: "failed" }, { cluster: WH },
      { service: SVC }, { kind: "cluster_log" }, { actor: "ann" },
    ];
    for (const raw of none) {
      expect(plan(raw).batches, JSON.stringify(raw)).toBeUndefined();
    }
    expect(plan({ project: PRJ, kind: "cluster_log" }).batches).toBeUndefined();
  });

  it("bounds the sort key by the time range and the previous page", () => {
    const q = parse({ from: "2026-03-01", to: "2026-03-08" });
    const p = planQuery(q);
    expect(keyCondition(p, "TR#failed")).toMatchObject({
      expression: "#pk = :pk AND #sk BETWEEN :lo AND :hi",
      values: { ":pk": "TR#failed", ":lo": "2026-03-01T00:00:00.000Z", ":hi": "2026-03-08T00:00:00.000Z" },
    });
    const after: AuditQuery["after"] = { ix_at: "2026-03-05T00:00:00.000Z#REC#x", pk: "REC#x", sk: "RECORD" };
    expect(planQuery({ ...q, after }).hi).toBe(after!.ix_at);
    expect(keyCondition(planQuery({ ...parse({}), after }), "p").expression).toBe("#pk = :pk AND #sk < :hi");
    expect(keyCondition(planQuery(parse({ since: "1d" })), "p").expression).toBe("#pk = :pk AND #sk >= :lo");
    expect(planQuery({ ...parse({ from: "2026-03-06" }), after }).partitions).toEqual([]);
  });

  it("knows every transition Lookout raises, with its kind and severity", () => {
    for (const { transition, kind } of TRANSITIONS) {
      expect(() => detailTypeOf(kind, transition)).not.toThrow();
      expect(whatPartitions({ severity: severityOf(kind, transition) })).toContain(`TR#${transition}`);
    }
  });
});

describe("audit rows and index keys", () => {
  const failed = EXAMPLE_DETAILS["Deployment Failed"];

  it("an alert has a key in every slot it has a dimension for: up to seven indexes and the organization", () => {
    const item = newAlertItem(failed, failed.observed_at, 1_900_000_000);
    expect(item.row).toMatchObject({
      type: "alert", id: failed.id, kind: "deployment", transition: "failed", severity: "critical", status: "BUILD_ERROR",
      at: "2026-03-02T14:07:31.000Z", actor: "dana@acme.io", commit: failed.deployment!.commit!.id, state: "pending",
    });
    const keys = Object.keys(item).filter((k) => k.startsWith("ix_") && k !== "ix_at").sort();
    expect(keys).toEqual(["ix_org", ...INDEXES.map((i) => i.pk)].sort());
    expect(INDEXES.map((i) => i.pk)).not.toContain("ix_org");
    expect(item.ix_at).toBe(`2026-03-02T14:07:31.000Z#ALERT#${failed.id}`);
    expect(item).toMatchObject({ ix_subject: `SVC#${failed.service!.id}`, ix_who: "ACT#dana@acme.io", ix_commit: "CMT#a94a8fe", ix_what: "TR#failed", ix_status: "ST#BUILD_ERROR" });
    const quiet = newAlertItem(failed, failed.observed_at, 1, { reason: "backfill", detail: "old" });
    expect(item.audit).toEqual({ type: "alert", kind: "deployment", severity: "critical", commit: failed.deployment!.commit!.id, status: "BUILD_ERROR" });
    expect(quiet.row).toMatchObject({ state: "suppressed", suppression: { reason: "backfill", detail: "old" } });
  });

  it("a cluster log entry, the bulk of what is stored, is in four", () => {
    const row = recordRow({ record_kind: "cluster_log", id: "h1", organization_id: "O", cluster_id: "C", type: "info", step: "Upgrade", failed: false } as never, "2026-03-01T00:00:00Z", "2026-03-01T00:01:00Z");
    const attrs = auditAttributes(row, "REC#cluster_log#h1");
    expect(Object.keys(attrs).filter((k) => k.startsWith("ix_") && k !== "ix_at").sort()).toEqual(["ix_org", "ix_status", "ix_subject", "ix_what"]);
    expect(attrs).toMatchObject({ ix_subject: "CLU#c", ix_status: "ST#INFO", ix_what: "KIND#cluster_log" });
  });

  it("a webhook delivery is found by its webhook and by the service its payload names", () => {
    const item = recordItem({
      record_kind: "webhook_delivery", id: "d1", organization_id: "O", webhook_id: "W", status_code: null, failed: true,
      services: [{ id: "S", name: "api", type: "APPLICATION", project: { id: "P" }, environment: { id: "E", name: "prod" } }],
    } as never, undefined, "2026-03-01T00:01:00Z");
    expect(item).toMatchObject({ ix_who: "WH#w", ix_subject: "SVC#s", ix_project: "PRJ#p", ix_env: "ENV#e", ix_status: "ST#NO_RESPONSE", ix_what: "KIND#webhook_delivery" });
    expect(item.row).toMatchObject({ type: "record", id: "d1", at: "2026-03-01T00:01:00.000Z", environment: { id: "E", name: "prod" } });
  });

  it("an execution keeps its place in time as its status changes", () => {
    const obs = { record_kind: "deployment" as const, organization_id: "O", application_id: "S", service_id: "S", execution_id: "X", execution_id_derived: false, status: "BUILDING", created_at: "2026-03-01T10:00:00Z", triggered_by: "Ann" };
    const a = executionRow(obs, { name: "api", environment: { id: "E" } }, "2026-03-01T10:01:00Z");
    const b = executionRow({ ...obs, status: "DEPLOYED", updated_at: "2026-03-01T10:05:00Z" }, undefined, "2026-03-01T10:01:00Z");
    expect(a).toMatchObject({ type: "execution", id: "S:X", at: "2026-03-01T10:00:00.000Z", service: { id: "S", name: "api" }, actor: "Ann" });
    expect(b.at).toBe(a.at);
    expect(auditAttributes(b, "EXEC#S#X")).toMatchObject({ ix_status: "ST#DEPLOYED", ix_who: "ACT#ann", ix_what: "KIND#deployment" });
  });
});
