/**
 * Email rendering of Lookout events: pure functions from a detail to an EmailMessage with a subject that
 * reads well in an inbox list, a plain-text part and an HTML part stating the same facts.
 *
 * ESCAPING. Every value in the HTML part goes through `escapeHtml` (the five HTML-special characters and
 * the apostrophe), text and attributes alike; links are absolute http(s) URLs only (`safeHttpUrl`),
 * escaped again in the `href`. The plain-text part needs no escaping; control characters are removed
 * from one-line values. Header values (subject, ids) are made single-line here; MIME encoding of
 * non-ASCII is the transport's (nodemailer's) job.
 *
 * THREADING. Each alert gets a stable Message-ID, `<alert id@domain of from>`, the same however often
 * it is rendered; a follow-up (still failing, recovered, cancelled within an incident) carries
 * `In-Reply-To` and `References` naming the first alert's Message-ID, so mail clients thread it under it.
 */
import { createHash } from "node:crypto";
import type { LookoutEventDetail } from "../../model/event.js";
import type { EmailMessage, IncidentRef } from "../types.js";
import {
  type AlertView,
  alertView,
  asDate,
  clip,
  digestGroupTitle,
  digestLine,
  digestOverview,
  escapeHtml,
  formatUtc,
  type DigestOptions,
  oneLine,
  parseInstant,
} from "../view/index.js";

export interface EmailRenderOptions {
  /** The sender, `lookout@example.com` or `Lookout <lookout@example.com>`; its domain names Message-IDs. */
  from: string;
  to: string[];
  /** The first alert of the incident, for follow-ups (quoted, and named in the threading headers). */
  incident?: IncidentRef;
  /**
   * The Message-ID the first alert's email actually went out with, when the transport replaced ours
   * (SES does: it returns its own id). Follow-ups then reply to that; otherwise to the derived one.
   */
  firstMessageId?: string;
}

/** The header carrying the alert id (the .eml file transport names files with it). */
export const ALERT_ID_HEADER = "X-Lookout-Alert-Id";

const SUBJECT_MAX = 200;

/** The domain of a sender address, for Message-IDs; a reserved name when there is none. */
export function domainOf(from: string): string {
  const m = /@([A-Za-z0-9.-]+)>?\s*$/.exec(from.trim());
  return m?.[1]?.toLowerCase() ?? "lookout.invalid";
}

/** A Message-ID's local part from an alert id: only characters RFC 5322's dot-atom allows. */
const idPart = (id: string) => id.replace(/[^A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]/g, "_").replace(/^\.+|\.+$/g, "") || "alert";

/** The stable Message-ID of an alert, angle brackets included. */
export function alertMessageId(alertId: string, from: string): string {
  return `<${idPart(alertId)}@${domainOf(from)}>`;
}

export function emailSubject(v: AlertView): string {
  return clip(oneLine(`[Lookout] ${v.transition} ${v.where}${v.what ? ` — ${v.what}` : ""}`), SUBJECT_MAX);
}

const indent = (text: string, pad: string) => text.split(/\r?\n/).map((l, i) => (i ? pad + l : l)).join("\n");

function textPart(v: AlertView, first: LookoutEventDetail | undefined): string {
  const out: string[] = [];
  out.push(`${v.emoji} ${v.title}: ${v.subject}${v.place ? ` (${v.place})` : ""}`, "");
  if (first) {
    const at = parseInstant(first.occurred_at);
    out.push(`Follow-up of the alert of ${at ? formatUtc(at) : oneLine(first.occurred_at)}:`, `> ${oneLine(first.summary)}`, "");
  } else if (v.incidentId) {
    out.push(`Follow-up of incident ${v.incidentId}.`, "");
  }
  out.push(v.summary, "");

  const rows: [string, string][] = v.fields.map((f) => [f.label, f.value]);
  const c = v.commit;
  if (c) {
    const commitLines = [
      `${c.shortId ?? "(no id)"}${c.tag ? ` (${c.tag})` : ""}${c.author ? ` by ${c.author}` : ""}`,
      ...(c.subject ? [c.subject] : []),
      ...(c.url ? [c.url] : []),
    ];
    rows.push(["Commit", commitLines.join("\n")]);
  }
  const e = v.error;
  if (e) {
    const head = [e.tag, e.step ? `at ${e.step}` : undefined].filter(Boolean).join(" ");
    rows.push(["Error", [head, e.message].filter(Boolean).join(": ") || "error"]);
    if (e.hint) rows.push(["Hint", e.hint]);
    if (e.url) rows.push(["Error docs", e.url]);
  }
  for (const n of v.notes) rows.push([n.label, clip(n.value, 1000)]);
  rows.push(["Occurred", v.occurredAt ? formatUtc(v.occurredAt) : oneLine(v.occurredRaw)]);
  rows.push(["Alert", v.id]);
  if (v.executionId) rows.push(["Execution", v.executionId]);
  if (v.incidentId) rows.push(["Incident", v.incidentId]);
  for (const l of v.links) if (l.url !== c?.url && l.url !== e?.url) rows.push([l.label, l.url]);

  const width = Math.max(...rows.map(([k]) => k.length)) + 2;
  for (const [k, val] of rows) out.push(`${`${k}:`.padEnd(width)}${indent(val, " ".repeat(width))}`);
  out.push("", "-- ", "Sent by Lookout.");
  return out.join("\n") + "\n";
}

