/**
 * Slack Block Kit rendering of Lookout events: pure functions from a detail to a SlackMessage.
 *
 * ESCAPING. Every string that came from the platform (names, statuses, commit messages, authors, error
 * text, HTTP excerpts, summaries) is untrusted. The rules:
 *  1. It goes into `plain_text` objects wherever Block Kit allows one (header, section text and fields,
 *     context elements, button labels). Slack never parses plain_text for mrkdwn formatting, links or
 *     mentions, so `*deploy*` shows as typed and nothing copied from the message gains invisible
 *     characters. `emoji: false`, so `:fire:` in a commit message stays text (our own emoji are Unicode).
 *  2. `&`, `<` and `>` are escaped to entities in every text object and in the fallback `text`
 *     (`escapeSlack`), plain_text included: they are Slack's control characters, and the fallback text is
 *     what notifications show, so `<!channel>` must not survive anywhere.
 *  3. `mrkdwn` is used only for what needs it — our own labels, `<!date^…>` tokens and links — with
 *     `verbatim: true` so Slack does not auto-link or auto-mention. Platform text inside mrkdwn (a
 *     commit id as a link label) is escaped and has its formatting characters fenced by zero-width
 *     spaces (`neutralizeMrkdwn`).
 *  4. Links are absolute http(s) URLs only, without credentials, normalised (`safeHttpUrl`); in mrkdwn
 *     they are escaped as well. Anything else (javascript:, slack://, relative) is not shown as a link.
 *
 * SHAPE. A message is its top blocks (the mentions its route asks for, the header) and one legacy
 * attachment whose `color` is the severity's bar, holding the body's blocks; `text` stays the fallback.
 * Mentions are tokens the Presentation gives (Lookout's configuration), checked against Slack's
 * mention syntax, never built from platform text.
 *
 * LIMITS (Block Kit): 50 blocks a message (the attachment's count), header 150 characters, section text 3000, a field 2000,
 * 10 fields a section, 10 context elements, button text 75 and URL 3000. Text is clipped (ending in "…")
 * after escaping, never inside an entity; extra fields go into another section; extra blocks are cut,
 * with a last context block saying so.
 */
import type { LookoutEventDetail, Severity } from "../../model/event.js";
import { type IncidentRef, plainPresentation, type Presentation, type SlackMessage } from "../types.js";
import { buttonValue, INCIDENT_ACTIONS } from "../../model/incident-action.js";
import {
  type AlertView,
  alertView,
  asDate,
  type ChangesView,
  emojiOf,
  type LinkFact,
  ordinal,
  safeHttpUrl,
  clip,
  digestGroupTitle,
  digestEntry,
  digestOverview,
  heldIntro,
  escapeSlack,
  formatUtc,
  type DigestOptions,
  neutralizeMrkdwn,
  oneLine,
  parseInstant,
  moreCommits,
  severityWords,
  resolutionLine,
} from "../view/index.js";

export const SLACK_LIMITS = {
  blocks: 50,
  headerText: 150,
  sectionText: 3000,
  fieldText: 2000,
  fields: 10,
  contextElements: 10,
  buttonText: 75,
  buttonUrl: 3000,
  actionsElements: 25,
  /** Not a Block Kit limit: we keep the notification text to one readable line. */
  fallbackText: 3000,
} as const;

// --- Block Kit shapes used here (a small subset of @slack/types, kept local and exact) --------------

export interface PlainText {
  type: "plain_text";
  text: string;
  emoji: boolean;
}
export interface Mrkdwn {
  type: "mrkdwn";
  text: string;
  verbatim: boolean;
}
export interface LinkButton {
  type: "button";
  text: PlainText;
  url: string;
  action_id: string;
}
/** A button that asks Lookout to act (docs/actions.md): Slack posts the click to the interactivity endpoint. */
export interface ActionButton {
  type: "button";
  text: PlainText;
  action_id: string;
  value: string;
  style?: "primary" | "danger";
}
export type Block =
  | { type: "header"; text: PlainText }
  | { type: "section"; text?: PlainText | Mrkdwn; fields?: (PlainText | Mrkdwn)[]; accessory?: LinkButton }
  | { type: "context"; elements: (PlainText | Mrkdwn)[] }
  | { type: "actions"; block_id?: string; elements: Array<LinkButton | ActionButton> }
  | { type: "divider" };

