/**
 * Audit rows and explanations for people (a table, text) and for scripts (JSON lines, CSV). Pure.
 */
import { csvLine } from "./csv.js";
import type { AuditRow, DeliveryRow, Ref } from "../model/audit-row.js";
import type { Explanation } from "./explain.js";

export const FORMATS = ["table", "json", "csv"] as const;
export type Format = (typeof FORMATS)[number];

const name = (r: Ref | undefined) => (r ? (r.name ?? r.id) : undefined);

/** Who was told about an alert, in a few words: `slack #oncall sent; email a@b muted`. */
export function toldOf(row: AuditRow): string {
  if (row.type !== "alert") return "";
  if (row.state === "suppressed") return `nobody (${row.suppression?.reason ?? "suppressed"})`;
  if (!row.deliveries) return "";
  if (!row.deliveries.length) return "nobody (no receiver)";
  return row.deliveries.map((d) => `${d.receiver} ${deliveryWord(d)}`).join("; ");
}

function deliveryWord(d: DeliveryRow): string {
  if (d.reason === "mute") return "muted";
  if (d.state === "sent" && d.digest_id) return "sent (digest)";
  return d.state;
}

/** Where it happened: service or cluster, with the environment. */
function whereOf(row: AuditRow): string {
  const thing = name(row.service) ?? (row.cluster ? `cluster ${name(row.cluster)}` : undefined) ?? (row.webhook ? `webhook ${name(row.webhook)}` : undefined);
  const env = name(row.environment);
  return [thing, env ? `(${env})` : undefined].filter(Boolean).join(" ");
}

const whatOf = (row: AuditRow) => [row.transition, row.status, row.stage ? `quarantined at ${row.stage}` : undefined].filter(Boolean).join(" ");

export const CSV_COLUMNS = [
  "at", "type", "kind", "id", "status", "transition", "severity", "organization", "project", "environment",
  "service", "cluster", "webhook", "actor", "commit", "state", "suppression", "told", "summary",
] as const;

function csvValues(row: AuditRow): unknown[] {
  return [
    row.at, row.type, row.kind, row.id, row.status, row.transition, row.severity, row.organization,
    name(row.project), name(row.environment), name(row.service), name(row.cluster), row.webhook?.id, row.actor, row.commit,
    row.state, row.suppression ? `${row.suppression.reason}: ${row.suppression.detail}` : undefined, toldOf(row), row.summary,
  ];
}

export const csvHeader = (): string => csvLine(CSV_COLUMNS);
export const csvRow = (row: AuditRow): string => csvLine(csvValues(row));

export const jsonLine = (row: AuditRow): string => JSON.stringify(row);

const clip = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/** A plain-text table: fixed columns, the summary last. */
export function tableLines(rows: readonly AuditRow[]): string[] {
  const cells = rows.map((r) => [
    r.at.replace("T", " ").slice(0, 19),
    r.type,
    r.kind,
    whatOf(r),
    whereOf(r),
    r.actor ?? "",
    toldOf(r),
    r.id,
    r.summary,
  ]);
  const header = ["TIME (UTC)", "TYPE", "KIND", "WHAT", "WHERE", "WHO", "TOLD", "ID", "SUMMARY"];
  // Ids are never clipped: they are what `lookout explain` takes.
  const max = [19, 9, 16, 32, 36, 28, 44, Infinity, 100];
  const all = [header, ...cells].map((c) => c.map((v, i) => clip(v, max[i]!)));
  const widths = header.map((_, i) => Math.max(...all.map((c) => c[i]!.length)));
  return all.map((c) => c.map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i]!))).join("  ").trimEnd());
}

/** An explanation for people, one fact a line. */
export function explanationLines(e: Explanation): string[] {
  const out: string[] = [];
  const s = e.subject;
  if (s?.type === "record") {
    out.push(`${s.kind.replace("_", " ")} ${s.id}: occurred ${s.occurred_at}, read ${s.observed_at}`);
    out.push("  as read (redacted):");
    for (const line of JSON.stringify(s.record, null, 2).split("\n")) out.push(`    ${line}`);
  } else if (s?.type === "execution") {
    out.push(`deployment execution ${s.execution_id} of service ${s.service_id}: now ${s.status}`);
    out.push("  transitions seen:");
    for (const h of s.history) out.push(`    ${h.observed_at}  ${h.status}`);
    out.push("  latest read (redacted):");
    for (const line of JSON.stringify(s.observation, null, 2).split("\n")) out.push(`    ${line}`);
  } else if (!e.quarantined?.length) {
    out.push(`${e.id}: the record or execution that raised it is no longer stored (or it is Lookout's own health)`);
  }
  for (const q of e.quarantined ?? []) {
    const what = q.stage === "ingest" ? `could not be stored (read from ${q.source})` : "could not be published";
    out.push(`${q.kind.replace("_", " ")} ${e.id}: quarantined ${q.quarantined_at}: it ${what}`);
    out.push(`  reason: ${q.reason}`);
    out.push("  as it was (redacted, clipped):");
    out.push(`    ${q.excerpt}`);
  }
  if (!e.alerts.length) out.push("no alert raised: nothing in it was a failure Lookout alerts on (or it came before the service failed)");
  for (const a of e.alerts) {
    out.push(`alert ${a.id}${a.id === e.id ? " (asked)" : ""}: ${a.transition} (${a.severity})${a.status ? ` ${a.status}` : ""}, occurred ${a.occurred_at}, raised ${a.raised_at}`);
    out.push(`  ${a.summary}`);
    if (a.incident_id && a.incident_id !== a.id) out.push(`  incident opened by alert ${a.incident_id}`);
    out.push(a.published ? "  published to the bus" : `  not published: ${a.suppression?.reason} — ${a.suppression?.detail}`);
    for (const d of a.deliveries) {
      const where = d.ts ? ` (ts ${d.ts})` : d.message_id ? ` (${d.message_id})` : "";
      out.push(`  route ${d.route} → ${d.receiver}: ${d.state}${where}, ${d.attempts} attempt(s), ${d.updated_at}${d.error ? ` — ${d.error}` : ""}`);
      if (d.suppression) out.push(`    ${d.suppression.reason}: ${d.suppression.detail}${d.suppression.mute?.lifted_at ? ` (lifted ${d.suppression.mute.lifted_at})` : ""}`);
      if (d.permanent) out.push("    not retried: retrying cannot fix this failure");
      if (d.health_id) out.push(`    raised health event ${d.health_id} (receiver_failing)`);
      if (d.digest) out.push(`    in digest ${d.digest.id}${d.digest.state ? `: ${d.digest.state}` : ""}${d.digest.updated_at ? ` ${d.digest.updated_at}` : ""}`);
    }
    out.push(`  → ${a.verdict}`);
  }
  return out;
}
