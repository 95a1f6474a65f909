/**
 * Page cursors: opaque to callers, base64url of the last row's index key (LastEvaluatedKey) with the
 * identity of the query and its resolved time range. A cursor only continues the query that made it.
 */
import { createHash } from "node:crypto";
import { AuditQueryError, type IndexPosition, type TimeRange } from "./model.js";

const VERSION = 1;

interface CursorBody {
  v: number;
  /** The query's identity. */
  q: string;
  /** The last row's key in the index. */
  k: IndexPosition;
  /** The time range as resolved on the first page (`since=7d` does not slide while paging). */
  r: TimeRange;
}

/** A short hash of what was asked: the same filters and time range as asked give the same identity. */
export function queryIdentity(asked: Record<string, string | undefined>): string {
  const canonical = Object.entries(asked).filter(([, v]) => v !== undefined).sort(([a], [b]) => a.localeCompare(b));
  return createHash("sha256").update(JSON.stringify(canonical)).digest("base64url").slice(0, 16);
}

export function encodeCursor(identity: string, position: IndexPosition, range: TimeRange): string {
  const body: CursorBody = { v: VERSION, q: identity, k: { ix_at: position.ix_at, pk: position.pk, sk: position.sk }, r: range };
  return Buffer.from(JSON.stringify(body), "utf8").toString("base64url");
}

export function decodeCursor(text: string, identity: string): { after: IndexPosition; range: TimeRange } {
  const bad = () => new AuditQueryError("cursor", "is not a cursor Lookout gave (pass the next_cursor of the previous page as it is)");
  if (!/^[A-Za-z0-9_-]+$/.test(text)) throw bad();
  let body: CursorBody;
  try {
    body = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as CursorBody;
  } catch {
    throw bad();
  }
  const k = body?.k;
  if (body?.v !== VERSION || typeof body.q !== "string" || !k || !isKey(k.ix_at) || typeof k.pk !== "string" || typeof k.sk !== "string") {
    throw bad();
  }
  if (body.q !== identity) {
    throw new AuditQueryError("cursor", "belongs to another query: page with the same filters and time range that gave it");
  }
  const r = body.r ?? {};
  // The range goes into the key condition as it is: anything but the instants a first page wrote is forged.
  if ((r.from !== undefined && !isInstant(r.from)) || (r.to !== undefined && !isInstant(r.to))) throw bad();
  const range: TimeRange = {
    ...(r.from !== undefined ? { from: r.from } : {}),
    ...(r.to !== undefined ? { to: r.to } : {}),
  };
  return { after: k, range };
}

/** As Date#toISOString writes it. */
const isInstant = (v: unknown): v is string =>
  typeof v === "string" && /^[+-]?\d{4,6}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(v) && !Number.isNaN(Date.parse(v));

/** What DynamoDB takes as a sort key value: non-empty, at most 1024 bytes of well-formed UTF-16. */
const isKey = (v: unknown): v is string =>
  typeof v === "string" && v.length > 0 && Buffer.byteLength(v, "utf8") <= 1024 && !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(v);
