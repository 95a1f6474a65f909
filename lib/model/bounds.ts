/**
 * Size bounds of what Lookout writes: DynamoDB keys (2048 bytes for a partition key, 1024 for a sort
 * key), DynamoDB items (400 KB) and EventBridge entries (256 KB). Platform values of any length must fit
 * (docs/platform.md, "Field sizes"): long values are hashed into keys and long text is clipped, with a
 * marker, rather than failing the write. Pure.
 */
import { contentHash } from "./hash.js";

/** Appended to a text field that was shortened to fit (docs/events.md, "Size"). */
export const CLIP_MARKER = "…[clipped]";

/**
 * A platform value embedded in a key: whole up to this many UTF-8 bytes, else a prefix and a hash of
 * the whole. Several such parts plus a prefix stay far below the 1024-byte sort-key limit.
 */
export const MAX_KEY_PART_BYTES = 200;

/** `value` itself when short; else its first characters and a hash of it (stable, so reads find writes). */
export function keyPart(value: string): string {
  if (Buffer.byteLength(value, "utf8") <= MAX_KEY_PART_BYTES) return value;
  return `${prefixWithin(value, 64)}~h:${contentHash("key", value)}`;
}

/** UTF-8 bytes of one code point once JSON-encoded (escapes included), so clipping counts what is sent. */
function jsonBytes(cp: number): number {
  if (cp === 0x22 || cp === 0x5c) return 2; // \" \\
  if (cp < 0x20) return [0x08, 0x09, 0x0a, 0x0c, 0x0d].includes(cp) ? 2 : 6; // \n … or \u00XX
  if (cp < 0x80) return 1;
  if (cp < 0x800) return 2;
  if (cp >= 0xd800 && cp <= 0xdfff) return 6; // a lone surrogate is written as \uDXXX
  return cp < 0x10000 ? 3 : 4;
}

/** Bytes of a string's JSON encoding, quotes excluded. */
export function jsonStringBytes(s: string): number {
  let n = 0;
  for (const ch of s) n += jsonBytes(ch.codePointAt(0)!);
  return n;
}

/** The longest prefix of `s`, cut between code points, whose JSON encoding fits in `maxBytes`. */
export function prefixWithin(s: string, maxBytes: number): string {
  let n = 0;
  let end = 0;
  for (const ch of s) {
    const b = jsonBytes(ch.codePointAt(0)!);
    if (n + b > maxBytes) break;
    n += b;
    end += ch.length;
  }
  return s.slice(0, end);
}

export type Path = readonly (string | number)[];

/** Which strings are shortened first: 0 before 1 before 2; `never` are left whole. */
export type ClipRank = 0 | 1 | 2 | "never";

export interface ClipOptions {
  /** The JSON of the whole value must fit in this many UTF-8 bytes. */
  maxBytes: number;
  /** Every string above this many bytes (per path, or for all) is shortened to it first (ranks 0 and 1 only). */
  maxFieldBytes?: number | ((path: Path) => number | undefined);
  /** No path's `maxFieldBytes` is below this: a value whose whole JSON is no longer has no string over its cap. */
  maxFieldBytesAtLeast?: number;
  /** A shortened string keeps at least this many bytes: a reader still sees how it starts. Default 256. */
  minKeptBytes?: number;
  /** The rank of the string at `path`; default {@link defaultRank}. */
  rank?: (path: Path) => ClipRank;
}

/** A status: an enum value, classified by its end (`_ERROR`, docs/platform.md "Enums grow"). */
const isEnumPath = (path: Path): boolean => path[path.length - 1] === "status";

/**
 * `s` shortened to at most `maxBytes` of JSON: a prefix, cut between code points, and CLIP_MARKER. An id
 * and an enum value carry a hash of the whole inside the marker, so that two which differ only past the
 * cut stay apart; an enum value keeps its end too, so that it is classified as the whole is.
 */
function clippedTo(s: string, maxBytes: number, kind: "text" | "id" | "enum"): string {
  if (kind === "text") return prefixWithin(s, Math.max(0, maxBytes - jsonStringBytes(CLIP_MARKER))) + CLIP_MARKER;
  const marker = `${CLIP_MARKER.slice(0, -1)} ~h:${contentHash(kind, s)}]`;
  let tail = kind === "enum" ? s.slice(-64) : "";
  while (jsonStringBytes(tail) > 256 || /^[\udc00-\udfff]/.test(tail)) tail = tail.slice(1); // whole code points
  return prefixWithin(s, Math.max(0, maxBytes - jsonStringBytes(marker) - jsonStringBytes(tail))) + marker + tail;
}

/** Identifiers last: what names a thing is shortened only when nothing else is left. */
export const isIdPath = (path: Path): boolean => {
  const last = path[path.length - 1];
  return typeof last === "string" && (last === "id" || last.endsWith("_id") || last === "pk" || last === "sk");
};

export const defaultRank = (path: Path): ClipRank => (isIdPath(path) ? 2 : 1);

export interface Clipped<T> {
  /** The input itself when nothing was shortened; a copy otherwise. */
  value: T;
  /** Dotted paths of the strings shortened, e.g. `deployment.commit.message`. */
  clipped: string[];
  /** Bytes of the result's JSON. */
  bytes: number;
}

