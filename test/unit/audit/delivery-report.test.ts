/**
 * The delivery report's pure computation (lib/audit/delivery-report.ts), its parameters (lib/audit/delivery-report-read.ts)
 * and its formats: figures computed by hand over small sets of rows, and the edges — no deployments, no
 * commit time, an incident still open, a period boundary.
 */
import { describe, expect, it } from "vitest";
import type { AuditRow } from "../../../lib/model/audit-row.js";
import { deliveryReport, deploymentOutcome, figuresOf, median, percentile, periodDays } from "../../../lib/audit/delivery-report.js";
import { parseReportQuery, slices } from "../../../lib/audit/delivery-report-read.js";
import { humanSeconds, REPORT_CSV_COLUMNS, reportCsv, reportLines } from "../../../lib/audit/delivery-report-format.js";
import { AuditQueryError } from "../../../lib/audit/model.js";

const SVC = { id: "3f2e1d0c-9b8a-4765-8432-10fedcba9876", name: "api" };
const SVC2 = { id: "4f2e1d0c-9b8a-4765-8432-10fedcba9876", name: "billing" };
const ENV = { id: "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b", name: "production" };
const PERIOD = { from: "2026-03-01T00:00:00.000Z", to: "2026-03-08T00:00:00.000Z" }; // 7 days

function execution(n: number, at: string, status: string, over: Partial<AuditRow> = {}): AuditRow {
  return {
    type: "execution", id: `${SVC.id}:exec-${n}`, kind: "deployment", at, observed_at: at, status,
    organization: "org", environment: ENV, service: SVC, commit: `${n}`.padStart(40, "a"), summary: "", ...over,
  };
}

function alert(id: string, at: string, transition: "failed" | "still_failing" | "recovered", over: Partial<AuditRow> = {}): AuditRow {
  return {
    type: "alert", id, kind: "deployment", at, observed_at: at, transition, organization: "org", environment: ENV, service: SVC,
    summary: "", incident_id: transition === "failed" ? id : undefined, ...over,
  };
}

describe("the figures, computed by hand", () => {
  // Four deployments of api in a week:
  //   exec-1 DEPLOYED, commit 10:00, deployed 11:00 → lead 3600 s
  //   exec-2 DEPLOYMENT_ERROR (opens incident A at 2026-03-03T12:05)
  //   exec-3 DEPLOYED, commit 2026-03-03T12:00, deployed 14:05 → lead 7500 s; closes A at 14:05 → restore 7200 s
  //   exec-4 DEPLOYED, no commit time → lead time not known
  //   exec-5 CANCELED → not a deployment
  const executions = [
    execution(1, "2026-03-02T10:30:00.000Z", "DEPLOYED", { commit_at: "2026-03-02T10:00:00.000Z", updated_at: "2026-03-02T11:00:00.000Z" }),
    execution(2, "2026-03-03T12:02:00.000Z", "DEPLOYMENT_ERROR", { commit_at: "2026-03-03T11:00:00.000Z", updated_at: "2026-03-03T12:05:00.000Z" }),
    execution(3, "2026-03-03T14:00:00.000Z", "DEPLOYED", { commit_at: "2026-03-03T12:00:00.000Z", updated_at: "2026-03-03T14:05:00.000Z" }),
    execution(4, "2026-03-05T09:00:00.000Z", "DEPLOYED", { updated_at: "2026-03-05T09:02:00.000Z" }),
    execution(5, "2026-03-06T09:00:00.000Z", "CANCELED"),
  ];
  const alerts = [
    alert("A", "2026-03-03T12:05:00.000Z", "failed", { source: `${SVC.id}:exec-2` }),
    alert("R", "2026-03-03T14:05:00.000Z", "recovered", { incident_id: "A", incident_opened_at: "2026-03-03T12:05:00.000Z" }),
  ];

  it("deployment frequency: 3 successful deployments in 7 days", () => {
    const f = figuresOf(executions, alerts, PERIOD);
    expect(f.deployment_frequency).toEqual({
      deployments: 3, per_day: 0.429, per_week: 3,
      executions: [`${SVC.id}:exec-1`, `${SVC.id}:exec-3`, `${SVC.id}:exec-4`],
    });
  });

  it("lead time: the median of 3600 and 7500 is 5550; p90 by nearest rank is 7500; exec-4 has no commit time", () => {
    const f = figuresOf(executions, alerts, PERIOD).lead_time;
    expect(f.deployments).toBe(2);
    expect(f.median_sec).toBe(5550);
    expect(f.p90_sec).toBe(7500);
    expect(f.executions.map((e) => [e.id, e.lead_time_sec])).toEqual([[`${SVC.id}:exec-1`, 3600], [`${SVC.id}:exec-3`, 7500]]);
    expect(f.unknown).toEqual([{ id: `${SVC.id}:exec-4`, reason: expect.stringContaining("no commit time recorded") }]);
  });

  it("change failure rate: 1 failed of 4 deployments (the cancelled one is no deployment), with its incident", () => {
    expect(figuresOf(executions, alerts, PERIOD).change_failure_rate).toEqual({
      rate: 0.25, failed: 1, deployments: 4, failed_executions: [`${SVC.id}:exec-2`], incidents: ["A"],
    });
  });

  it("time to restore: incident A, 12:05 to 14:05, 7200 s", () => {
    const f = figuresOf(executions, alerts, PERIOD).time_to_restore;
    expect(f).toEqual({
      restored: 1, median_sec: 7200, p90_sec: 7200, unknown: [], open: [],
      incidents: [{ id: "A", opened_at: "2026-03-03T12:05:00.000Z", restored_at: "2026-03-03T14:05:00.000Z", restore_sec: 7200, closed_by: "R" }],
    });
  });

  it("counts each day's deployments for the charts", () => {
    const f = figuresOf(executions, alerts, PERIOD);
    expect(f.daily).toHaveLength(7);
    expect(f.daily.filter((d) => d.deployed || d.failed)).toEqual([
      { date: "2026-03-02", deployed: 1, failed: 0 }, { date: "2026-03-03", deployed: 1, failed: 1 }, { date: "2026-03-05", deployed: 1, failed: 0 },
    ]);
  });
});