/** Untrusted (or any) text as an escaped, clipped plain_text object. */
export function plain(text: string, max: number = SLACK_LIMITS.sectionText): PlainText {
  return { type: "plain_text", text: clip(escapeSlack(text), max), emoji: false };
}

/** mrkdwn that the caller has built from our own text and escaped parts only. */
function md(safeText: string, max: number = SLACK_LIMITS.sectionText): Mrkdwn {
  return { type: "mrkdwn", text: clip(safeText, max), verbatim: true };
}

function button(label: string, url: string, actionId: string): LinkButton {
  return { type: "button", text: plain(label, SLACK_LIMITS.buttonText), url, action_id: actionId };
}

/**
 * A Slack date token: readers see the time in their own time zone; clients that cannot render it
 * show the UTC fallback. An unparseable platform time is shown as text, escaped.
 */
export function slackDate(iso: string, prefix = ""): string {
  const at = parseInstant(iso);
  if (!at) return `${prefix}${neutralizeMrkdwn(oneLine(iso))}`;
  const unix = Math.floor(at.getTime() / 1000);
  return `<!date^${unix}^${prefix}{date_short_pretty} at {time_secs}|${prefix}${formatUtc(at)}>`;
}

/** A link in mrkdwn: the URL checked (http/https) and escaped, the label neutralised. */
export function slackLink(url: string, label: string): string {
  return `<${escapeSlack(url)}|${neutralizeMrkdwn(label)}>`;
}

// --- Pieces ----------------------------------------------------------------------------------------

const fieldText = (f: { label: string; value: string }) => plain(`${f.label}: ${f.value}`, SLACK_LIMITS.fieldText);

function fieldSections(fields: { label: string; value: string }[]): Block[] {
  const out: Block[] = [];
  for (let i = 0; i < fields.length; i += SLACK_LIMITS.fields) {
    out.push({ type: "section", fields: fields.slice(i, i + SLACK_LIMITS.fields).map(fieldText) });
  }
  return out;
}

function headerBlock(v: AlertView): Block {
  const where = v.place ? ` · ${v.place}` : "";
  return { type: "header", text: plain(`${v.emoji} ${v.title}: ${v.subject}${where}`, SLACK_LIMITS.headerText) };
}

function commitBlock(v: AlertView): Block | undefined {
  const c = v.commit;
  if (!c) return undefined;
  const lines = [
    `Commit ${c.shortId ?? "(no id)"}${c.tag ? ` (${c.tag})` : ""}${c.author ? ` by ${c.author}` : ""}`,
    ...(c.subject ? [c.subject] : []),
  ];
  const block: Block = { type: "section", text: plain(lines.join("\n")) };
  if (c.url) block.accessory = button(c.shortId ? `Commit ${c.shortId}` : "View commit", c.url, "lookout_commit");
  return block;
}

function errorBlock(v: AlertView): Block | undefined {
  const e = v.error;
  if (!e) return undefined;
  const head = [e.tag, e.step ? `at ${e.step}` : undefined].filter(Boolean).join(" ");
  const lines = [
    [head, e.message].filter(Boolean).join(": ") || "Error",
    ...(e.hint ? [`Hint: ${e.hint}`] : []),
  ];
  const block: Block = { type: "section", text: plain(lines.join("\n")) };
  if (e.url) block.accessory = button("Error docs", e.url, "lookout_error_docs");
  return block;
}

