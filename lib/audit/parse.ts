/**
 * The audit query from what was typed (CLI flags) or sent (API query parameters). Pure but for `now`.
 * Every problem is an AuditQueryError naming the filter: unknown filter, bad uuid, bad date, bad value.
 */
import { DURATION_LIMITS, durationRangeProblem, parseDuration } from "../config/duration.js";
import {
  type AuditQuery,
  AuditQueryError,
  DEFAULT_LIMIT,
  FILTERS,
  type FilterName,
  type Filters,
  ID_FILTERS,
  MAX_LIMIT,
  type TimeRange,
  TRANSITIONS,
} from "./model.js";
import { SEVERITIES, KINDS } from "../model/event.js";
import { ENTRY_TYPES } from "../model/audit-row.js";
import { normalizeValue, COMMIT_KEY_LENGTH } from "../model/audit-index.js";
import { decodeCursor, queryIdentity } from "./cursor.js";

export const RANGE_PARAMS = ["since", "from", "to"] as const;
export const PAGE_PARAMS = ["limit", "cursor"] as const;
const KNOWN = new Set<string>([...FILTERS, ...RANGE_PARAMS, ...PAGE_PARAMS]);

// Any 8-4-4-4-12 hex id, as the platform issues (not only RFC 4122 variants), like the configuration.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const COMMIT = new RegExp(`^[0-9a-f]{${COMMIT_KEY_LENGTH},64}$`, "i");
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

export type RawQuery = Record<string, string | undefined>;

const oneOf = (values: readonly string[]) => `is not one of ${values.join(", ")}`;

function filterValue(name: FilterName, raw: string): string {
  const v = raw.trim();
  if ((ID_FILTERS as readonly string[]).includes(name)) {
    if (!UUID.test(v)) throw new AuditQueryError(name, `"${raw}" is not a uuid (the platform's id, like 3f2e1d0c-9b8a-4765-8432-10fedcba9876)`);
    return v.toLowerCase();
  }
  switch (name) {
    case "kind":
      if (!KINDS.includes(v as never)) throw new AuditQueryError(name, `"${raw}" ${oneOf(KINDS)}`);
      return v;
    case "transition": {
      const known = TRANSITIONS.map((t) => t.transition);
      if (!known.includes(v as never)) throw new AuditQueryError(name, `"${raw}" ${oneOf(known)}`);
      return v;
    }
    case "severity":
      if (!SEVERITIES.includes(v as never)) throw new AuditQueryError(name, `"${raw}" ${oneOf(SEVERITIES)}`);
      return v;
    case "type":
      if (!ENTRY_TYPES.includes(v as never)) throw new AuditQueryError(name, `"${raw}" ${oneOf(ENTRY_TYPES)}`);
      return v;
    case "commit":
      if (!COMMIT.test(v)) throw new AuditQueryError(name, `"${raw}" is not a commit id (${COMMIT_KEY_LENGTH} to 64 hexadecimal characters)`);
      return normalizeValue("commit", v);
    case "status":
    case "actor":
      if (v.length > 320) throw new AuditQueryError(name, "is longer than 320 characters");
      return normalizeValue(name, v);
    default:
      throw new AuditQueryError(name, "is not a filter"); // unreachable: the id filters are handled above
  }
}

/** An ISO 8601 date (midnight UTC) or date-time with a time zone, as an ISO instant. */
export function parseInstant(name: string, raw: string): string {
  const v = raw.trim();
  const m = DATE.exec(v) ?? DATE_TIME.exec(v);
  const problem = `"${raw}" is not an ISO 8601 date or date-time with a time zone (like 2026-03-01 or 2026-03-01T08:00:00Z)`;
  if (!m) {
    if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(v)) {
      throw new AuditQueryError(name, `"${raw}" has no time zone: add Z for UTC, or an offset like +01:00`);
    }
    throw new AuditQueryError(name, problem);
  }
  const [, y, mo, d] = m;
  // Date.parse accepts 2026-02-31 (as March 3rd): check the calendar day exists.
  const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  const ms = Date.parse(v);
  if (Number.isNaN(ms) || day.getUTCMonth() !== Number(mo) - 1 || day.getUTCDate() !== Number(d)) throw new AuditQueryError(name, problem);
  return new Date(ms).toISOString();
}

function parseRange(raw: RawQuery, now: Date): { range: TimeRange; asked: Record<string, string | undefined> } {
  const { since, from, to } = raw;
  if (since !== undefined && (from !== undefined || to !== undefined)) {
    throw new AuditQueryError("since", "give since, or from and/or to, not both");
  }
  if (since !== undefined) {
    const ms = parseDuration(since);
    if (!ms) throw new AuditQueryError("since", `"${since}" is not a duration like 7d, 12h or 30m`);
    // Nothing older than the longest retention is stored; further back is no date at all.
    const far = durationRangeProblem(ms, DURATION_LIMITS.lookback);
    if (far) throw new AuditQueryError("since", `"${since.trim().slice(0, 24)}" ${far}`);
    return { range: { from: new Date(now.getTime() - ms).toISOString() }, asked: { since: since.trim() } };
  }
  const range: TimeRange = {};
  if (from !== undefined) range.from = parseInstant("from", from);
  if (to !== undefined) range.to = parseInstant("to", to);
  if (range.from && range.to && range.from >= range.to) throw new AuditQueryError("from", `${range.from} is not before to (${range.to})`);
  return { range, asked: { from: range.from, to: range.to } };
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LIMIT;
  const n = Number(raw.trim());
  if (!/^\d+$/.test(raw.trim()) || n < 1 || n > MAX_LIMIT) throw new AuditQueryError("limit", `"${raw}" is not a whole number from 1 to ${MAX_LIMIT}`);
  return n;
}

/**
 * Checks and normalizes a query. Keys with an undefined value are ignored (absent flags); an empty
 * value is an error (a filter that selects nothing is a mistake, not "any").
 */
export function parseAuditQuery(raw: RawQuery, now: Date): AuditQuery {
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    if (!KNOWN.has(name)) {
      throw new AuditQueryError(name, `unknown filter (filters: ${FILTERS.join(", ")}; time: since, or from and to; paging: limit, cursor)`);
    }
    if (!value.trim()) throw new AuditQueryError(name, "is empty");
  }
  const filters: Filters = {};
  for (const name of FILTERS) {
    const v = raw[name];
    if (v !== undefined) filters[name] = filterValue(name, v);
  }
  const { range, asked } = parseRange(raw, now);
  const limit = parseLimit(raw.limit);
  const identity = queryIdentity({ ...filters, ...asked });
  if (raw.cursor === undefined) return { filters, range, identity, limit };
  // Continuing: the first page's resolved range, so that `since` does not slide between pages.
  const { after, range: pinned } = decodeCursor(raw.cursor.trim(), identity);
  return { filters, range: pinned, identity, limit, after };
}
