/**
 * A Slack message as terminal text, for one machine when no Slack receiver is configured: the same
 * Block Kit message Lookout would post, shown readably (colour bar, header, fields, context, links),
 * indented when it is a thread reply.
 */
import type { SlackMessage } from "../../lib/notify/types.js";

type TextObj = { type?: string; text?: string };
type BlockLike = {
  type?: string;
  text?: TextObj;
  fields?: TextObj[];
  elements?: Array<{ type?: string; url?: string; text?: TextObj | string }>;
};

/** Slack's entities and link syntax back to plain text. */
function plainText(text: string | undefined): string {
  return (text ?? "")
    .replace(/<!date\^\d+\^[^|]*\|([^>]*)>/g, "$1")
    .replace(/<(https?:[^|>]+)\|([^>]+)>/g, "$2 ($1)")
    .replace(/<!subteam\^([A-Z0-9]+)(\|[^>]*)?>/g, "@group:$1")
    .replace(/<!(here|channel|everyone)>/g, "@$1")
    .replace(/<@([A-Z0-9]+)>/g, "@$1")
    // Our own bold labels (*Warning*); the platform's asterisks are fenced by zero-width spaces and stay.
    .replace(/\*([^*\u200b\n]+)\*/g, "$1")
    .replace(/\u200b/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

/** The colour bar as the terminal can show it: a coloured square nearest the bar's hue. */
function barOf(color: string | undefined): string {
  const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color ?? "");
  if (!m) return "▌";
  const [r, g, b] = [m[1]!, m[2]!, m[3]!].map((h) => parseInt(h, 16)) as [number, number, number];
  if (g > r && g >= b) return "🟩";
  if (b > r && b > g) return "🟦";
  if (g < r * 0.4) return "🟥";
  return g < r * 0.7 ? "🟧" : "🟨";
}

function blockLines(blocks: readonly unknown[], bar: string): string[] {
  const lines: string[] = [];
  for (const block of blocks as BlockLike[]) {
    // As written: upper-casing would change what the platform named (a cluster id, a service name).
    if (block.type === "header") lines.push(`${bar} ${plainText(block.text?.text)}`);
    if (block.type === "section") {
      if (block.text) lines.push(...plainText(block.text.text).split("\n").map((l) => `${bar} ${l}`));
      for (const f of block.fields ?? []) lines.push(`${bar}   ${plainText(f.text).replace(/\n/g, ": ")}`);
    }
    if (block.type === "context") lines.push(`${bar} ${(block.elements ?? []).map((e) => plainText(typeof e.text === "string" ? e.text : e.text?.text)).join("  ·  ")}`);
    if (block.type === "actions") {
      const buttons: string[] = [];
      for (const e of block.elements ?? []) {
        const label = typeof e.text === "string" ? e.text : e.text?.text;
        if (e.url) lines.push(`${bar} → ${plainText(label)}: ${e.url}`);
        else buttons.push(`[${plainText(label)}]`);
      }
      // Buttons that act (acknowledge, mute: docs/actions.md) on one line, as Slack lays them out.
      if (buttons.length) lines.push(`${bar} ${buttons.join(" ")}`);
    }
  }
  return lines;
}

export interface PrintForm {
  /** The receiver, as the first line names it. */
  receiver?: string;
  /** What the message is: a new message, a reply in a thread, an edit of an earlier message. */
  as?: "message" | "reply" | "update";
  /** For a reply or an edit: one line naming the message it belongs to. */
  of?: string;
}

export function slackAsText(message: SlackMessage, form: PrintForm | string = {}): string[] {
  const f: PrintForm = typeof form === "string" ? { receiver: form } : form;
  const receiver = f.receiver ?? "slack";
  const as = f.as ?? (message.thread_ts ? "reply" : "message");
  const head =
    as === "reply"
      ? `↳ ${receiver}, reply in the thread of "${f.of ?? message.thread_ts}"${message.reply_broadcast ? " (also sent to the channel)" : ""}`
      : as === "update"
        ? `✎ ${receiver}, edited in place: "${f.of ?? "an earlier message"}"`
        : receiver;
  const indent = as === "reply" ? "    " : "";
  const lines = [`┌─ ${head}`, ...blockLines(message.blocks, "│")];
  for (const a of message.attachments ?? []) lines.push(...blockLines(a.blocks, `│${barOf(a.color)}`));
  if (lines.length === 1) lines.push(`│ ${plainText(message.text)}`);
  lines.push("└─");
  return lines.map((l) => indent + l);
}

/** The first line a person would read of a message: its header, else its fallback text. */
export function slackTitle(message: SlackMessage): string {
  const header = [...message.blocks, ...(message.attachments ?? []).flatMap((a) => a.blocks)].find((b) => (b as BlockLike).type === "header") as BlockLike | undefined;
  const title = plainText(header?.text?.text ?? message.text).split("\n")[0]!;
  return title.length > 80 ? `${title.slice(0, 79)}…` : title;
}