/** "What changed": at most five commits (short id linked, author, first line) and "+N more". */
function changesBlock(c: ChangesView | undefined): Block | undefined {
  if (!c) return undefined;
  const lines = c.commits.map((commit) => {
    const id = commit.shortId ?? "(no id)";
    const shown = commit.url ? slackLink(commit.url, id) : neutralizeMrkdwn(id);
    const rest = [commit.author, commit.subject].filter(Boolean).join(" — ");
    // Each line is bounded, so five of them and the heading always fit one section.
    return `• ${shown}${rest ? ` ${neutralizeMrkdwn(clip(rest, 300))}` : ""}`;
  });
  if (c.more > 0 || c.atLeast) lines.push(`${moreCommits(c)} commit${c.more === 1 && !c.atLeast ? "" : "s"}`);
  if (!c.commits.length && !c.more) lines.push("No commits listed.");
  if (c.note) lines.push(`Note: ${neutralizeMrkdwn(clip(c.note, 300))}`);
  return { type: "section", text: md(["*What changed*", ...lines].join("\n")) };
}

function noteBlocks(v: AlertView, excerptMax = 600): Block[] {
  return v.notes.map((n) => ({ type: "section", text: plain(`${n.label}: ${clip(n.value, excerptMax)}`) }));
}

function timeContext(v: AlertView, extra: (PlainText | Mrkdwn)[] = []): Block {
  const elements: (PlainText | Mrkdwn)[] = [md(slackDate(v.occurredRaw, "Occurred "))];
  elements.push(plain(`alert ${v.id}`, 200));
  if (v.executionId) elements.push(plain(`execution ${v.executionId}`, 200));
  if (v.incidentId) elements.push(plain(`incident ${v.incidentId}`, 200));
  return { type: "context", elements: [...elements, ...extra].slice(0, SLACK_LIMITS.contextElements) };
}

/** The route's links (console, logs, runbook) first, then the event's own; only safe http(s) URLs. */
function linksOf(v: AlertView, p: Presentation): LinkFact[] {
  const out: LinkFact[] = [];
  for (const l of [...p.links, ...v.links]) {
    const url = safeHttpUrl(l.url, SLACK_LIMITS.buttonUrl);
    if (url && !out.some((o) => o.url === url)) out.push({ label: oneLine(l.label) || "Open", url });
  }
  return out;
}

/** Links not already shown as a section's button, as one actions block. */
function actionsBlock(links: LinkFact[], shown: Set<string>): Block | undefined {
  const rest = links.filter((l) => !shown.has(l.url));
  if (!rest.length) return undefined;
  return {
    type: "actions",
    elements: rest
      .slice(0, SLACK_LIMITS.actionsElements)
      .map((l, i) => button(l.label, l.url, `lookout_link_${i}`)),
  };
}

const compact = <T>(xs: (T | undefined)[]): T[] => xs.filter((x): x is T => x !== undefined);

function accessoryUrls(blocks: Block[]): Set<string> {
  const s = new Set<string>();
  for (const b of blocks) if (b.type === "section" && b.accessory) s.add(b.accessory.url);
  return s;
}

/** Enforces the 50-block limit (`max` when other blocks share it): cuts, and says so in a last context block. */
export function clipBlocks(blocks: Block[], max: number = SLACK_LIMITS.blocks): Block[] {
  if (blocks.length <= max) return blocks;
  const kept = blocks.slice(0, max - 1);
  const cut = blocks.length - kept.length;
  kept.push({ type: "context", elements: [plain(`${cut} more block${cut === 1 ? "" : "s"} not shown (Slack's limit).`)] });
  return kept;
}

/**
 * The fallback `text`: the summary on one line, with `&`, `<`, `>` escaped so it can neither mention nor
 * link. Its formatting characters are left as they are: with blocks present Slack shows the blocks and
 * uses `text` for notifications and screen readers, which do not render mrkdwn, and zero-width spaces
 * there would break searching for a status like BUILD_ERROR.
 */
function fallbackText(summary: string): string {
  return clip(escapeSlack(oneLine(summary)), SLACK_LIMITS.fallbackText);
}

function message(text: string, blocks: Block[]): SlackMessage {
  return { text, blocks: clipBlocks(blocks), unfurl_links: false, unfurl_media: false };
}

/** The colour bar: critical red, error orange, warning yellow, info (and every resolution) green. */
export const SEVERITY_COLOR: Record<Severity, string> = { critical: "#E01E5A", error: "#F2711C", warning: "#ECB22E", info: "#2EB67D" };
const RESOLVED_COLOR = SEVERITY_COLOR.info;

