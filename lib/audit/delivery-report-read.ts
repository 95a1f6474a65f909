/**
 * The report's question (what was typed or sent: a period, a service, an environment) and reading its
 * rows through the audit reader — the same indexes, filters and pages as `lookout audit`, never a Scan.
 */
import pMap from "p-map";
import type { AuditReader } from "./trail.js";
import { AuditQueryError, MAX_LIMIT } from "./model.js";
import { parseAuditQuery, type RawQuery } from "./parse.js";
import type { AuditRow } from "../model/audit-row.js";
import type { ReportInput, ReportPeriod } from "./delivery-report.js";

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

/** A period is read in slices of about this length, a few at once: pages of one query follow each other. */
const SLICE_MS = 7 * 86_400_000;
const CONCURRENT_READS = 4;

/** [from, to) cut into consecutive slices of at most SLICE_MS (disjoint: each row is in one). */
export function slices(from: string, to: string): Array<{ from: string; to: string }> {
  const out: Array<{ from: string; to: string }> = [];
  for (let t = Date.parse(from), end = Date.parse(to); t < end; t += SLICE_MS) {
    out.push({ from: new Date(t).toISOString(), to: new Date(Math.min(t + SLICE_MS, end)).toISOString() });
  }
  return out;
}

/** The deployment executions started in the period and the deployment alerts the figures need. */
export async function readReportInput(reader: AuditReader, q: ReportQuery, now: Date): Promise<ReportInput> {
  const scope = { service: q.service, environment: q.environment };
  const late = new Date(Date.parse(q.period.to) + ALERT_LATENESS_MS).toISOString();
  const reads = [
    ...slices(q.period.from, q.period.to).map((range) => ({ kind: "executions" as const, raw: { ...scope, type: "execution", ...range } })),
    ...["failed", "still_failing", "recovered"].flatMap((transition) =>
      slices(q.period.from, late).map((range) => ({ kind: "alerts" as const, raw: { ...scope, type: "alert", transition, ...range } }))),
  ];
  const rows = await pMap(reads, (r) => readAll(reader, r.raw, now, q.periodField), { concurrency: CONCURRENT_READS });
  const of = (kind: "executions" | "alerts") => rows.filter((_, i) => reads[i]!.kind === kind).flat();
  const input = { executions: of("executions"), alerts: of("alerts") };
  for (const [kind, list] of Object.entries(input)) {
    if (list.length > MAX_REPORT_ROWS) throw new AuditQueryError(q.periodField, `the period holds more than ${MAX_REPORT_ROWS} ${kind}: ask for a shorter one, a service or an environment`);
  }
  return input;
}
