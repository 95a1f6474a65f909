/**
 * What the Slack and email renderers share: the facts a responder needs, drawn once from a detail as
 * plain (unescaped) text, and the escapers, link checks and clipping each medium applies to them.
 * Everything here is pure.
 *
 * The escapers are written by hand: each is a fixed table of three or five characters (a dependency
 * would be larger than the code), and Slack's mrkdwn has no escaper package worth the name.
 */
import type { DetailType, LookoutEventDetail } from "../model/event.js";
import { detailTypeOf } from "../model/event.js";

// ---------------------------------------------------------------------------------------------------
// Escaping

/**
 * Slack's three control characters (api.slack.com "Formatting text: escaping text"). `&` first, so
 * the entities made for `<` and `>` are not escaped again. After this no `<` can open a link, a
 * mention (`<!channel>`, `<@U…>`) or a date token, whatever the text.
 */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** U+200B ZERO WIDTH SPACE. */
const ZWSP = "\u200B";

/**
 * For platform text that has to sit inside a `mrkdwn` object (a link label, a digest line): the three
 * control characters escaped, and each formatting character (`*` bold, `_` italic, `~` strike, `` ` ``
 * code) fenced by zero-width spaces. mrkdwn has no backslash escape; a marker only formats when it
 * opens after a boundary and is followed by text, and closes after text and before a boundary. With a
 * ZWSP on both sides neither condition holds, whether Slack counts ZWSP as a letter or as a space.
 * The price is invisible characters in copied text, which is why the renderers keep platform text in
 * `plain_text` objects wherever Block Kit allows one, and use this only where it does not.
 */
