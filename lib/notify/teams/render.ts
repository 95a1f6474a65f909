/**
 * Microsoft Teams through a Workflows webhook (Power Automate's "When a Teams webhook request is
 * received"; the Office 365 connectors are retired): pure functions from a detail to the message the
 * flow posts, `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive",
 * "content": <Adaptive Card 1.4>}]}` (docs/receivers.md, "Microsoft Teams").
 *
 * NO EDITS, NO THREADS. The flow posts a new message and tells nobody its id, so an incident is shown
 * as email shows it without threads: every follow-up, amendment and the close is a new card that
 * quotes the incident's first alert ("↪ Follow-up of the alert of …"), the close led by "✅ Resolved
 * after 14m". A repeat is not posted (the delivery core records it as suppressed; the close counts it).
 *
 * ESCAPING. TextBlock and FactSet text is Adaptive Card markdown (a CommonMark subset: emphasis, lists,
 * links) with `{{DATE(…)}}`/`{{TIME(…)}}` functions. Platform text goes through `escapeCardText`: each
 * character that opens markdown (emphasis, code, link brackets, autolinks) backslash-escaped, list and
 * heading markers at a line's start escaped (a link needs its `[`, so parentheses stay as written), and `{{`
 * broken by a zero-width space, so nothing the platform says becomes a link, a format or a date.
 * Links are Action.OpenUrl with safe http(s) URLs only.
 */
import { isClosing, type LookoutEventDetail, type Severity } from "../../model/event.js";
import type { IncidentRef, Presentation } from "../types.js";
import {
  type AlertView,
  alertView,
  changesHeading,
  clip,
  commitLine,
  emojiOf,
  formatUtc,
  heldIntro,
  incidentFacts,
  incidentName,
  incidentState,
  moreCommits,
  oneLine,
  parseInstant,
  resolutionLine,
  safeHttpUrl,
  severityWords,
  digestGroupTitle,
  digestOverview,
  digestEntry,
  asDate,
  type DigestOptions,
} from "../view/index.js";

export const ADAPTIVE_CARD_VERSION = "1.4";
/** Teams refuses a message over about 28 KB; cards are kept well below it. */
export const TEAMS_MESSAGE_MAX_BYTES = 24 * 1024;
const TEXT_MAX = 2000;
const ACTIONS_MAX = 6;

export interface TeamsMessage {
  type: "message";
  attachments: Array<{ contentType: "application/vnd.microsoft.card.adaptive"; contentUrl: null; content: AdaptiveCard }>;
}

export interface AdaptiveCard {
  $schema: string;
  type: "AdaptiveCard";
  version: string;
  body: CardElement[];
  actions?: Array<{ type: "Action.OpenUrl"; title: string; url: string }>;
  msteams?: { width: "Full" };
}

export type CardElement = Record<string, unknown> & { type: string };

const ZWSP = "\u200B";

