/**
 * Platform timestamps → instants (docs/platform.md, "Timestamps"). Pure. A time is parsed before it is
 * compared or sorted: as text, `+02:00` offsets, missing zones and nanoseconds order wrongly. A time that
 * cannot be read, or is implausible (before 1970, or more than a day ahead of Lookout's clock), is
 * ordered by when Lookout saw it instead, so one odd entry can neither hide later records nor be lost.
 */

/** An instant: epoch milliseconds, and the nanoseconds within that millisecond (timestamps carry them). */
export interface Instant {
  ms: number;
  nanos: number;
}

/** How far ahead of Lookout's clock a platform time may be and still be believed (clock skew). */
export const MAX_AHEAD_MS = 24 * 60 * 60_000;

// Date, then optionally time (T or space), fraction (any digits), zone (Z, ±hh, ±hhmm, ±hh:mm); no zone = UTC.
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9})\d*)?)?)?\s*(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;

/** The instant a timestamp names, or undefined when it is not one (a calendar day that does not exist included). */
export function parseTimestamp(text: string | undefined | null): Instant | undefined {
  const m = typeof text === "string" ? TIMESTAMP.exec(text.trim()) : null;
  if (!m) return undefined;
  const [, y, mo, d, h = "0", mi = "0", s = "0", frac = "", , sign, oh = "0", om = "0"] = m;
  const num = [y, mo, d, h, mi, s, oh, om].map(Number) as [number, number, number, number, number, number, number, number];
  const [year, month, day, hour, minute, second, offH, offM] = num;
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60 || offH > 23 || offM > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCMonth() !== month - 1) return undefined; // 2026-02-31
  const digits = frac.padEnd(9, "0");
  const offsetMin = sign ? (sign === "-" ? -1 : 1) * (offH * 60 + offM) : 0;
  const ms = date.getTime() + ((hour * 60 + minute - offsetMin) * 60 + second) * 1000 + Number(digits.slice(0, 3));
  return { ms, nanos: Number(digits.slice(3)) };
}

/** The instant of a platform time when it is readable and plausible by Lookout's clock (`nowMs`). */
export function plausibleInstant(text: string | undefined | null, nowMs?: number): Instant | undefined {
  const t = parseTimestamp(text);
  if (!t || t.ms < 0 || (nowMs !== undefined && t.ms > nowMs + MAX_AHEAD_MS)) return undefined;
  return t;
}

export const compareInstants = (a: Instant, b: Instant) => a.ms - b.ms || a.nanos - b.nanos;

const isoOf = (ms: number) => new Date(ms).toISOString();

/**
 * A platform time as Lookout stores it: `iso`, the UTC instant to the millisecond (absent when the time
 * is missing, unreadable or implausible), and `raw`, the text as given when it says more or other than
 * `iso` (an offset, nanoseconds, an implausible or unreadable value), for the audit trail.
 */
export function readPlatformTime(text: string | undefined, seenAt?: string): { iso?: string; raw?: string } {
  if (text === undefined) return {};
  const t = plausibleInstant(text, seenAt === undefined ? undefined : parseTimestamp(seenAt)?.ms);
  const iso = t ? isoOf(t.ms) : undefined;
  const same = iso !== undefined && t!.nanos === 0 && (text === iso || text === iso.replace(/\.000Z$/, "Z"));
  return { ...(iso ? { iso } : {}), ...(same ? {} : { raw: text }) };
}

/**
 * A platform time as a UTC ISO instant, or `seenAt` (when Lookout saw it, normalized too) when the time
 * is missing, unreadable or implausible.
 */
export function instantOr(text: string | undefined, seenAt: string): string {
  const seen = parseTimestamp(seenAt);
  const t = plausibleInstant(text, seen?.ms);
  if (t) return isoOf(t.ms);
  return seen ? isoOf(seen.ms) : seenAt;
}

/** Seconds of an ISO 8601 duration such as PT8M42S; undefined when it is not one. */
export function durationSeconds(iso: string | undefined): number | undefined {
  const m = iso ? /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(iso) : null;
  if (!m || iso === "P" || iso === "PT") return undefined;
  const [, d, h, min, s] = m;
  return Math.round(Number(d ?? 0) * 86400 + Number(h ?? 0) * 3600 + Number(min ?? 0) * 60 + Number(s ?? 0));
}

/**
 * How long something lasted, for people, whole units down ("3m" for 3 min 35 s, "2h 05m", "3d 4h"):
 * one form in an alert's summary and in every receiver's message.
 */
export function formatLasted(sec: number): string {
  const s = Math.max(0, Math.round(sec));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}