const STYLE = {
  body: "font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:14px;color:#1d1c1d;line-height:1.4",
  th: "text-align:left;vertical-align:top;padding:2px 12px 2px 0;color:#616061;font-weight:normal;white-space:nowrap",
  td: "vertical-align:top;padding:2px 0",
  quote: "margin:0 0 12px 0;padding:4px 12px;border-left:4px solid #ddd;color:#616061",
  pre: "white-space:pre-wrap;font-family:Menlo,Consolas,monospace;font-size:12px;margin:0",
  foot: "color:#8d8d8d;font-size:12px;margin-top:16px",
} as const;

const SEVERITY_COLOR: Record<string, string> = { critical: "#b00020", error: "#d93025", warning: "#e37400", info: "#1a73e8" };

const link = (url: string, label: string) => `<a href="${escapeHtml(url)}">${escapeHtml(label)}</a>`;
const multiline = (text: string) => escapeHtml(text).replace(/\r?\n/g, "<br>");

function htmlPart(v: AlertView, detail: LookoutEventDetail, first: LookoutEventDetail | undefined): string {
  const color = v.transition === "RECOVERED" ? "#188038" : (SEVERITY_COLOR[detail.severity] ?? "#616061");
  const rows: string[] = [];
  const row = (label: string, html: string) =>
    rows.push(`<tr><th style="${STYLE.th}">${escapeHtml(label)}</th><td style="${STYLE.td}">${html}</td></tr>`);

  for (const f of v.fields) row(f.label, escapeHtml(f.value));
  const c = v.commit;
  if (c) {
    const id = c.shortId ? (c.url ? link(c.url, c.shortId) : `<code>${escapeHtml(c.shortId)}</code>`) : c.url ? link(c.url, "commit") : "(no id)";
    const meta = `${c.tag ? ` (${escapeHtml(c.tag)})` : ""}${c.author ? ` by ${escapeHtml(c.author)}` : ""}`;
    row("Commit", `${id}${meta}${c.subject ? `<br>${escapeHtml(c.subject)}` : ""}`);
  }
  const e = v.error;
  if (e) {
    const head = [e.tag, e.step ? `at ${e.step}` : undefined].filter(Boolean).join(" ");
    row("Error", multiline([head, e.message].filter(Boolean).join(": ") || "error"));
    if (e.hint) row("Hint", multiline(e.hint));
    if (e.url) row("Error docs", link(e.url, e.url));
  }
  for (const n of v.notes) row(n.label, `<pre style="${STYLE.pre}">${escapeHtml(clip(n.value, 1000))}</pre>`);
  row("Occurred", escapeHtml(v.occurredAt ? formatUtc(v.occurredAt) : oneLine(v.occurredRaw)));
  row("Alert", `<code>${escapeHtml(v.id)}</code>`);
  if (v.executionId) row("Execution", `<code>${escapeHtml(v.executionId)}</code>`);
  if (v.incidentId) row("Incident", `<code>${escapeHtml(v.incidentId)}</code>`);
  for (const l of v.links) if (l.url !== c?.url && l.url !== e?.url) row(l.label, link(l.url, l.url));

  let quote = "";
  if (first) {
    const at = parseInstant(first.occurred_at);
    quote = `<blockquote style="${STYLE.quote}">Follow-up of the alert of ${escapeHtml(at ? formatUtc(at) : oneLine(first.occurred_at))}:<br>${escapeHtml(oneLine(first.summary))}</blockquote>\n`;
  } else if (v.incidentId) {
    quote = `<blockquote style="${STYLE.quote}">Follow-up of incident <code>${escapeHtml(v.incidentId)}</code>.</blockquote>\n`;
  }

  return [
    "<!DOCTYPE html>",
    `<html><head><meta charset="utf-8"><title>${escapeHtml(emailSubject(v))}</title></head>`,
    `<body style="${STYLE.body}">`,
    `<h2 style="margin:0 0 8px 0;color:${color}">${escapeHtml(`${v.emoji} ${v.title}: ${v.subject}`)}${v.place ? ` <span style="color:#616061;font-weight:normal">${escapeHtml(v.place)}</span>` : ""}</h2>`,
    quote + `<p style="margin:0 0 12px 0">${escapeHtml(v.summary)}</p>`,
    `<table style="border-collapse:collapse">\n${rows.join("\n")}\n</table>`,
    `<p style="${STYLE.foot}">Sent by Lookout.</p>`,
    "</body></html>",
    "",
  ].join("\n");
}