describe("edges", () => {
  it("no deployments: counts of zero, no rate, no median — never a division by zero", () => {
    const f = figuresOf([], [], PERIOD);
    expect(f.deployment_frequency).toEqual({ deployments: 0, per_day: 0, per_week: 0, executions: [] });
    expect(f.lead_time).toMatchObject({ deployments: 0, median_sec: null, p90_sec: null });
    expect(f.change_failure_rate.rate).toBeNull();
    expect(f.time_to_restore).toMatchObject({ restored: 0, median_sec: null, p90_sec: null });
    const report = deliveryReport({ executions: [], alerts: [] }, PERIOD);
    expect(report.services).toEqual([]);
    expect(reportLines(report)).toContain("no deployment or deployment incident in the period");
  });

  it("no commit time: said why, never guessed; a commit time after the deploy is not a lead time either", () => {
    const rows = [
      execution(1, "2026-03-02T10:00:00.000Z", "DEPLOYED", { commit: undefined, updated_at: "2026-03-02T10:02:00.000Z" }),
      execution(2, "2026-03-02T11:00:00.000Z", "DEPLOYED", { updated_at: "2026-03-02T11:02:00.000Z" }),
      execution(3, "2026-03-02T12:00:00.000Z", "DEPLOYED", { commit_at: "2026-03-02T12:00:00.000Z" }),
      execution(4, "2026-03-02T13:00:00.000Z", "DEPLOYED", { commit_at: "2026-03-02T14:00:00.000Z", updated_at: "2026-03-02T13:02:00.000Z" }),
    ];
    const lt = figuresOf(rows, [], PERIOD).lead_time;
    expect(lt.deployments).toBe(0);
    expect(lt.median_sec).toBeNull();
    expect(lt.unknown.map((u) => u.reason)).toEqual([
      expect.stringContaining("no commit"), expect.stringContaining("no commit time recorded"),
      expect.stringContaining("no deploy time"), expect.stringContaining("after the deploy time"),
    ]);
  });

  it("an incident still open: listed as open since its opening, and in no median", () => {
    const alerts = [alert("B", "2026-03-06T08:00:00.000Z", "failed"), alert("C", "2026-03-01T08:00:00.000Z", "failed"),
      alert("RC", "2026-03-01T09:00:00.000Z", "recovered", { incident_id: "C", incident_opened_at: "2026-03-01T08:00:00.000Z" })];
    const tr = figuresOf([], alerts, PERIOD).time_to_restore;
    expect(tr.open).toEqual([{ id: "B", opened_at: "2026-03-06T08:00:00.000Z" }]);
    expect(tr.incidents.map((i) => [i.id, i.restore_sec])).toEqual([["C", 3600]]);
    expect(tr.median_sec).toBe(3600);
  });

  it("a period boundary: from is inclusive, to exclusive; an incident opened before the period and closed in it counts whole", () => {
    const rows = [
      execution(1, "2026-02-28T23:59:59.999Z", "DEPLOYED"),
      execution(2, "2026-03-01T00:00:00.000Z", "DEPLOYED"),
      execution(3, "2026-03-07T23:59:59.999Z", "BUILD_ERROR"),
      execution(4, "2026-03-08T00:00:00.000Z", "DEPLOYED"),
    ];
    const alerts = [
      // Opened before the period (its opening alert is not read), closed in it: from its opening.
      alert("R1", "2026-03-01T01:00:00.000Z", "recovered", { incident_id: "OLD", incident_opened_at: "2026-02-28T22:00:00.000Z" }),
      // Closed after the period's end (read: a failure's alert can come late): the incident is open at the end.
      alert("D", "2026-03-07T23:59:59.999Z", "failed", { source: `${SVC.id}:exec-3` }),
      alert("RD", "2026-03-08T00:10:00.000Z", "recovered", { incident_id: "D", incident_opened_at: "2026-03-07T23:59:59.999Z" }),
    ];
    const f = figuresOf(rows, alerts, PERIOD);
    expect(f.deployment_frequency.executions).toEqual([`${SVC.id}:exec-2`]);
    expect(f.change_failure_rate).toMatchObject({ failed: 1, deployments: 2, rate: 0.5, incidents: ["D"] });
    expect(f.time_to_restore.incidents.map((i) => [i.id, i.restore_sec])).toEqual([["OLD", 3 * 3600]]);
    expect(f.time_to_restore.open).toEqual([{ id: "D", opened_at: "2026-03-07T23:59:59.999Z" }]);
  });

  it("a close without its opening recorded (written before the report existed) is listed as not known", () => {
    const tr = figuresOf([], [alert("R", "2026-03-02T00:00:00.000Z", "recovered")], PERIOD).time_to_restore;
    expect(tr.restored).toBe(0);
    expect(tr.unknown).toEqual([{ id: "R", reason: expect.stringContaining("its opening is not recorded") }]);
  });

  it("a still_failing deployment joins its incident: one incident behind two failures", () => {
    const rows = [execution(1, "2026-03-02T10:00:00.000Z", "BUILD_ERROR"), execution(2, "2026-03-02T11:00:00.000Z", "DEPLOYMENT_ERROR")];
    const alerts = [alert("F", "2026-03-02T10:02:00.000Z", "failed", { source: rows[0]!.id }),
      alert("S", "2026-03-02T11:02:00.000Z", "still_failing", { source: rows[1]!.id, incident_id: "F" })];
    expect(figuresOf(rows, alerts, PERIOD).change_failure_rate).toMatchObject({ failed: 2, deployments: 2, rate: 1, incidents: ["F"] });
  });
});