/** Platform text made inert in Adaptive Card markdown (see the module's comment). */
export function escapeCardText(text: string): string {
  return text
    .replace(/[\\`*_~[\]<>]/g, (c) => `\\${c}`)
    .replace(/^(\s*)([-+#])(?=\s|#)/gm, "$1\\$2")
    .replace(/^(\s*\d+)\.(?=\s)/gm, "$1\\.")
    .replace(/\{\{/g, `{${ZWSP}{`);
}

const SEVERITY_STYLE: Record<Severity, string> = { critical: "attention", error: "attention", warning: "warning", info: "accent" };
const SEVERITY_COLOR: Record<Severity, string> = { critical: "Attention", error: "Attention", warning: "Warning", info: "Accent" };

const text = (t: string, extra: Record<string, unknown> = {}): CardElement => ({ type: "TextBlock", text: clip(t, TEXT_MAX), wrap: true, ...extra });
const facts = (rows: Array<{ label: string; value: string }>): CardElement | undefined =>
  rows.length ? { type: "FactSet", facts: rows.map((r) => ({ title: escapeCardText(clip(oneLine(r.label), 100)), value: escapeCardText(clip(r.value, 500)) })) } : undefined;
const compact = <T>(xs: Array<T | undefined>): T[] => xs.filter((x): x is T => x !== undefined);

function card(body: CardElement[], links: Array<{ label: string; url: string }>): TeamsMessage {
  const actions = links.slice(0, ACTIONS_MAX).map((l) => ({ type: "Action.OpenUrl" as const, title: clip(oneLine(l.label), 40) || "Link", url: l.url }));
  const content: AdaptiveCard = {
    $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
    type: "AdaptiveCard",
    version: ADAPTIVE_CARD_VERSION,
    body,
    ...(actions.length ? { actions } : {}),
    msteams: { width: "Full" },
  };
  return { type: "message", attachments: [{ contentType: "application/vnd.microsoft.card.adaptive", contentUrl: null, content }] };
}

function linksOf(v: AlertView, p: Presentation | undefined): Array<{ label: string; url: string }> {
  const out: Array<{ label: string; url: string }> = [];
  for (const l of [...(p?.links ?? []), ...v.links]) {
    const url = safeHttpUrl(l.url);
    if (url && !out.some((x) => x.url === url)) out.push({ label: l.label, url });
  }
  return out;
}

/** The lines that stand in for a thread: the incident's first alert, quoted. */
function quote(detail: LookoutEventDetail, incident: IncidentRef | undefined): CardElement | undefined {
  const first = incident?.shown !== false ? (incident?.root ?? incident?.first) : undefined;
  if (!first || first.id === detail.id) return undefined;
  const at = parseInstant(first.occurred_at);
  return {
    type: "Container",
    style: "emphasis",
    items: [
      text(`↪ Follow-up of the alert of ${at ? formatUtc(at) : escapeCardText(oneLine(first.occurred_at))}`, { isSubtle: true, size: "Small" }),
      text(`“${escapeCardText(oneLine(first.summary))}”`, { isSubtle: true }),
    ],
  };
}

export interface TeamsRenderOptions {
  incident?: IncidentRef;
  presentation?: Presentation;
}

/** One alert as a card: the opening, a follow-up or amendment quoting the incident, or its close. */
export function renderTeamsAlert(detail: LookoutEventDetail, opts: TeamsRenderOptions = {}): TeamsMessage {
  const severity = opts.presentation?.severity ?? detail.severity;
  const v = { ...alertView({ ...detail, severity }), emoji: emojiOf(detail.transition, severity) };
  const closing = isClosing(detail.transition);
  const name = incidentName(opts.incident?.first ?? detail);
  const headline = `${v.emoji} ${incidentState(detail, v.transition)} — ${v.title}: ${v.subject}`;
  const style = closing ? "good" : detail.transition === "cancelled" ? "default" : SEVERITY_STYLE[severity];
  const ch = v.changes;
  const body = compact<CardElement>([
    {
      type: "Container",
      style,
      bleed: true,
      items: compact([
        text(escapeCardText(headline), { weight: "Bolder", size: "Medium", color: closing ? "Good" : SEVERITY_COLOR[severity] }),
        name ? text(escapeCardText(`Incident: ${name}`), { isSubtle: true, spacing: "None" }) : undefined,
      ]),
    },
    quote(detail, opts.incident),
    closing ? text(escapeCardText(resolutionLine(v)), { weight: "Bolder", color: "Good" }) : undefined,
    text(escapeCardText(v.summary)),
    ch ? text(escapeCardText(`What changed: ${changesHeading(ch)}`), { weight: "Bolder" }) : undefined,
    ch?.commits.length ? text(ch.commits.map((c) => `• ${escapeCardText(commitLine(c))}`).join("\n\n")) : undefined,
    ch && moreCommits(ch) ? text(escapeCardText(moreCommits(ch)!), { isSubtle: true }) : undefined,
    facts([
      { label: "Severity", value: severityWords(severity, closing) },
      ...v.fields,
      ...incidentFacts(detail),
      ...(v.commit ? [{ label: "Commit", value: commitLine(v.commit) }] : []),
      ...(v.error ? [{ label: "Error", value: [[v.error.tag, v.error.step ? `at ${v.error.step}` : undefined].filter(Boolean).join(" "), v.error.message].filter(Boolean).join(": ") || "error" }] : []),
      ...(v.error?.hint ? [{ label: "Hint", value: v.error.hint }] : []),
      ...v.notes.map((n) => ({ label: n.label, value: n.value })),
      { label: "Occurred", value: v.occurredAt ? formatUtc(v.occurredAt) : oneLine(v.occurredRaw) },
      { label: "Alert", value: v.id },
      ...(v.executionId ? [{ label: "Execution", value: v.executionId }] : []),
      ...(v.incidentId ? [{ label: "Incident", value: v.incidentId }] : []),
    ]),
  ]);
  return bounded(body, linksOf(v, opts.presentation));
}

/** Past the size Teams takes, the facts' long values and then the facts themselves give way. */
function bounded(body: CardElement[], links: Array<{ label: string; url: string }>): TeamsMessage {
  let message = card(body, links);
  if (Buffer.byteLength(JSON.stringify(message)) <= TEAMS_MESSAGE_MAX_BYTES) return message;
  const shorter = body.map((e) =>
    e.type === "FactSet" ? { ...e, facts: (e.facts as Array<{ title: string; value: string }>).map((f) => ({ ...f, value: clip(f.value, 120) })) } : e.type === "TextBlock" ? { ...e, text: clip(String(e.text), 600) } : e,
  );
  message = card(shorter, links);
  if (Buffer.byteLength(JSON.stringify(message)) <= TEAMS_MESSAGE_MAX_BYTES) return message;
  // Then the facts, then the last elements, until it fits: a card Teams refuses would say nothing.
  const kept = shorter.filter((e) => e.type !== "FactSet");
  message = card(kept, links);
  while (kept.length > 1 && Buffer.byteLength(JSON.stringify(message)) > TEAMS_MESSAGE_MAX_BYTES) {
    kept.pop();
    message = card(kept, links);
  }
  return message;
}

export interface TeamsDigestOptions extends DigestOptions {
  label: string;
  from: Date | string;
  to: Date | string;
}

/** ONE card for everything a storm held back: grouped, counted, the first summaries of each group. */
export function renderTeamsDigest(held: readonly LookoutEventDetail[], opts: TeamsDigestOptions): TeamsMessage {
  const perGroup = Math.max(1, opts.perGroup ?? 5);
  const { groups, alerts, tally } = digestOverview(held);
  const body: CardElement[] = [
    text(escapeCardText(`⏸ ${alerts} held back${tally ? ` — ${tally}` : ""}`), { weight: "Bolder", size: "Medium" }),
    text(escapeCardText(`${heldIntro(asDate(opts.from), asDate(opts.to), `for ${opts.label}`)}.`), { isSubtle: true }),
  ];
  // A storm of many subjects is one card of bounded size: the first groups, then how many more.
  for (const g of groups.slice(0, TEAMS_DIGEST_GROUPS)) {
    const lines = g.details.slice(0, perGroup).map((d) => digestEntry(d, 300, opts));
    const more = g.details.length - lines.length;
    body.push(
      text(escapeCardText(digestGroupTitle(g)), { weight: "Bolder" }),
      text([...lines.map((l) => `• ${escapeCardText(l.text)}`), ...(more > 0 ? [`and ${more} more`] : [])].join("\n\n")),
    );
  }
  const hidden = groups.slice(TEAMS_DIGEST_GROUPS);
  if (hidden.length) {
    const k = hidden.reduce((n, g) => n + g.details.length, 0);
    body.push(text(`and ${hidden.length} more group${hidden.length === 1 ? "" : "s"} with ${k} alert${k === 1 ? "" : "s"}`, { isSubtle: true }));
  }
  return bounded(body, []);
}

/** The groups a digest card lists (Teams refuses a message past about 28 KB). */
export const TEAMS_DIGEST_GROUPS = 20;
