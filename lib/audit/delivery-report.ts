/**
 * Delivery figures from the audit trail (the four DORA keys), per service over a period: deployment
 * frequency, lead time for changes, change failure rate and time to restore. Pure: the rows come from
 * the audit reader (lib/audit/delivery-report-read.ts). docs/report.md says what each figure means exactly, where
 * its inputs come from, and its limits. Every figure lists the executions or incidents behind it.
 */
import type { AuditRow, Ref } from "../model/audit-row.js";
import { classifyStatus } from "../poll/deployment-status.js";

/** What the report reads: deployment executions and deployment alerts (failed, still failing, recovered). */
export interface ReportInput {
  executions: readonly AuditRow[];
  alerts: readonly AuditRow[];
}

/** ISO instants, `from` inclusive, `to` exclusive. */
export interface ReportPeriod {
  from: string;
  to: string;
}

/** A successful deployment and, when both times are known, its lead time. */
export interface LeadTimeEntry {
  id: string;
  commit_at: string;
  deployed_at: string;
  lead_time_sec: number;
}

export interface Unknown {
  id: string;
  reason: string;
}

export interface RestoreEntry {
  /** The incident: the id of the alert that opened it. */
  id: string;
  opened_at: string;
  restored_at: string;
  restore_sec: number;
  /** The `recovered` alert that closed it. */
  closed_by: string;
}

export interface Figures {
  deployment_frequency: {
    /** Successful deployments (executions now DEPLOYED) started in the period. */
    deployments: number;
    per_day: number;
    per_week: number;
    executions: string[];
  };
  lead_time: {
    /** Successful deployments whose commit time and deploy time are both known. */
    deployments: number;
    median_sec: number | null;
    p90_sec: number | null;
    executions: LeadTimeEntry[];
    /** Successful deployments left out, and why (no commit time recorded, no deploy time…). */
    unknown: Unknown[];
  };
  change_failure_rate: {
    /** failed / deployments; null without deployments. */
    rate: number | null;
    failed: number;
    /** Successful and failed deployments. */
    deployments: number;
    failed_executions: string[];
    /** The incidents the failed deployments opened or joined. */
    incidents: string[];
  };
  time_to_restore: {
    /** Deployment incidents closed in the period. */
    restored: number;
    median_sec: number | null;
    p90_sec: number | null;
    incidents: RestoreEntry[];
    /** Closes whose incident's opening is not known. */
    unknown: Unknown[];
    /** Incidents opened in the period and not closed in it. */
    open: Array<{ id: string; opened_at: string }>;
  };
  /** Per UTC day of the period: successful and failed deployments started that day (for charts). */
  daily: Array<{ date: string; deployed: number; failed: number }>;
}

export interface ServiceFigures extends Figures {
  service: Ref;
  environment?: Ref;
  project?: Ref;
}

export interface DeliveryReport {
  period: ReportPeriod & { days: number };
  /** One entry per service, by environment then service name. */
  services: ServiceFigures[];
  /** All the services above together. */
  total: Figures;
}

const DAY_MS = 86_400_000;

/** A deployment is a change shipped: DEPLOYED succeeded, any `_ERROR` failed; the rest is no change. */
export type DeploymentOutcome = "deployed" | "failed" | "other";

export function deploymentOutcome(status: string | undefined): DeploymentOutcome {
  if ((status ?? "").toUpperCase() === "DEPLOYED") return "deployed";
  return classifyStatus(status) === "failure" ? "failed" : "other";
}

const ms = (iso: string) => Date.parse(iso);
const seconds = (fromIso: string, toIso: string) => Math.round((ms(toIso) - ms(fromIso)) / 1000);

/** The median: the middle value, or the mean of the two middle values of an even count. */
export function median(values: readonly number[]): number | null {
  if (!values.length) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** The p-th percentile by nearest rank: the smallest value with at least p % of the values at or below it. */
export function percentile(values: readonly number[], p: number): number | null {
  if (!values.length) return null;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)]!;
}

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;