describe("per service", () => {
  it("a block per service, sorted by environment and name, and all of them together", () => {
    const rows = [
      execution(1, "2026-03-02T10:00:00.000Z", "DEPLOYED", { service: SVC2, id: `${SVC2.id}:x` }),
      execution(2, "2026-03-02T10:00:00.000Z", "DEPLOYMENT_ERROR"),
    ];
    const r = deliveryReport({ executions: rows, alerts: [] }, PERIOD);
    expect(r.period).toEqual({ ...PERIOD, days: 7 });
    expect(r.services.map((s) => [s.service.name, s.environment?.name, s.change_failure_rate.rate])).toEqual([["api", "production", 1], ["billing", "production", 0]]);
    expect(r.total.change_failure_rate).toMatchObject({ failed: 1, deployments: 2, rate: 0.5 });
  });
});

describe("helpers", () => {
  it("median, nearest-rank percentile, days, outcomes, durations", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90)).toBe(9);
    expect(percentile([5], 90)).toBe(5);
    expect(periodDays({ from: "2026-03-01T12:00:00.000Z", to: "2026-03-03T00:00:00.000Z" })).toEqual(["2026-03-01", "2026-03-02"]);
    expect(["DEPLOYED", "BUILD_ERROR", "RESTARTED", "CANCELED", "DEPLOYING"].map(deploymentOutcome)).toEqual(["deployed", "failed", "other", "other", "other"]);
    expect([45, 2700, 7800, 93_600, null].map(humanSeconds)).toEqual(["45s", "45m", "2h 10m", "1d 2h", "—"]);
  });
});

