/**
 * The delivery report for people (text) and scripts (CSV; JSON is the report as it is). Pure.
 */
import { csvLine } from "./csv.js";
import type { Ref } from "../model/audit-row.js";
import type { DeliveryReport, Figures, ServiceFigures } from "./delivery-report.js";

/** A duration in seconds for people: `2h 10m`, `45m`, `3d 4h`, `30s`. */
export function humanSeconds(sec: number | null): string {
  if (sec === null) return "—";
  const s = Math.round(sec);
  const parts: string[] = [];
  const d = Math.floor(s / 86_400), h = Math.floor((s % 86_400) / 3_600), m = Math.floor((s % 3_600) / 60), r = s % 60;
  if (d) parts.push(`${d}d`, ...(h ? [`${h}h`] : []));
  else if (h) parts.push(`${h}h`, ...(m ? [`${m}m`] : []));
  else if (m) parts.push(`${m}m`, ...(r ? [`${r}s`] : []));
  else parts.push(`${r}s`);
  return parts.join(" ");
}

const label = (r: Ref | undefined) => (r ? (r.name ?? r.id) : undefined);
const percent = (rate: number | null) => (rate === null ? "—" : `${Math.round(rate * 1000) / 10} %`);
const list = (ids: readonly string[]) => ids.join(", ");
const days = (n: number) => `${n} day${n === 1 ? "" : "s"}`;

/** The lines of one set of figures, indented under its heading. */
function figureLines(f: Figures, periodDays: number): string[] {
  const df = f.deployment_frequency, lt = f.lead_time, cf = f.change_failure_rate, tr = f.time_to_restore;
  const lines = [
    `  deployment frequency  ${df.deployments} in ${days(periodDays)}: ${df.per_day} a day, ${df.per_week} a week`,
    `  lead time             ${lt.deployments ? `median ${humanSeconds(lt.median_sec)}, p90 ${humanSeconds(lt.p90_sec)} over ${lt.deployments} deployment${lt.deployments === 1 ? "" : "s"}` : "no deployment with a known commit time"}`,
  ];
  if (lt.unknown.length) lines.push(`    not known for ${lt.unknown.length}: ${lt.unknown.map((u) => `${u.id} (${u.reason})`).join("; ")}`);
  lines.push(`  change failure rate   ${percent(cf.rate)} (${cf.failed} of ${cf.deployments})${cf.failed ? `: failed ${list(cf.failed_executions)}` : ""}`);
  if (cf.incidents.length) lines.push(`    incidents ${list(cf.incidents)}`);
  lines.push(`  time to restore       ${tr.restored ? `median ${humanSeconds(tr.median_sec)}, p90 ${humanSeconds(tr.p90_sec)} over ${tr.restored} incident${tr.restored === 1 ? "" : "s"}` : "no incident closed"}`);
  for (const r of tr.incidents) lines.push(`    ${r.id}  ${humanSeconds(r.restore_sec)} (${r.opened_at} → ${r.restored_at})`);
  for (const u of tr.unknown) lines.push(`    ${u.id}  not known: ${u.reason}`);
  for (const o of tr.open) lines.push(`    ${o.id}  open since ${o.opened_at}`);
  return lines;
}

function heading(s: ServiceFigures): string {
  const env = label(s.environment);
  return `${label(s.service)}${env ? ` (${env})` : ""}  ${s.service.id}`;
}

/** The report as text: a block per service, then all of them together. */
export function reportLines(report: DeliveryReport): string[] {
  const { period } = report;
  const out = [`Delivery report, ${period.from} to ${period.to} (${days(period.days)})`];
  if (!report.services.length) {
    out.push("no deployment or deployment incident in the period");
    return out;
  }
  for (const s of report.services) out.push("", heading(s), ...figureLines(s, period.days));
  if (report.services.length > 1) out.push("", "all these services", ...figureLines(report.total, period.days));
  out.push("", "Successful deployments' ids and every lead time: --format json or csv.");
  return out;
}

export const REPORT_CSV_COLUMNS = [
  "environment_id", "environment", "service_id", "service", "from", "to", "days",
  "deployments", "per_day", "per_week",
  "lead_time_deployments", "lead_time_median_sec", "lead_time_p90_sec", "lead_time_unknown",
  "change_failure_rate", "failed", "deployments_all",
  "restored", "restore_median_sec", "restore_p90_sec", "open_incidents",
  "deployed_executions", "failed_executions", "failure_incidents", "restored_incidents", "open_incident_ids", "lead_time_unknown_executions",
] as const;

const ids = (xs: readonly string[]) => xs.join(" ");

function csvValues(f: Figures, period: DeliveryReport["period"], where: Partial<ServiceFigures>): unknown[] {
  const df = f.deployment_frequency, lt = f.lead_time, cf = f.change_failure_rate, tr = f.time_to_restore;
  return [
    where.environment?.id, label(where.environment), where.service?.id, where.service ? label(where.service) : "all", period.from, period.to, period.days,
    df.deployments, df.per_day, df.per_week,
    lt.deployments, lt.median_sec, lt.p90_sec, lt.unknown.length,
    cf.rate, cf.failed, cf.deployments,
    tr.restored, tr.median_sec, tr.p90_sec, tr.open.length,
    ids(df.executions), ids(cf.failed_executions), ids(cf.incidents), ids(tr.incidents.map((r) => r.id)), ids(tr.open.map((o) => o.id)), ids(lt.unknown.map((u) => u.id)),
  ];
}

/** The report as CSV lines (RFC 4180, CRLF): a header, a line per service, and a last line `all`; id lists space-separated. */
export function reportCsv(report: DeliveryReport): string[] {
  return [
    csvLine(REPORT_CSV_COLUMNS),
    ...report.services.map((s) => csvLine(csvValues(s, report.period, s))),
    csvLine(csvValues(report.total, report.period, {})),
  ];
}
