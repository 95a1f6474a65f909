/**
 * Audit rows and explanations for people (a table, text) and for scripts (JSON lines, CSV). Pure.
 */
import { csvLine } from "./csv.js";
import type { AuditRow, DeliveryRow, Ref } from "../model/audit-row.js";
import { ONLOOKER, type Explanation } from "./explain.js";
import { ACTION_WORDS } from "../model/audit-row.js";

export const FORMATS = ["table", "json", "csv"] as const;
export type Format = (typeof FORMATS)[number];

const name = (r: Ref | undefined) => (r ? (r.name ?? r.id) : undefined);

/** Who was told about an alert, in a few words: `slack #oncall sent; email a@b muted`. */
export function toldOf(row: AuditRow): string {
  if (row.type !== "alert") return "";
  if (row.state === "suppressed") return `nobody (${row.suppression?.reason ?? "suppressed"})`;
  if (!row.deliveries) return "";
  // Published with no delivery recorded: no route matched it, or its delivery has not happened yet
  // (`lookout explain` tells which); never "nobody" while it may still be on its way.
  if (!row.deliveries.length) return "no delivery recorded (no route matched, or not delivered yet)";
  return row.deliveries.map((d) => `${d.receiver} ${deliveryWord(d)}`).join("; ");
}

function deliveryWord(d: DeliveryRow): string {
  // An onlooker (a preview) only showed it: shown, and nobody told.
  if (d.onlooker) return `${d.state === "sent" ? "shown" : deliveryWord({ ...d, onlooker: false })} ${ONLOOKER}`;
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

/** Lines of the table fit this many terminal columns. */
export const TABLE_WIDTH = 120;

// Built on first use: only the terminal's table measures text, and building one takes milliseconds
// (its Unicode data) that the audit API, which imports this module for CSV, would pay at its cold start.
let segmenter: Intl.Segmenter | undefined;
const graphemesOf = (s: string) => (segmenter ??= new Intl.Segmenter("en", { granularity: "grapheme" })).segment(s);
const WIDE = /^[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u;
const EMOJI = /\p{Emoji_Presentation}|\p{Extended_Pictographic}\ufe0f|\p{Regional_Indicator}{2}/u;
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]+$/u;

/** The columns a grapheme takes in a terminal: 2 for emoji and East Asian wide characters, 0 for marks. */
function graphemeWidth(g: string): number {
  if (EMOJI.test(g) || WIDE.test(g)) return 2;
  return ZERO_WIDTH.test(g) ? 0 : 1;
}

/** The columns a string takes in a terminal (not its length: an emoji is 2, a combining accent 0). */
export function stringWidth(s: string): number {
  let w = 0;
  for (const { segment } of graphemesOf(s)) w += graphemeWidth(segment);
  return w;
}

/** Platform text on one line: control characters and bidi overrides (which reorder a terminal line) become spaces. */
const oneLine = (s: string) => s.replace(/[\p{Cc}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]+/gu, " ");

/** At most `max` terminal columns, an ellipsis where (and only where) it was cut. */
export function clip(s: string, max: number): string {
  if (stringWidth(s) <= max) return s;
  let out = "";
  let w = 0;
  for (const { segment } of graphemesOf(s)) {
    const g = graphemeWidth(segment);
    if (w + g > max - 1) break;
    out += segment;
    w += g;
  }
  return `${out}…`;
}

const pad = (s: string, width: number) => s + " ".repeat(Math.max(0, width - stringWidth(s)));

/** An id, whole: on lines of at most `width` columns after the indent, cut only when one line cannot hold it. */
function idLines(id: string, indent: string, width: number): string[] {
  const room = width - indent.length;
  const out = [indent];
  for (const { segment } of graphemesOf(id)) {
    if (stringWidth(out.at(-1)!) + graphemeWidth(segment) > width) out.push(indent);
    out[out.length - 1] += segment;
  }
  return room > 0 ? out : [indent + id];
}

const INDENT = "    ";

/**
 * A plain-text table that fits `width` columns (TABLE_WIDTH): each row a line of fixed columns (WHO
 * takes what is left), then, indented, its id — never clipped: it is what `lookout explain` takes —
 * and the summary, and for an alert who was told.
 */
export function tableLines(rows: readonly AuditRow[], width = TABLE_WIDTH): string[] {
  const header = ["TIME (UTC)", "TYPE", "KIND", "WHAT", "WHERE", "WHO"];
  const caps = [19, 10, 16, 26, 26];
  const cells = rows.map((r) => [r.at.replace("T", " ").slice(0, 19), r.type, r.kind, whatOf(r), whereOf(r), r.actor ?? ""].map(oneLine));
  const widths = caps.map((cap, i) => Math.min(cap, Math.max(...[header, ...cells].map((c) => stringWidth(c[i]!)))));
  const used = widths.reduce((a, b) => a + b + 2, 0);
  const line = (c: string[]) => [...widths.map((w, i) => pad(clip(c[i]!, w), w)), clip(c[5]!, Math.max(1, width - used))].join("  ").trimEnd();
  const out = [line(header), `${INDENT}ID  SUMMARY`];
  rows.forEach((r, n) => {
    out.push(line(cells[n]!));
    const ids = idLines(oneLine(r.id), INDENT, width);
    const last = ids.pop()!;
    const room = width - stringWidth(last) - 2;
    const summary = oneLine(r.summary).trim();
    out.push(...ids, summary && room > 8 ? `${last}  ${clip(summary, room)}` : last);
    if (summary && room <= 8) out.push(`${INDENT}${clip(summary, width - INDENT.length)}`);
    const told = oneLine(toldOf(r));
    if (told) out.push(clip(`${INDENT}told: ${told}`, width));
  });
  return out;
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
      out.push(`  ${d.escalation ? `escalation of route ${d.escalation}, ` : ""}route ${d.route} → ${d.receiver}: ${d.state}${where}, ${d.attempts} attempt(s), ${d.updated_at}${d.error ? ` — ${d.error}` : ""}`);
      if (d.suppression) out.push(`    ${d.suppression.reason}: ${d.suppression.detail}${d.suppression.mute?.lifted_at ? ` (lifted ${d.suppression.mute.lifted_at})` : ""}`);
      if (d.permanent) out.push("    not retried: retrying cannot fix this failure");
      if (d.health_id) out.push(`    raised health event ${d.health_id} (receiver_failing)`);
      if (d.digest) out.push(`    in digest ${d.digest.id}${d.digest.state ? `: ${d.digest.state}` : ""}${d.digest.updated_at ? ` ${d.digest.updated_at}` : ""}`);
    }
    for (const x of a.escalations ?? []) out.push(`  escalation by route ${x.route}: ${x.state}, due ${x.due_at}${x.settled_at ? `, ${x.settled_at}` : ""}${x.reason ? ` — ${x.reason}` : ""}`);
    for (const x of a.actions ?? []) out.push(`  ${actionLine(x)}`);
    out.push(`  → ${a.verdict}`);
  }
  return out;
}

/** A click on the alert's message, for people: what, who, when, where, and why it did nothing when it did not. */
export function actionLine(x: { kind: string; by: { id: string; name: string }; at: string; channel: string; outcome?: string }): string {
  const who = `${x.by.name || x.by.id} (Slack ${x.by.id})`;
  const where = `at ${x.at}, from the message in ${x.channel}`;
  if (x.outcome && x.outcome !== "acknowledged" && x.outcome !== "muted") {
    return `${who} pressed ${BUTTON_WORDS[x.kind] ?? x.kind} ${where} — nothing done: ${x.outcome.replace(/_/g, " ")}`;
  }
  return `${ACTION_WORDS[x.kind] ?? x.kind} by ${who} ${where}`;
}

const BUTTON_WORDS: Record<string, string> = { acknowledge: "Acknowledge", mute_1h: "Mute 1h", mute_until_resolved: "Mute until resolved" };
