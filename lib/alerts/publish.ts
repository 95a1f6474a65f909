/**
 * Event details → bus entries → PutEvents, in batches, retrying only what failed for a passing reason.
 * Everything here is a decision over plain values except `publishAlerts`, which talks to the EventBus port.
 */
import { fullJitterMs } from "../model/backoff.js";
import {
  type BusEntry,
  type EventBus,
  MAX_ENTRIES_PER_CALL,
  MAX_ENTRY_BYTES,
  MAX_REQUEST_BYTES,
  entrySize,
  isFailedEntry,
} from "./bus.js";
import { CLIP_MARKER, type ClipRank, type Path, clipStrings, defaultRank } from "../model/bounds.js";
import {
  type DetailType,
  EVENT_SOURCE,
  type LookoutEventDetail,
  type LookoutEventEnvelope,
  DETAIL_TYPES,
  detailTypeOf,
} from "../model/event.js";

export { CLIP_MARKER };

/** The free-text fields that may be long: shortened first. Other strings follow, identifiers last. */
const CLIPPABLE_FIELDS: readonly (readonly string[])[] = [
  ["deployment", "commit", "message"],
  ["error", "message"],
  ["error", "hint"],
  ["http", "response_excerpt"],
  ["health", "detail"],
  ["summary"],
];
/** What identifies and routes an event: never shortened (they are short by construction). */
const NEVER_CLIPPED = new Set(["version", "id", "kind", "transition", "severity", "clipped"]);
/** At most this many clipped paths are listed in the detail's `clipped`. */
const MAX_CLIPPED_PATHS = 20;

function detailRank(path: Path): ClipRank {
  if (path.length === 1 && NEVER_CLIPPED.has(String(path[0]))) return "never";
  if (path[0] === "clipped") return "never";
  if (CLIPPABLE_FIELDS.some((f) => f.length === path.length && f.every((k, i) => k === path[i]))) return 0;
  return defaultRank(path);
}

/** Per-entry error codes that a later attempt can succeed with; any other code is final. */
const TRANSIENT_ENTRY_CODES = new Set(["ThrottlingException", "InternalFailure", "InternalException", "ServiceUnavailable"]);
/** Whole-call errors that no retry can fix; anything else (network, 5xx, throttling) is retried. */
const PERMANENT_CALL_ERRORS = new Set([
  "ValidationException",
  "AccessDeniedException",
  "ResourceNotFoundException",
  "UnrecognizedClientException",
  "InvalidSignatureException",
  "NotAuthorizedForSourceException",
]);

export const isTransientEntryError = (code: string) => TRANSIENT_ENTRY_CODES.has(code);

/**
 * Failures that are the alert's own, not the bus's or the configuration's: no retry publishes it
 * (InvalidDetail and EntryTooLarge are decided here, before sending). Such an alert is quarantined by
 * the outbox so that the alerts after it go on (lib/alerts/outbox.ts).
 */
const ALERT_AT_FAULT = new Set(["InvalidDetail", "EntryTooLarge", "ValidationException", "InvalidArgument", "MalformedDetail"]);
export const isAlertAtFault = (code: string) => ALERT_AT_FAULT.has(code);

export function busEntryTime(detail: Pick<LookoutEventDetail, "observed_at">): Date | undefined {
  // The event's time is when Lookout raised it: stable when the same alert is published again.
  const t = new Date(detail.observed_at);
  return Number.isNaN(t.getTime()) ? undefined : t;
}

function detailTypeOrThrow(detail: LookoutEventDetail): DetailType {
  const dt = detailTypeOf(detail.kind, detail.transition);
  // detailTypeOf trusts its input; a stored item with an unknown transition must not reach the bus untyped.
  if (!dt || !(Object.values(DETAIL_TYPES) as string[]).includes(dt)) {
    throw new Error(`no detail-type for kind "${detail.kind}" and transition "${detail.transition}"`);
  }
  return dt;
}

/**
 * The PutEvents entry for a detail. A detail too big for one entry has its long text fields clipped
 * (with CLIP_MARKER) rather than failing: an alert with a shortened commit message still helps.
 */
export function toBusEntry(detail: LookoutEventDetail, busName: string): BusEntry {
  const DetailType = detailTypeOrThrow(detail);
  const Time = busEntryTime(detail);
  const base = { Source: EVENT_SOURCE, DetailType, EventBusName: busName, Resources: [] as string[], ...(Time ? { Time } : {}) };
  const overhead = entrySize({ ...base, Detail: "" });
  const clipped = clipDetail(detail, MAX_ENTRY_BYTES - overhead);
  return { ...base, Detail: JSON.stringify(clipped) };
}

/** The envelope EventBridge hands to targets (and the local bus writes): `time` to the second, as EventBridge does. */
export function toEnvelope(
  detail: LookoutEventDetail,
  meta: { account: string; region: string; time: Date | string; eventId: string },
): LookoutEventEnvelope {
  const time = new Date(meta.time);
  return {
    version: "0",
    id: meta.eventId,
    "detail-type": detailTypeOrThrow(detail),
    source: EVENT_SOURCE,
    account: meta.account,
    time: Number.isNaN(time.getTime()) ? String(meta.time) : time.toISOString().replace(/\.\d{3}Z$/, "Z"),
    region: meta.region,
    resources: [],
    detail,
  };
}

