/**
 * What every digest says, whatever its medium: the held alerts grouped by detail-type and subject,
 * counted, and one line per alert saying when it happened and how long it was held. Pure.
 */
import type { DetailType, LookoutEventDetail } from "../../model/event.js";
import { alertView } from "./alert.js";
import { safeHttpUrl } from "./escape.js";
import type { LinkFact } from "./types.js";
import { asDate, clip, formatTimeOfDay, formatUtc, formatWait, oneLine, parseInstant } from "./format.js";

/** Groups of held alerts for a digest: by detail-type and subject; most severe, failures before their amendments, then largest first; order kept within. */
export interface DigestGroup {
  detailType: DetailType;
  subject: string;
  place?: string;
  severity: LookoutEventDetail["severity"];
  details: LookoutEventDetail[];
}

const SEVERITY_RANK: Record<string, number> = { critical: 0, error: 1, warning: 2, info: 3 };
const rank = (severity: string) => SEVERITY_RANK[severity] ?? 9;

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
    if (rank(detail.severity) < rank(g.severity)) g.severity = detail.severity;
    g.details.push(detail);
  }
  // Each group's entries in the order they happened (they were held in the order they arrived).
  const at = (d: LookoutEventDetail) => parseInstant(d.occurred_at)?.getTime() ?? 0;
  for (const g of groups.values()) g.details.sort((a, b) => at(a) - at(b));
  // What failed before what only amends it (a failure's "what changed"), within a severity.
  const amendsOnly = (g: DigestGroup) => (g.details.every((d) => d.amends !== undefined) ? 1 : 0);
  return [...groups.values()].sort(
    (a, b) =>
      rank(a.severity) - rank(b.severity) ||
      amendsOnly(a) - amendsOnly(b) ||
      b.details.length - a.details.length ||
      a.detailType.localeCompare(b.detailType) ||
      a.subject.localeCompare(b.subject),
  );
}

/** When each held alert (by id) was held, and when its digest goes out: the digest says how long each waited. */
export interface HeldTimes {
  heldAt?: Readonly<Record<string, string>>;
  sentAt?: Date | string;
}

/** What every digest renderer takes besides its channel's own fields. */
export interface DigestOptions extends HeldTimes {
  /** Summaries listed per group before "and K more" (each channel has its default). */
  perGroup?: number;
  /**
   * The links a route's presentation gives an alert (console, logs, runbook), for its digest line;
   * `(d) => presenter(d, route).links`. Without it a line has only the event's own link.
   */
  links?: (detail: LookoutEventDetail) => ReadonlyArray<{ label: string; url: string }>;
}

/** One digest line and its links: the event's own link first, then the presentation's; all http(s). */
export interface DigestEntry {
  text: string;
  links: LinkFact[];
}

/** The links of a digest line: the event's own (as "Open"), then the presentation's, checked and deduplicated. */
export function digestLinks(d: LookoutEventDetail, opts: Pick<DigestOptions, "links"> = {}): LinkFact[] {
  const out: LinkFact[] = [];
  const add = (label: string, link: string | undefined) => {
    const url = safeHttpUrl(link);
    if (url && !out.some((l) => l.url === url)) out.push({ label: oneLine(label) || "Link", url });
  };
  add("Open", d.link);
  for (const l of opts.links?.(d) ?? []) add(l.label, l.url);
  return out;
}

/** A digest line with its links (the renderers write the links in their medium). */
export function digestEntry(d: LookoutEventDetail, clipAt: number, opts: DigestOptions = {}): DigestEntry {
  return { text: digestLine(d, clipAt, opts), links: digestLinks(d, opts) };
}

/** One line of a digest: when it happened, its summary (clipped), and how long it was held back. */
export function digestLine(d: LookoutEventDetail, clipAt: number, times: HeldTimes = {}): string {
  const at = parseInstant(d.occurred_at);
  const heldAt = times.heldAt?.[d.id];
  const wait = heldAt && times.sentAt ? ` (held ${formatWait(asDate(times.sentAt).getTime() - Date.parse(heldAt))})` : "";
  return `${at ? `${formatTimeOfDay(at)} ` : ""}${clip(oneLine(d.summary), clipAt)}${wait}`;
}

/**
 * The digest's first sentence: when, and why alerts were held — a receiver's rate budget, or an
 * incident's follow-ups past the few posted at once (docs/architecture.md, "Receivers' rate"); one
 * instant reads as one.
 */
export function heldIntro(from: Date, to: Date, forWhom: string): string {
  const when = formatUtc(from) === formatUtc(to) ? `At ${formatUtc(from)}` : `Between ${formatUtc(from)} and ${formatUtc(to)}`;
  return `${when} more alerts came ${forWhom} than it posts at once (its rate budget, or an incident's follow-ups past the first few). Lookout held them back and lists them here instead of dropping them`;
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

/** A group's heading: "🔴 Deployment Failed · shop/prod · api — 12". */
export function digestGroupTitle(g: DigestGroup): string {
  const v0 = alertView(g.details[0]!);
  return `${v0.emoji} ${g.detailType} · ${g.place ? `${g.place} · ` : ""}${g.subject} — ${g.details.length}`;
}
