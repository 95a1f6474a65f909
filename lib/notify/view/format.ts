/**
 * Text shaping shared by every view and renderer: clipping, one-line text, times and durations, the
 * names of platform objects. Pure; nothing here escapes (escape.ts does, per medium).
 */

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

/**
 * A copy of a view with every text in it clipped to `max` (`clip`), URLs apart: those are bounded where
 * they are made (`safeHttpUrl`), and a clipped one would lead nowhere. For media that set no limit of
 * their own (email): a platform value of 300,000 characters is for the audit trail, not a message.
 */
export function clipTexts<T>(value: T, max: number): T {
  const walk = (v: unknown, key?: string): unknown => {
    if (typeof v === "string") return key === "url" ? v : clip(v, max);
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    }
    return v;
  };
  return walk(value) as T;
}

/** One line: line breaks, tabs and other control characters become spaces, runs of spaces one. */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f\u0085\u2028\u2029]+/g, " ").replace(/ {2,}/g, " ").trim();
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };
/** What an HTML page has and other text does not (`expected <id>` is no page). */
const HTML_PAGE = /<(!doctype\b|html\b|head\b|body\b|title\b|h[1-6]\b|p\b|div\b|br\b|pre\b|center\b|hr\b|span\b|script\b|style\b)/i;
const codePoint = (n: number) => (n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : "");

/**
 * A webhook target's answer as a person reads it: an HTML page's words (its tags, scripts, styles and
 * comments out, the common entities decoded, on one line); any other answer as sent. The renderers
 * escape the result as any platform text. Written by hand: it reads an excerpt of a few hundred
 * characters, and an HTML-to-text package would add far more to every notify bundle's cold start.
 */
export function answerText(body: string): string {
  if (!HTML_PAGE.test(body)) return body.trim();
  const words = oneLine(
    body
      .replace(/<(script|style)\b[\s\S]*?(<\/\1\s*>|$)/gi, " ")
      .replace(/<!--[\s\S]*?(-->|$)/g, " ")
      .replace(/<[^>]*(>|$)/g, " ")
      .replace(/&(amp|lt|gt|quot|apos|nbsp|#\d{1,7}|#x[0-9a-f]{1,6});/gi, (_, e: string) =>
        e[0] !== "#" ? ENTITIES[e.toLowerCase()] ?? "" : codePoint(e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : Number(e.slice(1)))),
  );
  return words || "(an HTML page with no text)";
}

/** The first line that is not blank, as one line: a commit message's subject. */
export function firstLine(text: string): string {
  const line = text.split(/\r?\n/).find((l) => l.trim() !== "") ?? "";
  return oneLine(line);
}

/**
 * How long a deployment ran, `PT2M11S` or 131 s → "2m 11s": the seconds when valid, else the
 * platform's own text. (Not lib/config's formatDuration, which writes configuration durations.)
 */
export function formatElapsed(sec: number | undefined, iso: string | undefined): string | undefined {
  if (sec === undefined || !Number.isFinite(sec) || sec < 0) return iso;
  const s = Math.round(sec);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  if (h) return `${h}h ${m}m ${r}s`;
  if (m) return `${m}m ${r}s`;
  return `${r}s`;
}

/** How long an incident lasted, to the minute once past one: "14m", "2h 5m", "1d 3h", "45s". */
export function formatSpan(sec: number | undefined): string | undefined {
  if (sec === undefined || !Number.isFinite(sec) || sec < 0) return undefined;
  const s = Math.round(sec);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h${m % 60 ? ` ${m % 60}m` : ""}`;
  return `${Math.floor(h / 24)}d${h % 24 ? ` ${h % 24}h` : ""}`;
}

/** 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st… */
export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" } as Record<number, string>)[n % 10] ?? "th";
  return `${n}${suffix}`;
}

/** "3m 07s", "45s", "2h 05m": how long an alert waited for its digest. */
export function formatWait(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

/** A valid instant, or undefined (the platform's clock text is not trusted to parse). */
export function parseInstant(iso: string): Date | undefined {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

export const asDate = (d: Date | string): Date => (typeof d === "string" ? new Date(d) : d);

/** "2026-03-02 14:07:31 UTC": the same in every time zone, for fallbacks and email. */
export function formatUtc(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** "12:07:31 UTC" style short time for digest lines. */
export function formatTimeOfDay(date: Date): string {
  return `${date.toISOString().slice(11, 19)} UTC`;
}

/** A platform object as people know it: its name, else its id. */
export const nameOf = (ref: { id: string; name?: string } | undefined): string | undefined =>
  ref ? (ref.name ?? ref.id) : undefined;

/** Its name and, when known, its type: "api (web)". */
export const typedNameOf = (ref: { id: string; name?: string; type?: string } | undefined): string | undefined =>
  ref ? `${nameOf(ref)}${ref.type ? ` (${ref.type})` : ""}` : undefined;

/** The severity as people read it: a close says it is resolved, and what its incident was. */
export const severityWords = (severity: string, closing: boolean): string => (closing ? `resolved (was ${severity})` : severity);
