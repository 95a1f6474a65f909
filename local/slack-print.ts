/**
 * A Slack message as terminal text, for one machine when no Slack receiver is configured: the same
 * Block Kit message Lookout would post, shown readably (header, fields, context, links).
 */
import type { SlackMessage } from "../lib/notify/types.js";

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
    .replace(/\u200b/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

export function slackAsText(message: SlackMessage, receiver = "slack"): string[] {
  const lines: string[] = [`┌─ ${receiver}${message.thread_ts ? ` (in thread ${message.thread_ts})` : ""}`];
  for (const block of message.blocks as BlockLike[]) {
    if (block.type === "header") lines.push(`│ ${plainText(block.text?.text).toUpperCase()}`);
    if (block.type === "section") {
      if (block.text) lines.push(...plainText(block.text.text).split("\n").map((l) => `│ ${l}`));
      for (const f of block.fields ?? []) lines.push(`│   ${plainText(f.text).replace(/\n/g, ": ")}`);
    }
    if (block.type === "context") lines.push(`│ ${(block.elements ?? []).map((e) => plainText(typeof e.text === "string" ? e.text : e.text?.text)).join("  ·  ")}`);
    if (block.type === "actions") {
      for (const e of block.elements ?? []) {
        const label = typeof e.text === "string" ? e.text : e.text?.text;
        if (e.url) lines.push(`│ → ${plainText(label)}: ${e.url}`);
      }
    }
  }
  lines.push("└─");
  return lines;
}