/** The UTC days the period touches, oldest first. */
export function periodDays(period: ReportPeriod): string[] {
  const out: string[] = [];
  const end = ms(period.to);
  for (let t = Math.floor(ms(period.from) / DAY_MS) * DAY_MS; t < end; t += DAY_MS) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

const inPeriod = (at: string, p: ReportPeriod) => at >= p.from && at < p.to;

function leadTimeOf(row: AuditRow): LeadTimeEntry | Unknown {
  if (!row.commit) return { id: row.id, reason: "no commit: the platform gave none for this deployment" };
  if (!row.commit_at) return { id: row.id, reason: "no commit time recorded (the platform gave none, or it was recorded before Lookout kept it)" };
  if (!row.updated_at) return { id: row.id, reason: "no deploy time: the platform gave no updated_at" };
  const lead = seconds(row.commit_at, row.updated_at);
  if (lead < 0) return { id: row.id, reason: `the commit time (${row.commit_at}) is after the deploy time (${row.updated_at})` };
  return { id: row.id, commit_at: row.commit_at, deployed_at: row.updated_at, lead_time_sec: lead };
}

/** The figures of one set of executions and the alerts on the same services. */
export function figuresOf(executions: readonly AuditRow[], alerts: readonly AuditRow[], period: ReportPeriod): Figures {
  const days = (ms(period.to) - ms(period.from)) / DAY_MS;
  const mine = executions.filter((e) => inPeriod(e.at, period));
  const deployed = mine.filter((e) => deploymentOutcome(e.status) === "deployed").sort(byAt);
  const failed = mine.filter((e) => deploymentOutcome(e.status) === "failed").sort(byAt);

  const leads = deployed.map(leadTimeOf);
  const known = leads.filter((l): l is LeadTimeEntry => "lead_time_sec" in l);
  const leadSecs = known.map((l) => l.lead_time_sec);

  // Each failed execution's incident, in the order the failures started.
  const raisedBy = new Map(alerts.filter((a) => a.source && (a.transition === "failed" || a.transition === "still_failing")).map((a) => [a.source!, a]));
  const incidents = unique(failed.flatMap((e) => {
    const a = raisedBy.get(e.id);
    return a ? [a.incident_id ?? a.id] : [];
  }));

  const closes = alerts.filter((a) => a.transition === "recovered" && inPeriod(a.at, period)).sort(byAt);
  const openers = new Map(alerts.filter((a) => a.transition === "failed").map((a) => [a.id, a]));
  const restores: RestoreEntry[] = [];
  const unknown: Unknown[] = [];
  for (const c of closes) {
    const opened = c.incident_opened_at ?? (c.incident_id ? openers.get(c.incident_id)?.at : undefined);
    if (!c.incident_id || !opened) unknown.push({ id: c.incident_id ?? c.id, reason: `its opening is not recorded on the close (${c.id}) nor in the period` });
    else restores.push({ id: c.incident_id, opened_at: opened, restored_at: c.at, restore_sec: seconds(opened, c.at), closed_by: c.id });
  }
  const closed = new Set(closes.map((c) => c.incident_id));
  const open = [...openers.values()]
    .filter((o) => inPeriod(o.at, period) && !closed.has(o.id))
    .sort(byAt)
    .map((o) => ({ id: o.id, opened_at: o.at }));
  const restoreSecs = restores.map((r) => r.restore_sec);

  const daily = periodDays(period).map((date) => ({
    date,
    deployed: deployed.filter((e) => e.at.startsWith(date)).length,
    failed: failed.filter((e) => e.at.startsWith(date)).length,
  }));

  const total = deployed.length + failed.length;
  return {
    deployment_frequency: {
      deployments: deployed.length,
      per_day: round(deployed.length / days),
      per_week: round((deployed.length / days) * 7),
      executions: deployed.map((e) => e.id),
    },
    lead_time: {
      deployments: known.length,
      median_sec: median(leadSecs),
      p90_sec: percentile(leadSecs, 90),
      executions: known,
      unknown: leads.filter((l): l is Unknown => "reason" in l),
    },
    change_failure_rate: {
      rate: total ? round(failed.length / total, 4) : null,
      failed: failed.length,
      deployments: total,
      failed_executions: failed.map((e) => e.id),
      incidents,
    },
    time_to_restore: {
      restored: restores.length,
      median_sec: median(restoreSecs),
      p90_sec: percentile(restoreSecs, 90),
      incidents: restores,
      unknown,
      open,
    },
    daily,
  };
}

const byAt = (a: AuditRow, b: AuditRow) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : 1);
const unique = (xs: string[]) => [...new Set(xs)];
const label = (r: Ref | undefined) => (r ? (r.name ?? r.id) : "");

/** The report: one set of figures per service the rows name, and all of them together. */
export function deliveryReport(input: ReportInput, period: ReportPeriod): DeliveryReport {
  const services = new Map<string, { service: Ref; environment?: Ref; project?: Ref }>();
  // The services with something in the period (alerts are read a day past it: a late one alone is not).
  for (const r of [...input.executions, ...input.alerts]) {
    if (!r.service || !inPeriod(r.at, period)) continue;
    const known = services.get(r.service.id);
    // The newest name wins; an environment or project learned on any row fills a gap.
    services.set(r.service.id, {
      service: r.service.name || !known ? r.service : known.service,
      environment: r.environment ?? known?.environment,
      project: r.project ?? known?.project,
    });
  }
  const of = (rows: readonly AuditRow[], id: string) => rows.filter((r) => r.service?.id === id);
  const entries = [...services.entries()]
    .map(([id, refs]): ServiceFigures => ({ ...refs, ...figuresOf(of(input.executions, id), of(input.alerts, id), period) }))
    .sort((a, b) => label(a.environment).localeCompare(label(b.environment)) || label(a.service).localeCompare(label(b.service)) || a.service.id.localeCompare(b.service.id));
  return {
    period: { ...period, days: round((ms(period.to) - ms(period.from)) / DAY_MS) },
    services: entries,
    total: figuresOf(input.executions, input.alerts, period),
  };
}