/** Slack's mention tokens Lookout may write: @here, @channel, a user group, a user. Anything else is dropped. */
const MENTION = /^<(!here|!channel|!subteam\^[A-Z0-9]{2,30}|@[UW][A-Z0-9]{2,30})>$/;
export const mentionsOf = (p: Presentation): string[] => p.mentions.filter((m) => MENTION.test(m)).slice(0, 20);

/** Mentions as a message carries them: a section of their own on top, and the lead of the fallback text (what notifications show). */
function mentioning(mentions: readonly string[]): { lead: string; blocks: Block[] } {
  return mentions.length ? { lead: `${mentions.join(" ")} `, blocks: [{ type: "section", text: md(mentions.join(" ")) }] } : { lead: "", blocks: [] };
}

/**
 * A message with a colour bar: the top blocks (mentions, header) outside, the body in one attachment
 * with the colour, both within the 50 blocks Slack counts together. Mentions lead the fallback text too,
 * which is what notifications show.
 */
function barred(text: string, top: Block[], body: Block[], color: string, mentions: string[] = []): SlackMessage {
  const { lead, blocks } = mentioning(mentions);
  const head: Block[] = [...blocks, ...top];
  return {
    text: clip(`${lead}${text}`, SLACK_LIMITS.fallbackText),
    blocks: head,
    attachments: [{ color, blocks: clipBlocks(body, SLACK_LIMITS.blocks - head.length), fallback: text }],
    unfurl_links: false,
    unfurl_media: false,
  };
}

/** Severity and where the event stands in its incident: "Critical · 3rd failure · opened … · repeat". */
function incidentContext(v: AlertView, severity: Severity): Block {
  const words = severityWords(severity, v.closing);
  const elements: (PlainText | Mrkdwn)[] = [md(`*${words[0]!.toUpperCase()}${words.slice(1)}*`)];
  const i = v.incident;
  if (i) {
    if (i.failures) elements.push(plain(v.closing ? `${i.failures} failure${i.failures === 1 ? "" : "s"} in all` : `${ordinal(i.failures)} failure`, 200));
    elements.push(md(slackDate(i.openedRaw, "opened ")));
    if (i.repeat) elements.push(plain("repeat", 50));
  }
  return { type: "context", elements };
}

/** What closed the incident: "✅ resolved after 14m · by HTTP 200 · 5 failures". */
const resolutionText = resolutionLine;

// --- Public renderers --------------------------------------------------------------------------------

export type SlackRenderMode = "full" | "thread" | "quote";

export interface SlackRenderOptions {
  /** The first alert of the incident, for follow-ups. */
  incident?: IncidentRef;
  /**
   * "full" (default): a first alert, self-contained. "thread": a compact reply for the thread of the
   * first alert (Web API form). "quote": a fresh, self-contained message that quotes the first alert,
   * for the incoming-webhook form, which can neither reply in a thread nor learn a message's ts.
   */
  mode?: SlackRenderMode;
  /** How the route shows it: severity (the colour), mentions, links. Absent: the event as raised. */
  presentation?: Presentation;
  /** An amendment's changes, shown in the alert it amends ("What changed"). */
  changes?: ChangesView;
  /**
   * The incident's buttons (acknowledge, mute), on the message that stands for an incident where
   * Slack actions are configured; and who acknowledged it, once someone did.
   */
  incidentActions?: IncidentActions;
}

export interface IncidentActions {
  incidentId: string;
  acknowledged?: { userId: string; at: string };
}

/** A Slack user id as Slack writes it: only such an id is mentioned (`<@U…>`); anything else is not Slack's. */
const SLACK_USER_ID = /^[UW][A-Z0-9]{2,20}$/;

