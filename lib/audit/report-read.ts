/**
 * The report's question (what was typed or sent: a period, a service, an environment) and reading its
 * rows through the audit reader — the same indexes, filters and pages as `lookout audit`, never a Scan.
 */
import type { AuditReader } from "./dynamo.js";
import { AuditQueryError, MAX_LIMIT } from "./model.js";
import { parseAuditQuery, type RawQuery } from "./parse.js";
import type { AuditRow } from "../model/audit-row.js";
import type { ReportInput, ReportPeriod } from "./report.js";

export const REPORT_PARAMS = ["service", "environment", "since", "from", "to"] as const;
export type ReportParam = (typeof REPORT_PARAMS)[number];

/** Without a time: the last 30 days. */
export const DEFAULT_REPORT_SINCE = "30d";

export interface ReportQuery {
  service?: string;
  environment?: string;
  period: ReportPeriod;
  /** The parameter that set the period's start, for an error about the period. */
  periodField: "since" | "from" | "to";
}

/**
 * Checks a report's parameters as the audit checks its filters (the same messages, naming the
 * parameter): a uuid for the service and environment, a duration or ISO dates for the period. `to`
 * defaults to now (a later one is cut to now: the future holds no deployments to count), `from` to 30
 * days before `to`.
 */
export function parseReportQuery(raw: RawQuery, now: Date): ReportQuery {
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    if (!(REPORT_PARAMS as readonly string[]).includes(name)) {
      throw new AuditQueryError(name, `unknown parameter (report: service, environment; time: since, or from and to)`);
    }
  }
  const q = parseAuditQuery({ service: raw.service, environment: raw.environment, since: raw.since, from: raw.from, to: raw.to }, now);
  const nowIso = now.toISOString();
  const to = q.range.to && q.range.to < nowIso ? q.range.to : nowIso;
  const from = q.range.from ?? parseAuditQuery({ since: DEFAULT_REPORT_SINCE }, new Date(to)).range.from!;
  if (from >= to) throw new AuditQueryError("from", `${from} is not in the past`);
  const periodField = raw.since !== undefined ? "since" : raw.from !== undefined ? "from" : "to";
  return {
    ...(q.filters.service ? { service: q.filters.service } : {}),
    ...(q.filters.environment ? { environment: q.filters.environment } : {}),
    period: { from, to },
    periodField,
  };
}

/** At most this many rows of each kind a report reads: beyond, it asks for a narrower question. */
export const MAX_REPORT_ROWS = 100_000;

/** A failure's alert can come after the period's end (the execution started inside it): read a day more. */
const ALERT_LATENESS_MS = 86_400_000;

/** Every row of one audit query, page after page. */
async function readAll(reader: AuditReader, raw: RawQuery, now: Date, field: string): Promise<AuditRow[]> {
  const rows: AuditRow[] = [];
  let cursor: string | undefined;
  do {
    const page = await reader.query(parseAuditQuery({ ...raw, limit: String(MAX_LIMIT), cursor }, now), { deliveries: false });
    rows.push(...page.rows);
    cursor = page.cursor;
    if (rows.length > MAX_REPORT_ROWS) {
      throw new AuditQueryError(field, `the period holds more than ${MAX_REPORT_ROWS} ${raw.type === "execution" ? "executions" : "alerts"}: ask for a shorter one, a service or an environment`);
    }
  } while (cursor);
  return rows;
}

/** The deployment executions started in the period and the deployment alerts the figures need. */
export async function readReportInput(reader: AuditReader, q: ReportQuery, now: Date): Promise<ReportInput> {
  const scope = { service: q.service, environment: q.environment };
  const late = new Date(Date.parse(q.period.to) + ALERT_LATENESS_MS).toISOString();
  const alertsOf = (transition: string) => readAll(reader, { ...scope, type: "alert", transition, from: q.period.from, to: late }, now, q.periodField);
  const [executions, ...alerts] = await Promise.all([
    readAll(reader, { ...scope, type: "execution", from: q.period.from, to: q.period.to }, now, q.periodField),
    alertsOf("failed"),
    alertsOf("still_failing"),
    alertsOf("recovered"),
  ]);
  return { executions, alerts: alerts.flat() };
}
