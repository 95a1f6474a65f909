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
 * ONE CONVERSATION PER INCIDENT (docs/events.md, "Incidents"). Every message of an incident — the
 * opening, its follow-ups, the change list, the close — has the same subject, named from the incident's
 * first alert without any state ("[Lookout] incident: api in storefront/production — deployment"), so
 * clients that thread on the subject (Gmail) keep one conversation. The state (FAILED, STILL FAILING,
 * "RECOVERED, resolved after 14m") is the body's first line and the `X-Lookout-State` header.
 * Each alert gets a stable Message-ID, `<alert id@domain of from>` (the opening alert's id is the
 * incident's); a follow-up carries `In-Reply-To` the first message and `References` the first message
 * and, when known, the one it follows. SMTP keeps our Message-ID; SES replaces it with its own and
 * reports it, and follow-ups then reply to that (`IncidentRef.messageId`).
 */
import { createHash } from "node:crypto";
import { isClosing, type LookoutEventDetail, type Severity } from "../../model/event.js";
import type { EmailMessage, IncidentRef, Presentation } from "../types.js";
import {
  type AlertView,
  alertView,
  asDate,
  changesHeading,
  type ChangesView,
  changesView,
  clip,
  clipTexts,
  commitLine,
  digestEntry,
  digestGroupTitle,
  digestOverview,
  heldIntro,
  escapeHtml,
  formatUtc,
  type DigestOptions,
  incidentFacts,
  incidentName,
  inIncident,
  incidentState,
  type LinkFact,
  moreCommits,
  oneLine,
  parseInstant,
  safeHttpUrl,
  severityWords,
} from "../view/index.js";

export interface EmailRenderOptions {
  /** The sender, `lookout@example.com` or `Lookout <lookout@example.com>`; its domain names Message-IDs. */
  from: string;
  to: string[];
  /** The first alert of the incident, for follow-ups (named in the subject, quoted, and in the threading headers). */
  incident?: IncidentRef;
  /**
   * The Message-ID the first alert's email actually went out with, when the transport replaced ours
   * (SES does: it returns its own id). Follow-ups then reply to that; otherwise to the derived one.
   * Defaults to `incident.messageId`.
   */
  firstMessageId?: string;
  /** The Message-ID of the incident's message this one follows, when known: named in References too. */
  previousMessageId?: string;
  /** How the route shows the event: its severity (colour, header) and links (console, logs, runbook); its mentions are Slack tokens, not shown in email. */
  presentation?: Presentation;
}

/** The header carrying the alert id (the .eml file transport names files with it). */
export const ALERT_ID_HEADER = "X-Lookout-Alert-Id";
/** Headers a mail filter can sort on: the incident (its first alert's id), the state, the severity. */
export const INCIDENT_HEADER = "X-Lookout-Incident";
export const STATE_HEADER = "X-Lookout-State";
export const SEVERITY_HEADER = "X-Lookout-Severity";

const SUBJECT_MAX = 200;
/** Any one text of a message, as much as a Slack section shows: the whole value is in the audit trail. */
export const EMAIL_TEXT_MAX = 3000;
/** The groups a digest email shows (what failed where); the rest are counted. */
const EMAIL_DIGEST_GROUPS = 50;
const DIGEST_LINE_MAX = 500;
const DIGEST_LINE_LINKS = 5;

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

/** A subject for what is no incident (Lookout's health, a cancellation of a healthy service). */
export function emailSubject(v: AlertView): string {
  return clip(oneLine(`[Lookout] ${v.transition} ${v.where}${v.what ? ` — ${v.what}` : ""}`), SUBJECT_MAX);
}

/** The one subject of every message of an incident, named from its first alert. */
export function incidentSubject(name: string, openedAt?: string): string {
  // The opening time tells two incidents of one service apart: each is a conversation of its own.
  const opened = openedAt ? parseInstant(openedAt) : undefined;
  const when = opened ? `, opened ${formatUtc(opened).slice(0, 16)} UTC` : "";
  // The name is clipped, never the opening time: two incidents of a long-named service stay two conversations.
  return `${clip(oneLine(`[Lookout] incident: ${name}`), SUBJECT_MAX - when.length)}${when}`;
}

/** The colour of the bar by severity; a close is green and a cancellation grey, whatever the severity. */
const SEVERITY_COLOR: Record<Severity, string> = { critical: "#d93025", error: "#e8710a", warning: "#f9ab00", info: "#1a73e8" };
const RESOLVED_COLOR = "#188038";
const CANCELLED_COLOR = "#9aa0a6";

function barColor(detail: LookoutEventDetail, severity: Severity): string {
  if (isClosing(detail.transition)) return RESOLVED_COLOR;
  if (detail.transition === "cancelled") return CANCELLED_COLOR;
  return SEVERITY_COLOR[severity] ?? "#616061";
}

/** Everything one message says, drawn once for both parts. */
interface EmailView {
  v: AlertView;
  detail: LookoutEventDetail;
  severity: Severity;
  /** FAILED, "RECOVERED, resolved after 14m": the first line and the state header. */
  state: string;
  subject: string;
  first?: LookoutEventDetail;
  facts: { label: string; value: string }[];
  changes?: ChangesView;
  /** The route's links (console, logs, runbook), shown first. */
  routeLinks: LinkFact[];
  /** The event's own links not already shown with the commit or error. */
  otherLinks: LinkFact[];
}

function emailView(detail: LookoutEventDetail, opts: EmailRenderOptions): EmailView {
  const severity = opts.presentation?.severity ?? detail.severity;
  const v = clipTexts(alertView({ ...detail, severity }), EMAIL_TEXT_MAX);
  const first = opts.incident?.first && opts.incident.first.id !== detail.id ? opts.incident.first : undefined;
  const name = incidentName(first ?? detail);
  const routeLinks: LinkFact[] = [];
  for (const l of opts.presentation?.links ?? []) {
    const url = safeHttpUrl(l.url);
    if (url && !routeLinks.some((r) => r.url === url)) routeLinks.push({ label: oneLine(l.label) || "Link", url });
  }
  const shown = new Set([v.commit?.url, v.error?.url, ...routeLinks.map((l) => l.url)]);
  const view: EmailView = {
    v,
    detail,
    severity,
    state: incidentState(detail, v.transition),
    subject: name ? incidentSubject(name, (first ?? detail).incident?.opened_at ?? (first ?? detail).occurred_at) : emailSubject(v),
    facts: [{ label: "Severity", value: severityWords(severity, isClosing(detail.transition)) }, ...v.fields, ...clipTexts(incidentFacts(detail), EMAIL_TEXT_MAX)],
    routeLinks,
    otherLinks: v.links.filter((l) => !shown.has(l.url)),
  };
  if (first) view.first = first;
  const changes = clipTexts(changesView(detail), EMAIL_TEXT_MAX);
  if (changes) view.changes = changes;
  return view;
}

const indent = (text: string, pad: string) => text.split(/\r?\n/).map((l, i) => (i ? pad + l : l)).join("\n");

const headline = (e: EmailView) => `${e.v.emoji} ${e.state} — ${e.v.title}: ${e.v.subject}`;

function changesText(ch: ChangesView): string[] {
  const out = [`What changed: ${changesHeading(ch)}`];
  for (const c of ch.commits) out.push(`  ${commitLine(c)}`, ...(c.url ? [`    ${c.url}`] : []));
  const more = moreCommits(ch);
  if (more) out.push(`  ${more}`);
  if (ch.note) out.push(`Note: ${ch.note}`);
  return [...out, ""];
}

function textPart(e: EmailView): string {
  const { v, first } = e;
  const out: string[] = [];
  out.push(`${headline(e)}${v.place ? ` (${v.place})` : ""}`, "");
  if (first) {
    const at = parseInstant(first.occurred_at);
    out.push(`Follow-up of the alert of ${at ? formatUtc(at) : oneLine(first.occurred_at)}:`, `> ${clip(oneLine(first.summary), EMAIL_TEXT_MAX)}`, "");
  } else if (v.incidentId) {
    out.push(`Follow-up of incident ${v.incidentId}.`, "");
  }
  out.push(v.summary, "");
  if (e.changes) out.push(...changesText(e.changes));

  const rows: [string, string][] = e.facts.map((f) => [f.label, f.value]);
  const c = v.commit;
  if (c) {
    const commitLines = [
      `${c.shortId ?? "(no id)"}${c.tag ? ` (${c.tag})` : ""}${c.author ? ` by ${c.author}` : ""}`,
      ...(c.subject ? [c.subject] : []),
      ...(c.url ? [c.url] : []),
    ];
    rows.push(["Commit", commitLines.join("\n")]);
  }
  const err = v.error;
  if (err) {
    const head = [err.tag, err.step ? `at ${err.step}` : undefined].filter(Boolean).join(" ");
    rows.push(["Error", [head, err.message].filter(Boolean).join(": ") || "error"]);
    if (err.hint) rows.push(["Hint", err.hint]);
    if (err.url) rows.push(["Error docs", err.url]);
  }
  for (const n of v.notes) rows.push([n.label, clip(n.value, 1000)]);
  rows.push(["Occurred", v.occurredAt ? formatUtc(v.occurredAt) : oneLine(v.occurredRaw)]);
  rows.push(["Alert", v.id]);
  if (v.executionId) rows.push(["Execution", v.executionId]);
  if (v.incidentId) rows.push(["Incident", v.incidentId]);
  for (const l of [...e.routeLinks, ...e.otherLinks]) rows.push([l.label, l.url]);

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

const link = (url: string, label: string) => `<a href="${escapeHtml(url)}">${escapeHtml(label)}</a>`;
const multiline = (text: string) => escapeHtml(text).replace(/\r?\n/g, "<br>");
const linkBar = (links: readonly LinkFact[]) => links.map((l) => link(l.url, l.label)).join(" · ");

function changesHtml(ch: ChangesView): string {
  const items = ch.commits.map((c) => {
    const id = c.shortId ? (c.url ? link(c.url, c.shortId) : `<code>${escapeHtml(c.shortId)}</code>`) : c.url ? link(c.url, "commit") : "(no id)";
    const rest = commitLine({ ...c, shortId: "" }).trim();
    return `<li>${id}${rest ? ` ${escapeHtml(rest)}` : ""}</li>`;
  });
  const more = moreCommits(ch);
  if (more) items.push(`<li>${escapeHtml(more)}</li>`);
  return (
    `<p style="margin:0 0 4px 0"><b>What changed:</b> ${escapeHtml(changesHeading(ch))}</p>\n` +
    (items.length ? `<ul style="margin:0 0 12px 0;padding-left:20px">\n${items.join("\n")}\n</ul>\n` : "") +
    (ch.note ? `<p style="margin:0 0 12px 0;color:#616061">Note: ${escapeHtml(ch.note)}</p>\n` : "")
  );
}

function htmlPart(e: EmailView): string {
  const { v, first } = e;
  const color = barColor(e.detail, e.severity);
  const rows: string[] = [];
  const row = (label: string, html: string) =>
    rows.push(`<tr><th style="${STYLE.th}">${escapeHtml(label)}</th><td style="${STYLE.td}">${html}</td></tr>`);

  for (const f of e.facts) row(f.label, escapeHtml(f.value));
  const c = v.commit;
  if (c) {
    const id = c.shortId ? (c.url ? link(c.url, c.shortId) : `<code>${escapeHtml(c.shortId)}</code>`) : c.url ? link(c.url, "commit") : "(no id)";
    const meta = `${c.tag ? ` (${escapeHtml(c.tag)})` : ""}${c.author ? ` by ${escapeHtml(c.author)}` : ""}`;
    row("Commit", `${id}${meta}${c.subject ? `<br>${escapeHtml(c.subject)}` : ""}`);
  }
  const err = v.error;
  if (err) {
    const head = [err.tag, err.step ? `at ${err.step}` : undefined].filter(Boolean).join(" ");
    row("Error", multiline([head, err.message].filter(Boolean).join(": ") || "error"));
    if (err.hint) row("Hint", multiline(err.hint));
    if (err.url) row("Error docs", link(err.url, err.url));
  }
  for (const n of v.notes) row(n.label, `<pre style="${STYLE.pre}">${escapeHtml(clip(n.value, 1000))}</pre>`);
  row("Occurred", escapeHtml(v.occurredAt ? formatUtc(v.occurredAt) : oneLine(v.occurredRaw)));
  row("Alert", `<code>${escapeHtml(v.id)}</code>`);
  if (v.executionId) row("Execution", `<code>${escapeHtml(v.executionId)}</code>`);
  if (v.incidentId) row("Incident", `<code>${escapeHtml(v.incidentId)}</code>`);
  for (const l of e.otherLinks) row(l.label, link(l.url, l.url));

  let quote = "";
  if (first) {
    const at = parseInstant(first.occurred_at);
    quote = `<blockquote style="${STYLE.quote}">Follow-up of the alert of ${escapeHtml(at ? formatUtc(at) : oneLine(first.occurred_at))}:<br>${escapeHtml(clip(oneLine(first.summary), EMAIL_TEXT_MAX))}</blockquote>\n`;
  } else if (v.incidentId) {
    quote = `<blockquote style="${STYLE.quote}">Follow-up of incident <code>${escapeHtml(v.incidentId)}</code>.</blockquote>\n`;
  }

  return [
    "<!DOCTYPE html>",
    `<html><head><meta charset="utf-8"><title>${escapeHtml(e.subject)}</title></head>`,
    `<body style="${STYLE.body}">`,
    // The colour bar: a table cell, which every mail client paints (borders and divs fare worse).
    `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="border-collapse:collapse"><tr>`,
    `<td width="6" bgcolor="${color}" style="width:6px;background:${color}"></td>`,
    `<td style="padding:2px 0 2px 14px">`,
    `<p style="margin:0 0 4px 0;font-size:12px;font-weight:bold;color:${color}">${escapeHtml(`${e.state} · ${isClosing(e.detail.transition) ? `was ${e.severity}` : e.severity}`)}</p>`,
    `<h2 style="margin:0 0 8px 0">${escapeHtml(`${v.emoji} ${v.title}: ${v.subject}`)}${v.place ? ` <span style="color:#616061;font-weight:normal">${escapeHtml(v.place)}</span>` : ""}</h2>`,
    quote + `<p style="margin:0 0 12px 0">${escapeHtml(v.summary)}</p>`,
    ...(e.routeLinks.length ? [`<p style="margin:0 0 12px 0">${linkBar(e.routeLinks)}</p>`] : []),
    ...(e.changes ? [changesHtml(e.changes).trimEnd()] : []),
    `<table style="border-collapse:collapse">\n${rows.join("\n")}\n</table>`,
    `</td></tr></table>`,
    `<p style="${STYLE.foot}">Sent by Lookout.</p>`,
    "</body></html>",
    "",
  ].join("\n");
}

/** Message-IDs as a References value: each once, in order. */
const references = (ids: readonly (string | undefined)[]) => [...new Set(ids.filter((x): x is string => Boolean(x)).map(oneLine))].join(" ");

/**
 * One alert as an email. Every message of an incident has the incident's subject; follow-ups quote the
 * first alert and reply to its message.
 */
export function renderEmail(detail: LookoutEventDetail, opts: EmailRenderOptions): EmailMessage {
  const e = emailView(detail, opts);
  const incidentId = e.first?.id ?? detail.incident_id ?? (inIncident(detail) ? detail.id : undefined);
  const headers: Record<string, string> = {
    "Message-ID": alertMessageId(detail.id, opts.from),
    [ALERT_ID_HEADER]: oneLine(detail.id),
    [STATE_HEADER]: oneLine(e.state),
    [SEVERITY_HEADER]: e.severity,
  };
  if (incidentId) headers[INCIDENT_HEADER] = oneLine(incidentId);
  if (incidentId && incidentId !== detail.id) {
    const firstRef = oneLine(opts.firstMessageId ?? opts.incident?.messageId ?? alertMessageId(incidentId, opts.from));
    // An amendment (the change list) follows the alert it amends.
    const amended = detail.amends && detail.amends !== incidentId ? alertMessageId(detail.amends, opts.from) : undefined;
    headers["In-Reply-To"] = firstRef;
    headers.References = references([firstRef, opts.previousMessageId ?? amended]);
  }
  return { from: opts.from, to: [...opts.to], subject: e.subject, text: textPart(e), html: htmlPart(e), headers };
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
  const intro = `${heldIntro(since, until, label ? `for ${label}` : "for this receiver")}.`;

  const textLines: string[] = [`${alerts} held back`, "", intro, ""];
  const htmlGroups: string[] = [];
  // A flood of distinct subjects is a readable message too: its first groups, and a count of the rest.
  for (const g of groups.slice(0, EMAIL_DIGEST_GROUPS)) {
    // One line each, the title as its entries: 500 characters.
    const title = clip(digestGroupTitle(g), DIGEST_LINE_MAX);
    // Each line's links too: the alert's own and its route's (five at most), none longer than a line (a clipped URL leads
    // nowhere; the alert's own email has them whole).
    const lines = g.details.slice(0, perGroup).map((d) => digestEntry(d, DIGEST_LINE_MAX, opts))
      .map((l) => ({ ...l, links: l.links.filter((k) => k.url.length <= DIGEST_LINE_MAX).slice(0, DIGEST_LINE_LINKS) }));
    const more = g.details.length - lines.length;
    const textLinks = (links: readonly LinkFact[]) => links.map((l) => `    ${l.label}: ${l.url}`);
    textLines.push(title, ...lines.flatMap((l) => [`  • ${l.text}`, ...textLinks(l.links)]), ...(more > 0 ? [`  and ${more} more`] : []), "");
    htmlGroups.push(
      `<h3 style="margin:12px 0 4px 0">${escapeHtml(title)}</h3>\n<ul style="margin:0;padding-left:20px">\n` +
        lines.map((l) => `<li>${escapeHtml(l.text)}${l.links.length ? ` — ${linkBar(l.links)}` : ""}</li>`).join("\n") +
        (more > 0 ? `\n<li>and ${more} more</li>` : "") +
        "\n</ul>",
    );
  }
  const rest = groups.slice(EMAIL_DIGEST_GROUPS);
  if (rest.length) {
    const line = `and ${rest.length} more groups (${rest.reduce((n, g) => n + g.details.length, 0)} alerts): lookout audit lists them`;
    textLines.push(line, "");
    htmlGroups.push(`<p style="margin:12px 0 0 0">${escapeHtml(line)}</p>`);
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

/**
 * An escalation by email (docs/actions.md, "Escalation"): the incident's first alert whole, under the
 * escalation's line, with the incident's subject, its own Message-ID, and a reply to the incident's
 * message where the receiver has one.
 */
export function renderEmailEscalation(first: LookoutEventDetail, escalation: { id: string; after: string }, opts: EmailRenderOptions): EmailMessage {
  // The first alert as the incident's opening: the escalation is its own message, threaded below.
  const { incident: _shown, ...alone } = opts;
  const whole = renderEmail(first, alone);
  const line = `ESCALATED: not acknowledged within ${escalation.after}`;
  const headers: Record<string, string> = {
    ...whole.headers,
    "Message-ID": alertMessageId(escalation.id, opts.from),
    [ALERT_ID_HEADER]: oneLine(escalation.id),
    [STATE_HEADER]: "ESCALATED",
  };
  const parent = opts.firstMessageId;
  if (parent) Object.assign(headers, { "In-Reply-To": oneLine(parent), References: oneLine(parent) });
  const body = `<body style="${STYLE.body}">`;
  return {
    ...whole,
    headers,
    text: `${line}\n\n${whole.text}`,
    html: whole.html.replace(body, `${body}\n<p style="margin:0 0 12px 0;font-weight:bold;color:${SEVERITY_COLOR.critical}">${escapeHtml(line)}</p>`),
  };
}