describe("the parameters", () => {
  const now = new Date("2026-03-31T12:00:00.000Z");
  it("default to the last 30 days; since, or from and to; to is cut to now", () => {
    expect(parseReportQuery({}, now).period).toEqual({ from: "2026-03-01T12:00:00.000Z", to: "2026-03-31T12:00:00.000Z" });
    expect(parseReportQuery({ since: "7d" }, now).period.from).toBe("2026-03-24T12:00:00.000Z");
    expect(parseReportQuery({ from: "2026-03-01", to: "2026-03-08" }, now).period).toEqual(PERIOD);
    expect(parseReportQuery({ from: "2026-03-01", to: "2027-01-01" }, now).period.to).toBe(now.toISOString());
    expect(parseReportQuery({ service: SVC.id.toUpperCase(), environment: ENV.id }, now)).toMatchObject({ service: SVC.id, environment: ENV.id });
  });

  it("refuses bad ones with the audit's messages, naming the parameter", () => {
    const problem = (raw: Record<string, string>) => {
      try {
        parseReportQuery(raw, now);
      } catch (e) {
        return e instanceof AuditQueryError ? e.message : String(e);
      }
      return "accepted";
    };
    expect(problem({ servce: "x" })).toMatch(/^servce: unknown parameter \(report: service, environment; time: since, or from and to\)/);
    expect(problem({ service: "api" })).toMatch(/^service: "api" is not a uuid/);
    expect(problem({ since: "soon" })).toMatch(/^since: "soon" is not a duration/);
    expect(problem({ since: "7d", from: "2026-03-01" })).toMatch(/^since: give since, or from and\/or to, not both/);
    expect(problem({ from: "2026-04-02" })).toMatch(/^from: .* is not in the past/);
    expect(problem({ type: "alert" })).toMatch(/^type: unknown parameter/);
  });
});

describe("formats", () => {
  const rows = [execution(1, "2026-03-02T10:30:00.000Z", "DEPLOYED", { commit_at: "2026-03-02T10:00:00.000Z", updated_at: "2026-03-02T11:00:00.000Z" })];
  const report = deliveryReport({ executions: rows, alerts: [] }, PERIOD);

  it("CSV: a header, a line per service and a last line for all, ids space-separated", () => {
    const lines = reportCsv(report);
    expect(lines[0]).toBe(`${REPORT_CSV_COLUMNS.join(",")}\r\n`);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain(`${ENV.id},production,${SVC.id},api,`);
    expect(lines[2]!.startsWith(",,,all,")).toBe(true);
  });

  it("text: the four figures of each service", () => {
    const text = reportLines(report).join("\n");
    expect(text).toContain("api (production)  3f2e1d0c-9b8a-4765-8432-10fedcba9876");
    expect(text).toContain("deployment frequency  1 in 7 days: 0.143 a day, 1 a week");
    expect(text).toContain("lead time             median 1h, p90 1h over 1 deployment");
    expect(text).toContain("change failure rate   0 % (0 of 1)");
    expect(text).toContain("time to restore       no incident closed");
  });
});

describe("reading in slices", () => {
  it("cuts a period into consecutive, disjoint slices of a week at most", () => {
    expect(slices("2026-03-01T00:00:00.000Z", "2026-03-16T12:00:00.000Z")).toEqual([
      { from: "2026-03-01T00:00:00.000Z", to: "2026-03-08T00:00:00.000Z" },
      { from: "2026-03-08T00:00:00.000Z", to: "2026-03-15T00:00:00.000Z" },
      { from: "2026-03-15T00:00:00.000Z", to: "2026-03-16T12:00:00.000Z" },
    ]);
    expect(slices(PERIOD.from, PERIOD.to)).toEqual([PERIOD]);
  });
});

describe("the services listed", () => {
  it("are those with a deployment or an incident in the period, not one with only a late alert", () => {
    const late = alert("L", "2026-03-08T00:05:00.000Z", "recovered", { service: SVC2, incident_id: "X", incident_opened_at: "2026-03-07T23:00:00.000Z" });
    const r = deliveryReport({ executions: [execution(1, "2026-03-02T10:00:00.000Z", "DEPLOYED")], alerts: [late] }, PERIOD);
    expect(r.services.map((s) => s.service.id)).toEqual([SVC.id]);
  });
});