interface Leaf {
  path: Path;
  bytes: number;
  rank: 0 | 1 | 2;
}

function leaves(value: unknown, rank: (p: Path) => ClipRank, path: (string | number)[] = [], out: Leaf[] = [], depth = 0): Leaf[] {
  if (depth > 64) return out;
  if (typeof value === "string") {
    const r = rank(path);
    if (r !== "never") out.push({ path: [...path], bytes: jsonStringBytes(value), rank: r });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => leaves(v, rank, [...path, i], out, depth + 1));
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) leaves(v, rank, [...path, k], out, depth + 1);
  }
  return out;
}

function getAt(o: unknown, path: Path): unknown {
  let cur = o;
  for (const k of path) cur = (cur as Record<string | number, unknown>)[k];
  return cur;
}

function setAt(o: unknown, path: Path, v: string): void {
  const parent = getAt(o, path.slice(0, -1)) as Record<string | number, unknown>;
  parent[path[path.length - 1]!] = v;
}

/**
 * Shortens string fields until the JSON of `value` fits in `maxBytes`: first every string above
 * `maxFieldBytes`, then the longest of the lowest rank, and so on (ids last). What is kept is a prefix,
 * cut between code points, followed by CLIP_MARKER (`clippedTo`: an id's and a status's with a hash of the
 * whole inside it, a status's with its end after it). If everything clippable is at its minimum and it
 * still does not fit, returns the smallest it got (the caller checks `bytes`).
 */
export function clipStrings<T>(value: T, opts: ClipOptions): Clipped<T> {
  const size0 = Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");
  const rank = opts.rank ?? defaultRank;
  const minKept = opts.minKeptBytes ?? 256;
  const markerBytes = jsonStringBytes(CLIP_MARKER);
  const fieldCap = (p: Path) => (typeof opts.maxFieldBytes === "function" ? opts.maxFieldBytes(p) : opts.maxFieldBytes);
  const overField = (l: Leaf) => {
    const cap = l.rank === 2 ? undefined : fieldCap(l.path);
    return cap !== undefined && l.bytes > cap;
  };
  // A string's JSON is part of the value's: a value no longer than every cap needs no walk of its strings.
  const underEveryCap = size0 <= (typeof opts.maxFieldBytes === "number" ? opts.maxFieldBytes : (opts.maxFieldBytesAtLeast ?? 0));
  if (size0 <= opts.maxBytes && (opts.maxFieldBytes === undefined || underEveryCap || !leaves(value, rank).some(overField))) {
    return { value, clipped: [], bytes: size0 };
  }
  const copy = structuredClone(value);
  const clipped = new Set<string>();
  let size = size0;
  const shorten = (l: Leaf, keep: number) => {
    const s = getAt(copy, l.path) as string;
    const next = clippedTo(s, keep + markerBytes, l.rank === 2 ? "id" : isEnumPath(l.path) ? "enum" : "text");
    const nextBytes = jsonStringBytes(next);
    if (nextBytes >= l.bytes) return;
    setAt(copy, l.path, next);
    size -= l.bytes - nextBytes;
    l.bytes = nextBytes;
    clipped.add(l.path.join("."));
  };
  const all = leaves(copy, rank);
  for (const l of all) if (overField(l)) shorten(l, Math.max(0, fieldCap(l.path)! - markerBytes));
  const order = [...all].sort((a, b) => a.rank - b.rank || b.bytes - a.bytes);
  for (const l of order) {
    if (size <= opts.maxBytes) break;
    shorten(l, Math.max(minKept, l.bytes - (size - opts.maxBytes) - markerBytes));
  }
  return { value: copy, clipped: [...clipped], bytes: size };
}

/** A record or observation as stored stays well under DynamoDB's 400 KB item limit (it is written with its audit row). */
export const MAX_RECORD_BYTES = 96 * 1024;
/** Names, statuses, tags, durations: no platform value of these needs more; free text may be longer. */
export const MAX_SHORT_FIELD_BYTES = 1024;
/** Free text (messages, hints, excerpts, payloads): bounded only by the record's total. */
const FREE_TEXT = new Set(["message", "hint", "underlying", "response_excerpt", "excerpt"]);

function recordFieldCap(path: Path): number | undefined {
  if (path[0] === "request") return undefined;
  const last = path[path.length - 1];
  return typeof last === "string" && FREE_TEXT.has(last) ? undefined : MAX_SHORT_FIELD_BYTES;
}

/**
 * A normalized record or observation bounded for storage: names, statuses and other short fields to
 * MAX_SHORT_FIELD_BYTES, then the longest text until the whole fits MAX_RECORD_BYTES; ids are kept
 * whole unless nothing else is left. What was shortened is listed in `clipped`.
 */
export function boundRecord<T extends object>(record: T): T & { clipped?: string[] } {
  const r = clipStrings(record, { maxBytes: MAX_RECORD_BYTES, maxFieldBytes: recordFieldCap, maxFieldBytesAtLeast: MAX_SHORT_FIELD_BYTES });
  return r.clipped.length ? { ...r.value, clipped: r.clipped } : r.value;
}