/** One alert as an email. Follow-ups quote the first alert and thread under it. */
export function renderEmail(detail: LookoutEventDetail, opts: EmailRenderOptions): EmailMessage {
  const v = alertView(detail);
  const first = opts.incident?.first && opts.incident.first.id !== detail.id ? opts.incident.first : undefined;
  const firstId = first?.id ?? v.incidentId;
  const headers: Record<string, string> = {
    "Message-ID": alertMessageId(detail.id, opts.from),
    [ALERT_ID_HEADER]: oneLine(detail.id),
  };
  if (firstId && firstId !== detail.id) {
    const ref = opts.firstMessageId ? oneLine(opts.firstMessageId) : alertMessageId(firstId, opts.from);
    headers["In-Reply-To"] = ref;
    headers.References = ref;
  }
  return {
    from: opts.from,
    to: [...opts.to],
    subject: emailSubject(v),
    text: textPart(v, first),
    html: htmlPart(v, detail, first),
    headers,
  };
}

/** Ten summaries per group by default. */
export interface EmailDigestOptions extends DigestOptions {
  from: string;
  to: string[];
  /** What was held back: when the storm began and ended. */
  since: Date | string;
  until: Date | string;
  /** For people: the route or receiver the digest stands in for. */
  label?: string;
}

/** ONE email for everything a storm held back: grouped, counted, the first summaries of each group. */
export function renderEmailDigest(held: readonly LookoutEventDetail[], opts: EmailDigestOptions): EmailMessage {
  const since = asDate(opts.since);
  const until = asDate(opts.until);
  const perGroup = Math.max(1, opts.perGroup ?? 10);
  const { groups, alerts, tally } = digestOverview(held);
  const label = opts.label ? oneLine(opts.label) : undefined;

  const digestId = `digest-${createHash("sha256").update(held.map((d) => d.id).sort().join("\n")).digest("hex").slice(0, 20)}`;
  const subject = clip(oneLine(`[Lookout] DIGEST ${alerts} held back${label ? ` for ${label}` : ""}${tally ? ` — ${tally}` : ""}`), SUBJECT_MAX);
  const intro = `Between ${formatUtc(since)} and ${formatUtc(until)} more alerts came${label ? ` for ${label}` : ""} than its rate budget allows. Lookout held them back and lists them here instead of dropping them.`;

  const textLines: string[] = [`${alerts} held back`, "", intro, ""];
  const htmlGroups: string[] = [];
  for (const g of groups) {
    const title = digestGroupTitle(g);
    const lines = g.details.slice(0, perGroup).map((d) => digestLine(d, 500, opts));
    const more = g.details.length - lines.length;
    textLines.push(title, ...lines.map((l) => `  • ${l}`), ...(more > 0 ? [`  and ${more} more`] : []), "");
    htmlGroups.push(
      `<h3 style="margin:12px 0 4px 0">${escapeHtml(title)}</h3>\n<ul style="margin:0;padding-left:20px">\n` +
        lines.map((l) => `<li>${escapeHtml(l)}</li>`).join("\n") +
        (more > 0 ? `\n<li>and ${more} more</li>` : "") +
        "\n</ul>",
    );
  }
  textLines.push("-- ", "Sent by Lookout.");
  const html = [
    "<!DOCTYPE html>",
    `<html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    `<body style="${STYLE.body}">`,
    `<h2 style="margin:0 0 8px 0">${escapeHtml(`⏸ ${alerts} held back`)}</h2>`,
    `<p style="margin:0 0 12px 0">${escapeHtml(intro)}</p>`,
    ...htmlGroups,
    `<p style="${STYLE.foot}">Sent by Lookout.</p>`,
    "</body></html>",
    "",
  ].join("\n");

  return {
    from: opts.from,
    to: [...opts.to],
    subject,
    text: textLines.join("\n") + "\n",
    html,
    headers: { "Message-ID": alertMessageId(digestId, opts.from), [ALERT_ID_HEADER]: digestId },
  };
}