export function neutralizeMrkdwn(text: string): string {
  return escapeSlack(text).replace(/[*_~`]/g, (c) => `${ZWSP}${c}${ZWSP}`);
}

/**
 * HTML text and attribute values: the five characters of the HTML spec's "escaping a string" plus the
 * apostrophe, so a value is safe in text and in either kind of quoted attribute.
 */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/**
 * A link from the platform, or undefined when it is not one we may show: only absolute http(s) URLs,
 * without credentials, normalised by the WHATWG URL parser (which percent-encodes spaces, quotes, `<`,
 * `>` and controls). `|` is encoded too, as it would end the URL part of a Slack `<url|label>` link.
 */
export function safeHttpUrl(link: string | undefined, maxLength = 3000): string | undefined {
  if (!link) return undefined;
  let url: URL;
  try {
    url = new URL(link.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  if (url.username || url.password) return undefined;
  const href = url.href.replace(/\|/g, "%7C");
  return href.length <= maxLength ? href : undefined;
}

// ---------------------------------------------------------------------------------------------------
// Text shaping

export const ELLIPSIS = "…";

/**
 * At most `max` UTF-16 units, ending in "…" when shortened; never splits a surrogate pair, and, for
 * text already escaped, never an entity (`&amp;` cut to `&am` would be a bare `&`).
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return "";
  let end = max - ELLIPSIS.length;
  if (end <= 0) return ELLIPSIS.slice(0, max);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1; // a high surrogate whose pair would be cut off
  const amp = text.lastIndexOf("&", end - 1);
  if (amp !== -1 && amp >= end - 10 && /^&(#\d+|#x[0-9a-f]+|[a-z]+);/i.test(text.slice(amp, amp + 12))) {
    const semi = text.indexOf(";", amp);
    if (semi >= end) end = amp; // the entity would straddle the cut
  }
  return text.slice(0, end) + ELLIPSIS;
}

/** One line: line breaks, tabs and other control characters become spaces, runs of spaces one. */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f\u0085\u2028\u2029]+/g, " ").replace(/ {2,}/g, " ").trim();
}

export function firstLine(text: string): string {
  const line = text.split(/\r?\n/).find((l) => l.trim() !== "") ?? "";
  return oneLine(line);
}

/** `PT2M11S` or 131 s → "2m 11s". */
export function formatDuration(sec: number | undefined, iso: string | undefined): string | undefined {
  if (sec === undefined || !Number.isFinite(sec) || sec < 0) return iso;
  const s = Math.round(sec);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  if (h) return `${h}h ${m}m ${r}s`;
  if (m) return `${m}m ${r}s`;
  return `${r}s`;
}

/** A valid instant, or undefined (the platform's clock text is not trusted to parse). */
export function parseInstant(iso: string): Date | undefined {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

/** "2026-03-02 14:07:31 UTC": the same in every time zone, for fallbacks and email. */
export function formatUtc(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

// ---------------------------------------------------------------------------------------------------
// Facts: what a responder needs, medium-neutral

export interface Fact {
  label: string;
  value: string;
}

export interface LinkFact {
  label: string;
  /** Already checked by safeHttpUrl. */
  url: string;
}

export interface CommitView {
  /** The short id shown (the platform's, or the first 7 characters of the id). */
  shortId?: string;
  /** First line of the message. */
  subject?: string;
  author?: string;
  tag?: string;
  url?: string;
}

export interface ErrorView {
  tag?: string;
  step?: string;
  message?: string;
  hint?: string;
  url?: string;
}

/** Everything the renderers show, as plain text: they escape for their medium. */
export interface AlertView {
  detailType: DetailType;
  /** Upper-case, for subjects and headers: FAILED, STILL FAILING, RECOVERED, … */
  transition: string;
  /** "Deployment failed", "Webhook delivery failed", "Lookout health (token rejected)", … */
  title: string;
  emoji: string;
  /** What it is about: the service, cluster, webhook target or health subject. */
  subject: string;
  /** `project/environment`, when known. */
  place?: string;
  /** For email subjects: `environment/subject`, or the subject alone. */
  where: string;
  /** For email subjects: status, error tag or HTTP status. */
  what?: string;
  summary: string;
  fields: Fact[];
  commit?: CommitView;
  error?: ErrorView;
  /** Longer free text: the HTTP answer's excerpt, health detail. */
  notes: Fact[];
  links: LinkFact[];
  occurredAt?: Date;
  occurredRaw: string;
  id: string;
  /** The deployment execution, to find it on the platform. */
  executionId?: string;
  /** The first alert of the incident, when this is a follow-up. */
  incidentId?: string;
}

const SEVERITY_EMOJI: Record<string, string> = { critical: "🚨", error: "🔴", warning: "🟠", info: "🔵" };

const TRANSITION_WORDS: Record<string, [string, string]> = {
  failed: ["FAILED", "Deployment failed"],
  still_failing: ["STILL FAILING", "Deployment still failing"],
  recovered: ["RECOVERED", "Deployment recovered"],
  cancelled: ["CANCELLED", "Deployment cancelled"],
  delivery_failed: ["WEBHOOK FAILED", "Webhook delivery failed"],
  cluster_error: ["CLUSTER ERROR", "Cluster error"],
};

const nameOf = (ref: { id: string; name?: string } | undefined): string | undefined =>
  ref ? (ref.name ?? ref.id) : undefined;

/** The detail-type, or a safe stand-in for a (kind, transition) pair newer than this code. */
export function detailTypeOfDetail(detail: LookoutEventDetail): DetailType {
  try {
    return detailTypeOf(detail.kind, detail.transition);
  } catch {
    return detail.kind === "health" ? "Lookout Health" : "Deployment Failed";
  }
}

export function alertView(detail: LookoutEventDetail): AlertView {
  const detailType = detailTypeOfDetail(detail);
  const words = TRANSITION_WORDS[detail.transition];
  const healthWords = detail.transition.replace(/_/g, " ");
  const transition = words?.[0] ?? (detail.kind === "health" ? `HEALTH ${healthWords.toUpperCase()}` : detail.transition.toUpperCase());
  const title = words?.[1] ?? (detail.kind === "health" ? `Lookout health (${healthWords})` : detailType);
  const emoji =
    detail.transition === "recovered" ? "✅" : detail.transition === "cancelled" ? "⚪" : (SEVERITY_EMOJI[detail.severity] ?? "🔔");

  const project = nameOf(detail.project);
  const environment = nameOf(detail.environment);
  const service = nameOf(detail.service);
  const cluster = nameOf(detail.cluster);
  const host = detail.http?.target_host;
  const place = project && environment ? `${project}/${environment}` : (project ?? environment);

  let subject: string;
  switch (detail.kind) {
    case "webhook_delivery":
      subject = host ?? nameOf(detail.webhook) ?? service ?? "webhook";
      break;
    case "cluster_log":
      subject = cluster ?? "cluster";
      break;
    case "health":
      subject = detail.health?.subject ?? detail.organization.name ?? detail.organization.id;
      break;
    default:
      subject = service ?? "service";
  }
  const where = environment ? `${environment}/${subject}` : subject;

  let what: string | undefined;
  if (detail.kind === "webhook_delivery") {
    what = detail.http?.status_code != null ? `HTTP ${detail.http.status_code}` : (detail.status ?? "no response");
  } else if (detail.kind === "cluster_log") {
    what = detail.error?.tag ?? detail.status;
  } else if (detail.kind === "health") {
    const n = detail.health?.consecutive_failures;
    what = n ? `${n} failure${n === 1 ? "" : "s"} in a row` : undefined;
  } else {
    what = detail.status;
    const n = detail.deployment?.failure_count;
    if (detail.transition === "still_failing" && n) what = `${what ?? "failing"}, ${n} in a row`;
  }

  const fields: Fact[] = [];
  const add = (label: string, value: string | number | undefined | null) => {
    if (value === undefined || value === null || value === "") return;
    fields.push({ label, value: oneLine(String(value)) });
  };
  const typed = (ref: { id: string; name?: string; type?: string } | undefined) =>
    ref ? `${nameOf(ref)}${ref.type ? ` (${ref.type})` : ""}` : undefined;

  if (detail.kind === "health") {
    add("Check", detail.health?.check ?? detail.transition);
    add("Subject", detail.health?.subject);
    add("Failures in a row", detail.health?.consecutive_failures);
  }
  add("Service", typed(detail.service));
  add("Cluster", detail.cluster ? nameOf(detail.cluster) : undefined);
  if (project || environment) {
    add("Project / environment", [project, environment && typed(detail.environment)].filter(Boolean).join(" / "));
  }
  if (detail.kind === "webhook_delivery") {
    add("HTTP status", detail.http ? (detail.http.status_code ?? "no response") : detail.status);
    add("Target host", host);
    add("Webhook", nameOf(detail.webhook));
    add("Event", detail.http?.matched_event);
    add("Webhook kind", detail.http?.delivery_kind);
  } else if (detail.kind !== "health") {
    const prev = detail.deployment?.previous_status;
    add("Status", detail.status ? `${detail.status}${prev ? ` (was ${prev})` : ""}` : undefined);
  }
  const d = detail.deployment;
  if (d) {
    if (d.triggered_by || d.origin) {
      add("Triggered by", d.triggered_by ? `${d.triggered_by}${d.origin ? ` via ${d.origin}` : ""}` : `via ${d.origin}`);
    }
    add("Duration", formatDuration(d.duration_sec, d.duration));
    add(detail.transition === "recovered" ? "Failures before recovery" : "Failures in a row", d.failure_count);
  }
  add("Organization", detail.organization.name ?? detail.organization.id);

  let commit: CommitView | undefined;
  const c = d?.commit;
  if (c) {
    const shortId = c.short_id ?? c.id?.slice(0, 7);
    commit = {};
    if (shortId) commit.shortId = oneLine(shortId);
    if (c.message) commit.subject = firstLine(c.message);
    if (c.author) commit.author = oneLine(c.author);
    if (c.tag) commit.tag = oneLine(c.tag);
    const url = safeHttpUrl(c.link);
    if (url) commit.url = url;
  }

  let error: ErrorView | undefined;
  const e = detail.error;
  if (e && (e.tag || e.message || e.hint || e.step || e.link)) {
    error = {};
    if (e.tag) error.tag = oneLine(e.tag);
    if (e.step) error.step = oneLine(e.step);
    if (e.message) error.message = e.message.trim();
    if (e.hint) error.hint = e.hint.trim();
    const url = safeHttpUrl(e.link);
    if (url) error.url = url;
  }

  const notes: Fact[] = [];
  if (detail.http?.response_excerpt) notes.push({ label: "Response", value: detail.http.response_excerpt.trim() });
  if (detail.health?.detail) notes.push({ label: "Detail", value: detail.health.detail.trim() });

  const links: LinkFact[] = [];
  const addLink = (label: string, url: string | undefined) => {
    if (url && !links.some((l) => l.url === url)) links.push({ label, url });
  };
  addLink("View commit", commit?.url);
  addLink("Error docs", error?.url);
  addLink("Open link", safeHttpUrl(detail.link));

  const view: AlertView = {
    detailType,
    transition,
    title,
    emoji,
    subject: oneLine(subject),
    where: oneLine(where),
    summary: oneLine(detail.summary),
    fields,
    notes,
    links,
    occurredRaw: detail.occurred_at,
    id: detail.id,
  };
  if (place) view.place = oneLine(place);
  if (what) view.what = oneLine(what);
  if (commit) view.commit = commit;
  if (error) view.error = error;
  const at = parseInstant(detail.occurred_at);
  if (at) view.occurredAt = at;
  if (detail.incident_id && detail.incident_id !== detail.id) view.incidentId = detail.incident_id;
  if (d?.execution_id) view.executionId = oneLine(d.execution_id);
  return view;
}

/** "12:07:31 UTC" style short time for digest lines. */
export function formatTimeOfDay(date: Date): string {
  return `${date.toISOString().slice(11, 19)} UTC`;
}

/** Groups of held alerts for a digest: by detail-type and subject, largest first, order kept within. */
export interface DigestGroup {
  detailType: DetailType;
  subject: string;
  place?: string;
  severity: LookoutEventDetail["severity"];
  details: LookoutEventDetail[];
}

const SEVERITY_RANK: Record<string, number> = { critical: 0, error: 1, warning: 2, info: 3 };

export function digestGroups(held: readonly LookoutEventDetail[]): DigestGroup[] {
  const groups = new Map<string, DigestGroup>();
  for (const detail of held) {
    const v = alertView(detail);
    const key = `${v.detailType}\u0000${v.place ?? ""}\u0000${v.subject}`;
    let g = groups.get(key);
    if (!g) {
      g = { detailType: v.detailType, subject: v.subject, severity: detail.severity, details: [] };
      if (v.place) g.place = v.place;
      groups.set(key, g);
    }
    if ((SEVERITY_RANK[detail.severity] ?? 9) < (SEVERITY_RANK[g.severity] ?? 9)) g.severity = detail.severity;
    g.details.push(detail);
  }
  return [...groups.values()].sort(
    (a, b) =>
      (SEVERITY_RANK[a.severity] ?? 9) - (SEVERITY_RANK[b.severity] ?? 9) ||
      b.details.length - a.details.length ||
      a.detailType.localeCompare(b.detailType) ||
      a.subject.localeCompare(b.subject),
  );
}

export const asDate = (d: Date | string): Date => (typeof d === "string" ? new Date(d) : d);

/** When each held alert (by id) was held, and when its digest goes out: the digest says how long each waited. */
export interface HeldTimes {
  heldAt?: Readonly<Record<string, string>>;
  sentAt?: Date | string;
}

/** "3m 07s", "45s", "2h 05m": how long an alert waited for its digest. */
export function formatWait(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

/** One line of a digest: when it happened, its summary (clipped), and how long it was held back. */
export function digestLine(d: LookoutEventDetail, clipAt: number, times: HeldTimes = {}): string {
  const at = parseInstant(d.occurred_at);
  const heldAt = times.heldAt?.[d.id];
  const wait = heldAt && times.sentAt ? ` (held ${formatWait(asDate(times.sentAt).getTime() - Date.parse(heldAt))})` : "";
  return `${at ? `${formatTimeOfDay(at)} ` : ""}${clip(oneLine(d.summary), clipAt)}${wait}`;
}

/** What every digest says first: its groups, "N alerts", and the count per detail-type. */
export function digestOverview(held: readonly LookoutEventDetail[]): { groups: DigestGroup[]; alerts: string; tally: string } {
  const groups = digestGroups(held);
  const byType = new Map<string, number>();
  for (const g of groups) byType.set(g.detailType, (byType.get(g.detailType) ?? 0) + g.details.length);
  return {
    groups,
    alerts: `${held.length} alert${held.length === 1 ? "" : "s"}`,
    tally: [...byType.entries()].map(([t, c]) => `${c} ${t}`).join(", "),
  };
}