/**
 * Shortens text fields until the JSON of the detail fits in `maxBytes` (UTF-8): the free-text fields
 * first, then any other string, longest first, identifiers last; each ends in CLIP_MARKER and is listed
 * in `clipped`. Returns the input itself when it fits; a copy otherwise. If clipping every field to its
 * minimum is not enough, returns the smallest it got (the caller checks the size).
 */
export function clipDetail(detail: LookoutEventDetail, maxBytes: number): LookoutEventDetail {
  const bytesOf = (d: unknown) => Buffer.byteLength(JSON.stringify(d), "utf8");
  if (bytesOf(detail) <= maxBytes) return detail;
  let budget = maxBytes;
  let out = detail;
  // The `clipped` list takes room too: shrink the budget by what it overshot, a few times at most.
  for (let round = 0; round < 4; round++) {
    const r = clipStrings(detail, { maxBytes: budget, rank: detailRank });
    const paths = [...new Set([...(detail.clipped ?? []), ...r.clipped])].slice(0, MAX_CLIPPED_PATHS);
    out = paths.length ? { ...r.value, clipped: paths } : r.value;
    const over = bytesOf(out) - maxBytes;
    if (over <= 0) break;
    budget -= over;
  }
  return out;
}

/** Splits entries into PutEvents calls: at most 10 entries and 256 KB per call, order kept. */
export function chunkEntries<T>(items: T[], sizeOf: (item: T) => number): T[][] {
  const chunks: T[][] = [];
  let cur: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const s = sizeOf(item);
    if (cur.length && (cur.length >= MAX_ENTRIES_PER_CALL || bytes + s > MAX_REQUEST_BYTES)) {
      chunks.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(item);
    bytes += s;
  }
  if (cur.length) chunks.push(cur);
  return chunks;
}

export interface PublishOptions {
  busName: string;
  /** Attempts per entry, the first included. Default 5. */
  maxAttempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** Told before each retry round, for logs. */
  onRetry?: (info: { attempt: number; entries: number; delayMs: number; errorCodes: string[] }) => void;
}

export interface PublishFailure {
  id: string;
  errorCode: string;
  errorMessage: string;
}

export interface PublishResult {
  /** Alert ids accepted by the bus, in the order they were accepted. */
  published: string[];
  failed: PublishFailure[];
  /** Alert ids whose text was clipped to fit the entry limit. */
  clipped: string[];
}

interface Pending {
  id: string;
  entry: BusEntry;
  size: number;
  lastError?: { code: string; message: string };
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function publishAlerts(details: LookoutEventDetail[], bus: EventBus, opts: PublishOptions): Promise<PublishResult> {
  const maxAttempts = Math.max(1, opts.maxAttempts ?? 5);
  const sleep = opts.sleep ?? defaultSleep;
  const random = opts.random ?? Math.random;
  const result: PublishResult = { published: [], failed: [], clipped: [] };

  let pending: Pending[] = [];
  for (const detail of details) {
    const id = typeof detail?.id === "string" ? detail.id : String(detail?.id);
    let entry: BusEntry;
    try {
      entry = toBusEntry(detail, opts.busName);
    } catch (err) {
      result.failed.push({ id, errorCode: "InvalidDetail", errorMessage: (err as Error).message });
      continue;
    }
    const size = entrySize(entry);
    if (size > MAX_ENTRY_BYTES) {
      // Only non-text fields are left to blame; sending would fail the whole call for its neighbours.
      result.failed.push({ id, errorCode: "EntryTooLarge", errorMessage: `entry is ${size} bytes after clipping (limit ${MAX_ENTRY_BYTES})` });
      continue;
    }
    if (entry.Detail !== JSON.stringify(detail)) result.clipped.push(id);
    pending.push({ id, entry, size });
  }

  for (let attempt = 1; pending.length; attempt++) {
    const retry: Pending[] = [];
    for (const batch of chunkEntries(pending, (p) => p.size)) {
      let res;
      try {
        res = await bus.putEvents(batch.map((p) => p.entry));
      } catch (err) {
        // The whole call failed: every entry in it failed with the call's error.
        const e = err as { name?: string; message?: string };
        const code = e?.name && e.name !== "Error" ? e.name : "CallFailed";
        for (const p of batch) p.lastError = { code, message: e?.message ?? String(err) };
        if (PERMANENT_CALL_ERRORS.has(code)) result.failed.push(...batch.map((p) => failure(p)));
        else retry.push(...batch);
        continue;
      }
      batch.forEach((p, i) => {
        const r = res.Entries[i] ?? { ErrorCode: "InternalFailure", ErrorMessage: "no result for this entry" };
        if (!isFailedEntry(r)) return void result.published.push(p.id);
        p.lastError = { code: r.ErrorCode, message: r.ErrorMessage };
        if (isTransientEntryError(r.ErrorCode)) retry.push(p);
        else result.failed.push(failure(p));
      });
    }
    if (retry.length && attempt >= maxAttempts) {
      result.failed.push(...retry.map(failure));
      break;
    }
    pending = retry;
    if (pending.length) {
      const delayMs = Math.floor(fullJitterMs(attempt - 1, { baseDelayMs: opts.baseDelayMs ?? 100, maxDelayMs: opts.maxDelayMs ?? 3_000 }, random));
      opts.onRetry?.({ attempt, entries: pending.length, delayMs, errorCodes: [...new Set(pending.map((p) => p.lastError!.code))] });
      await sleep(delayMs);
    }
  }
  return result;
}

const failure = (p: Pending): PublishFailure => ({
  id: p.id,
  errorCode: p.lastError?.code ?? "Unknown",
  errorMessage: p.lastError?.message ?? "",
});