/** Acknowledge (until someone has), mute for an hour, mute until the incident resolves. */
function incidentActionBlocks(detail: LookoutEventDetail, a: IncidentActions): Block[] {
  const value = buttonValue(a.incidentId, detail.id);
  const act = (label: string, actionId: string, style?: ActionButton["style"]): ActionButton =>
    ({ type: "button", text: plain(label, SLACK_LIMITS.buttonText), action_id: actionId, value, ...(style ? { style } : {}) });
  const buttons = [
    ...(a.acknowledged ? [] : [act("👀 Acknowledge", INCIDENT_ACTIONS.acknowledge, "primary")]),
    act("🔕 Mute 1h", INCIDENT_ACTIONS.mute_1h),
    act("🔕 Mute until resolved", INCIDENT_ACTIONS.mute_until_resolved),
  ];
  return compact<Block>([acknowledgedBlock(a.acknowledged), { type: "actions", block_id: "lookout_incident", elements: buttons }]);
}

/** "👀 Acknowledged by @x <when>": on the open message after a press, and kept on its resolved form. */
function acknowledgedBlock(ack: IncidentActions["acknowledged"]): Block | undefined {
  if (!ack) return undefined;
  const who = SLACK_USER_ID.test(ack.userId) ? `<@${ack.userId}>` : escapeSlack(oneLine(ack.userId));
  return { type: "context", elements: [md(`👀 Acknowledged by ${who} ${slackDate(ack.at)}`)] };
}

/** Fields a thread reply leaves out: the first alert in the thread above already says them. */
const KNOWN_IN_THREAD = new Set(["Service", "Project / environment", "Organization", "Cluster"]);

/** The alert's view with the route's severity in its emoji. */
function viewOf(detail: LookoutEventDetail, p: Presentation): AlertView {
  const v = alertView(detail);
  return { ...v, emoji: emojiOf(detail.transition, p.severity) };
}

export function renderSlackAlert(detail: LookoutEventDetail, opts: SlackRenderOptions = {}): SlackMessage {
  const p = opts.presentation ?? plainPresentation(detail);
  const v = viewOf(detail, p);
  if (opts.changes) v.changes = opts.changes;
  const mode = opts.mode ?? "full";
  const text = fallbackText(detail.summary);
  const color = v.closing ? RESOLVED_COLOR : (SEVERITY_COLOR[p.severity] ?? SEVERITY_COLOR.error);
  const links = linksOf(v, p);
  const resolution: Block | undefined = v.closing ? { type: "section", text: plain(resolutionText(v)) } : undefined;

  if (mode === "thread") {
    const body = compact<Block>([
      resolution,
      ...fieldSections(v.fields.filter((f) => !KNOWN_IN_THREAD.has(f.label))),
      commitBlock(v),
      errorBlock(v),
      changesBlock(v.changes),
      ...noteBlocks(v, 300),
      incidentContext(v, p.severity),
      timeContext(v),
    ]);
    const top: Block = { type: "section", text: plain(`${v.emoji} ${v.title} — ${v.summary}`) };
    return barred(text, [top], compact([...body, actionsBlock(links, accessoryUrls(body))]), color, mentionsOf(p));
  }

  const body = compact<Block>([
    resolution,
    { type: "section", text: plain(v.summary) },
    ...fieldSections(v.fields),
    commitBlock(v),
    errorBlock(v),
    changesBlock(v.changes),
    ...noteBlocks(v),
    incidentContext(v, p.severity),
    timeContext(v),
  ]);
  const actions = actionsBlock(links, accessoryUrls(body));
  const head: Block[] = [headerBlock(v)];
  if (mode === "quote") head.push(quoteBlock(v, opts.incident));
  const incidentActions = opts.incidentActions && !v.closing ? incidentActionBlocks(detail, opts.incidentActions) : [];
  return barred(text, head, compact([...body, ...incidentActions, actions]), color, mentionsOf(p));
}

/**
 * An incident's first message once it closed (chat.update): green, "✅ Resolved after 14m", what
 * resolved it and how many failures it saw, above what the first message said. No mention: an edit
 * notifies nobody, and the page is over.
 */
