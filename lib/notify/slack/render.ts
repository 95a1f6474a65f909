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
 * LIMITS (Block Kit): 50 blocks a message, header 150 characters, section text 3000, a field 2000,
 * 10 fields a section, 10 context elements, button text 75 and URL 3000. Text is clipped (ending in "…")
 * after escaping, never inside an entity; extra fields go into another section; extra blocks are cut,
 * with a last context block saying so.
 */
import type { LookoutEventDetail } from "../../model/event.js";
import type { IncidentRef, SlackMessage } from "../types.js";
import {
  type AlertView,
  alertView,
  asDate,
  clip,
  digestGroupTitle,
  digestLine,
  digestOverview,
  escapeSlack,
  formatUtc,
  type DigestOptions,
  neutralizeMrkdwn,
  oneLine,
  parseInstant,
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
export type Block =
  | { type: "header"; text: PlainText }
  | { type: "section"; text?: PlainText | Mrkdwn; fields?: (PlainText | Mrkdwn)[]; accessory?: LinkButton }
  | { type: "context"; elements: (PlainText | Mrkdwn)[] }
  | { type: "actions"; elements: LinkButton[] }
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

/** Links not already shown as a section's button, as one actions block. */
function actionsBlock(v: AlertView, shown: Set<string>): Block | undefined {
  const rest = v.links.filter((l) => !shown.has(l.url));
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

/** Enforces the 50-block limit: cuts, and says so in a last context block. */
export function clipBlocks(blocks: Block[]): Block[] {
  if (blocks.length <= SLACK_LIMITS.blocks) return blocks;
  const kept = blocks.slice(0, SLACK_LIMITS.blocks - 1);
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
}

/** Fields a thread reply leaves out: the first alert in the thread above already says them. */
const KNOWN_IN_THREAD = new Set(["Service", "Project / environment", "Organization", "Cluster"]);

export function renderSlackAlert(detail: LookoutEventDetail, opts: SlackRenderOptions = {}): SlackMessage {
  const v = alertView(detail);
  const mode = opts.mode ?? "full";
  const text = fallbackText(detail.summary);

  if (mode === "thread") {
    const commit = commitBlock(v);
    const error = errorBlock(v);
    const blocks = compact<Block>([
      { type: "section", text: plain(`${v.emoji} ${v.title} — ${v.summary}`) },
      ...fieldSections(v.fields.filter((f) => !KNOWN_IN_THREAD.has(f.label))),
      commit,
      error,
      ...noteBlocks(v, 300),
      timeContext(v),
    ]);
    const actions = actionsBlock(v, accessoryUrls(blocks));
    return message(text, compact([...blocks, actions]));
  }

  const body = compact<Block>([
    { type: "section", text: plain(v.summary) },
    ...fieldSections(v.fields),
    commitBlock(v),
    errorBlock(v),
    ...noteBlocks(v),
    timeContext(v),
  ]);
  const actions = actionsBlock(v, accessoryUrls(body));
  const blocks: Block[] = [headerBlock(v)];
  if (mode === "quote") blocks.push(quoteBlock(v, opts.incident));
  return message(text, compact([...blocks, ...body, actions]));
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
}

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

  const head: Block[] = [
    { type: "header", text: plain(`⏸ ${alerts} held back for ${oneLine(opts.channelLabel)}`, SLACK_LIMITS.headerText) },
    {
      type: "section",
      text: plain(
        `Between ${formatUtc(from)} and ${formatUtc(to)} more alerts came for this channel than its rate budget allows. ` +
          `Lookout held them back and lists them here instead of dropping them${tally ? `: ${tally}` : ""}.`,
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
    const lines = g.details.slice(0, perGroup).map((d) => `• ${digestLine(d, 300, opts)}`);
    const more = g.details.length - lines.length;
    if (more > 0) lines.push(`and ${more} more`);
    return { type: "section", text: plain([title, ...lines].join("\n")) };
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
    escapeSlack(oneLine(`Lookout held back ${alerts} for ${opts.channelLabel} between ${formatUtc(from)} and ${formatUtc(to)}${tally ? `: ${tally}` : ""}`)),
    SLACK_LIMITS.fallbackText,
  );
  return message(text, [...head, ...groupBlocks, tail]);
}
