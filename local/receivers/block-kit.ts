/**
 * Block Kit's limits, as Slack enforces them (its `invalid_blocks` answer), for every message the
 * Slack tests and goldens render and for what the Slack test receiver accepts: 50 blocks a message
 * (top blocks and an attachment's counted together), header 150 characters and plain_text, section
 * text 3000, 10 fields of 2000 each, context 10 elements, button text 75 and URL 3000 (http(s) only),
 * 25 elements an actions block, and a non-empty fallback text.
 */

interface TextObject {
  type?: string;
  text?: string;
}
interface Button {
  type?: string;
  text?: TextObject;
  url?: string;
}
interface AnyBlock {
  type?: string;
  text?: TextObject;
  fields?: TextObject[];
  elements?: Array<TextObject & Button>;
  accessory?: Button;
}

const len = (t: TextObject | undefined) => (t?.text ?? "").length;

function buttonProblem(where: string, b: Button): string | undefined {
  if (b.type !== "button") return undefined;
  if (len(b.text) === 0) return `${where}: button without text`;
  if (len(b.text) > 75) return `${where}: button text longer than 75`;
  if (b.url !== undefined) {
    if (b.url.length > 3000) return `${where}: button url longer than 3000`;
    if (!/^https?:\/\//.test(b.url)) return `${where}: button url is not http(s)`;
  }
  return undefined;
}

/** The first limit these blocks break, or undefined. `offset`: blocks already counted before them. */
export function blockKitProblem(blocks: unknown, offset = 0): string | undefined {
  if (blocks === undefined) return undefined;
  if (!Array.isArray(blocks)) return "blocks is not an array";
  if (blocks.length + offset > 50) return `${blocks.length + offset} blocks (max 50)`;
  for (const [i, b] of (blocks as AnyBlock[]).entries()) {
    const at = `block ${i + offset}`;
    if (b.type === "header") {
      if (b.text?.type !== "plain_text") return `${at}: header text must be plain_text`;
      if (len(b.text) > 150) return `${at}: header longer than 150`;
    }
    if (b.type === "section") {
      if (!b.text && !b.fields) return `${at}: section without text or fields`;
      if (len(b.text) > 3000) return `${at}: section text longer than 3000`;
      if (b.fields && b.fields.length > 10) return `${at}: more than 10 fields`;
      if (b.fields?.some((f) => len(f) > 2000)) return `${at}: field longer than 2000`;
      if (b.accessory) {
        const p = buttonProblem(`${at} accessory`, b.accessory);
        if (p) return p;
      }
    }
    if (b.type === "context" && (b.elements?.length ?? 0) > 10) return `${at}: more than 10 context elements`;
    if (b.type === "context" && b.elements?.some((e) => len(e) > 3000)) return `${at}: context element longer than 3000`;
    if (b.type === "actions") {
      if ((b.elements?.length ?? 0) > 25) return `${at}: more than 25 actions`;
      for (const e of b.elements ?? []) {
        const p = buttonProblem(at, e);
        if (p) return p;
      }
    }
  }
  return undefined;
}

/** A whole message as Slack takes it: its fallback text, its blocks and its attachments' blocks. */
export function slackMessageProblem(message: { text?: unknown; blocks?: unknown; attachments?: unknown }): string | undefined {
  if (typeof message.text !== "string" || !message.text.trim()) return "no fallback text";
  const top = message.blocks === undefined ? [] : message.blocks;
  const p = blockKitProblem(top);
  if (p) return p;
  if (message.attachments === undefined) return undefined;
  if (!Array.isArray(message.attachments)) return "attachments is not an array";
  let counted = Array.isArray(top) ? top.length : 0;
  for (const a of message.attachments as Array<{ blocks?: unknown; color?: unknown; fallback?: unknown }>) {
    if (a.color !== undefined && !/^#[0-9A-Fa-f]{6}$/.test(String(a.color))) return `attachment colour ${String(a.color)}`;
    if (a.fallback !== undefined && !String(a.fallback).trim()) return "attachment with an empty fallback";
    const q = blockKitProblem(a.blocks, counted);
    if (q) return q;
    counted += Array.isArray(a.blocks) ? a.blocks.length : 0;
  }
  return undefined;
}