export function renderSlackResolved(first: LookoutEventDetail, closing: LookoutEventDetail, presentation?: Presentation, changes?: ChangesView, acknowledged?: IncidentActions["acknowledged"]): SlackMessage {
  const p = presentation ?? plainPresentation(first);
  // The opening's count of failures is the resolution's to tell now ("5 failures"): not shown twice.
  const opened = alertView(first);
  const v = { ...opened, fields: opened.fields.filter((f) => f.label !== "Failures in a row") };
  const closed = alertView(closing);
  const where = v.place ? ` · ${v.place}` : "";
  const header: Block = { type: "header", text: plain(`✅ Resolved · ${v.title}: ${v.subject}${where}`, SLACK_LIMITS.headerText) };
  const body = compact<Block>([
    { type: "section", text: plain(resolutionText(closed)) },
    { type: "section", text: plain(v.summary) },
    ...fieldSections(v.fields),
    commitBlock(v),
    changesBlock(changes),
    errorBlock(v),
    { type: "context", elements: [md(slackDate(closing.occurred_at, "Resolved ")), plain(`resolved by alert ${closing.id}`, 200)] },
    // Who was on it stays on the record people see.
    acknowledgedBlock(acknowledged),
    timeContext(v),
  ]);
  const text = clip(escapeSlack(oneLine(`${resolutionText(closed)}: ${first.summary}`)), SLACK_LIMITS.fallbackText);
  return barred(text, [header], compact([...body, actionsBlock(linksOf(v, p), accessoryUrls(body))]), RESOLVED_COLOR);
}

/** What an escalation says first: nobody acknowledged the incident in time (docs/actions.md, "Escalation"). */
export const escalationLine = (after: string): string => `🚨 Escalated: not acknowledged within ${after}`;

/**
 * An escalation (docs/actions.md, "Escalation"), calling the escalation's mentions (the presentation's):
 * in the incident's thread, a short reply naming it (broadcast by the sender); elsewhere a message of its
 * own that shows the incident whole under the escalation's line.
 */
export function renderSlackEscalation(first: LookoutEventDetail, after: string, opts: { presentation?: Presentation; thread: boolean }): SlackMessage {
  const p = opts.presentation ?? plainPresentation(first);
  const line = escalationLine(after);
  const banner: Block = { type: "section", text: plain(line) };
  if (opts.thread) {
    const v = viewOf(first, p);
    const body: Block[] = [{ type: "section", text: plain(`${v.emoji} ${v.title} — ${v.summary}`) }, incidentContext(v, p.severity)];
    return barred(fallbackText(`${line}: ${first.summary}`), [banner], body, SEVERITY_COLOR[p.severity] ?? SEVERITY_COLOR.error, mentionsOf(p));
  }
  const whole = renderSlackAlert(first, { presentation: p });
  // After the mentions' section, when there is one: the escalation's line heads what the incident says.
  const lead = mentionsOf(p).length ? 1 : 0;
  const blocks = [...whole.blocks.slice(0, lead), banner, ...whole.blocks.slice(lead)] as Block[];
  const attachments = whole.attachments?.map((a) => ({ ...a, blocks: clipBlocks(a.blocks as Block[], SLACK_LIMITS.blocks - blocks.length) }));
  return { ...whole, text: clip(`${line}: ${whole.text}`, SLACK_LIMITS.fallbackText), blocks, ...(attachments ? { attachments } : {}) };
}

/** A repeat in the incident's thread: one short counted line ("same error again — 3rd time"). */
export function renderSlackRepeat(detail: LookoutEventDetail): SlackMessage {
  const n = detail.incident?.failures;
  const line = `🔁 Same error again${n ? ` — ${ordinal(n)} time` : ""}`;
  const blocks: Block[] = [
    { type: "section", text: plain(line) },
    { type: "context", elements: [md(slackDate(detail.occurred_at, "Occurred ")), plain(`alert ${detail.id}`, 200)] },
  ];
  return message(clip(escapeSlack(`${line}: ${oneLine(detail.summary)}`), SLACK_LIMITS.fallbackText), blocks);
}

/** The "follow-up of" lines that stand in for a thread: when the incident began, and its first summary. */
function quoteBlock(v: AlertView, incident: IncidentRef | undefined): Block {
  const first = incident?.first;
  if (!first) {
    return {
      type: "context",
      elements: [md("↪ *Follow-up of an earlier alert*"), plain(`incident ${v.incidentId ?? v.id}`, 200)],
    };
  }
  return {
    type: "context",
    elements: [
      md(`↪ *Follow-up of* the alert of ${slackDate(first.occurred_at)}`),
      plain(`“${oneLine(first.summary)}”`, 1000),
    ],
  };
}

/** Five summaries per group by default. */
export interface SlackDigestOptions extends DigestOptions {
  /** Where the digest goes, for people: "#ops-alerts", a route name. */
  channelLabel: string;
  from: Date | string;
  to: Date | string;
  /**
   * How each held alert's route shows it: a digest calls whom its alerts would have called on their own
   * (a held critical failure keeps its @here), once each. Absent: no mention.
   */
  presentationOf?: (d: LookoutEventDetail) => Presentation;
}

/** Whom a digest calls: every mention its held alerts' routes give them, once each, in the order first met. */
export const digestMentions = (held: readonly LookoutEventDetail[], presentationOf?: (d: LookoutEventDetail) => Presentation): string[] =>
  presentationOf ? [...new Set(held.flatMap((d) => mentionsOf(presentationOf(d))))].slice(0, 20) : [];

/**
 * ONE message for everything a storm held back from a channel: groups by detail-type and subject
 * (service, cluster, webhook host), most severe and largest first, with counts, the first few summaries
 * of each group and "and K more". Always within Block Kit's limits, however many were held.
 */
export function renderSlackDigest(held: readonly LookoutEventDetail[], opts: SlackDigestOptions): SlackMessage {
  const from = asDate(opts.from);
  const to = asDate(opts.to);
  const perGroup = Math.max(1, opts.perGroup ?? 5);
  const { groups, alerts, tally } = digestOverview(held);

  const mentions = mentioning(digestMentions(held, opts.presentationOf));
  const head: Block[] = [
    ...mentions.blocks,
    { type: "header", text: plain(`⏸ ${alerts} held back for ${oneLine(opts.channelLabel)}`, SLACK_LIMITS.headerText) },
    {
      type: "section",
      text: plain(
        `${heldIntro(from, to, "for this channel")}${tally ? `: ${tally}` : ""}.`,
      ),
    },
  ];
  const tail: Block = {
    type: "context",
    elements: [md(`Storm digest · ${slackDate(from.toISOString(), "from ")} · ${slackDate(to.toISOString(), "to ")}`)],
  };

  const room = SLACK_LIMITS.blocks - head.length - 1 - 1; // header+intro, tail, and a possible "more groups" line
  const shown = groups.slice(0, room);
  const groupBlocks: Block[] = shown.map((g) => {
    const title = digestGroupTitle(g);
    const entries = g.details.slice(0, perGroup).map((d) => digestEntry(d, 300, opts));
    const more = g.details.length - entries.length;
    const tail = more > 0 ? [`and ${more} more`] : [];
    // Plain text unless a line has links: then mrkdwn, the platform's text neutralised as in "What changed".
    if (!entries.some((e) => e.links.length)) return { type: "section", text: plain([title, ...entries.map((e) => `• ${e.text}`), ...tail].join("\n")) };
    const lines = entries.map((e) => `• ${neutralizeMrkdwn(e.text)}${e.links.length ? ` ${e.links.slice(0, 3).map((l) => slackLink(l.url, l.label)).join(" · ")}` : ""}`);
    return { type: "section", text: md([neutralizeMrkdwn(title), ...lines, ...tail].join("\n")) };
  });
  const hiddenGroups = groups.slice(room);
  if (hiddenGroups.length) {
    const k = hiddenGroups.reduce((s, g) => s + g.details.length, 0);
    groupBlocks.push({
      type: "section",
      text: plain(`and ${hiddenGroups.length} more group${hiddenGroups.length === 1 ? "" : "s"} with ${k} alert${k === 1 ? "" : "s"}`),
    });
  }

  const text = clip(
    `${mentions.lead}${escapeSlack(oneLine(`Lookout held back ${alerts} for ${opts.channelLabel} between ${formatUtc(from)} and ${formatUtc(to)}${tally ? `: ${tally}` : ""}`))}`,
    SLACK_LIMITS.fallbackText,
  );
  return message(text, [...head, ...groupBlocks, tail]);
}
