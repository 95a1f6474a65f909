/**
 * What a list source (webhook deliveries, cluster logs) has stored, by id: the ids a poll must not
 * store or alert again. A list answer holds tens of thousands of them (a crash-looping component), more
 * than one DynamoDB item can (400 KB), so the cursor keeps the latest ones and seals the older into
 * parts, items of their own known by the hash of their ids (docs/limits.md, "A flood of records").
 *
 * - A part is never changed: a new id goes into the cursor's own `seen`, which is sealed into a part
 *   when it outgrows SEEN_INLINE_BYTES. A poll that stores a few records rewrites the cursor alone.
 * - A part none of whose ids is listed any longer is dropped; when most ids of the parts are no longer
 *   listed, the parts are sealed again from those that are, so what is kept stays near what is listed.
 * - The same list again (its digest, `listed`) reads no part: a poll with nothing new stays one read.
 * - A part that is gone (expired, or dropped by a racing poller) is read as unseen: its records are
 *   stored again, which is harmless (records are keyed by id, an alert rides only with a new record).
 */
import type { SeenPart, SourceCursor } from "../model/ingest-store.js";
import { contentHashOf } from "../model/hash.js";
import { keyPart } from "../model/bounds.js";

/** The cursor's own seen ids are sealed into parts beyond this: the cursor stays a small item. */
export const SEEN_INLINE_BYTES = 64 * 1024;
/** A part's ids: about 8,000 content hashes or 5,000 uuids, half of DynamoDB's 400 KB item limit. */
export const SEEN_PART_BYTES = 192 * 1024;

/** How a record id is kept: whole, or hashed past a key's length (an id is any length on a hostile platform). */
export const seenId = (id: string): string => keyPart(id);

/** The digest of a list's ids, in any order. */
export const listDigest = (ids: Iterable<string>): string => contentHashOf([...ids].sort());

export interface Seen {
  /** The cursor's own. */
  inline: string[];
  /** Sealed parts, oldest first. */
  parts: SeenPart[];
  /** Parts the cursor names that are gone: their ids count as unseen. */
  missing: string[];
}

export const emptySeen = (): Seen => ({ inline: [], parts: [], missing: [] });

export function hasSeen(seen: Seen): (id: string) => boolean {
  const ids = new Set([...seen.inline, ...seen.parts.flatMap((p) => p.ids)]);
  return (id) => ids.has(id);
}

/** The cursor's seen ids with its parts, read. */
export async function loadSeen(
  store: { getSeenParts(source: string, parts: string[]): Promise<Map<string, string[]>> },
  cursor: SourceCursor | undefined,
): Promise<Seen> {
  const named = cursor?.seen_parts ?? [];
  const found = named.length ? await store.getSeenParts(cursor!.source, named) : new Map<string, string[]>();
  return {
    inline: cursor?.seen ?? [],
    parts: named.flatMap((part) => (found.has(part) ? [{ part, ids: found.get(part)! }] : [])),
    missing: named.filter((part) => !found.has(part)),
  };
}

export interface SeenChange {
  seen: Seen;
  /** Parts to store before the cursor that names them. */
  put: SeenPart[];
  /** Parts the cursor no longer names: deleted after it is saved. */
  dropped: string[];
}

const idBytes = (id: string) => Buffer.byteLength(id, "utf8") + 3;

/**
 * The seen ids after `added` were stored, of a list whose ids are `listed`: the cursor's own keep
 * only listed ids and take the new ones; what outgrows the cursor is sealed into new parts.
 */
export function addSeen(prev: Seen, added: string[], listed: ReadonlySet<string>): SeenChange {
  let parts = prev.parts.filter((p) => p.ids.some((id) => listed.has(id)));
  const partIds = parts.reduce((n, p) => n + p.ids.length, 0);
  const live = parts.flatMap((p) => p.ids.filter((id) => listed.has(id)));
  // Mostly ids no longer listed: seal again from those that are.
  const resealed = live.length * 2 < partIds;
  if (resealed) parts = [];
  const inPart = new Set(parts.flatMap((p) => p.ids));
  const inline = [...new Set([...(resealed ? live : []), ...prev.inline, ...added])].filter((id) => listed.has(id) && !inPart.has(id));

  const put: SeenPart[] = [];
  let bytes = inline.reduce((n, id) => n + idBytes(id), 0);
  let from = 0;
  while (bytes > SEEN_INLINE_BYTES) {
    let size = 0;
    let to = from;
    while (to < inline.length && size + idBytes(inline[to]!) <= SEEN_PART_BYTES) size += idBytes(inline[to++]!);
    const ids = inline.slice(from, to);
    put.push({ part: contentHashOf(ids), ids });
    bytes -= size;
    from = to;
  }
  const kept = new Set([...parts, ...put].map((p) => p.part));
  return {
    seen: { inline: inline.slice(from), parts: [...parts, ...put], missing: [] },
    put,
    dropped: [...new Set([...prev.parts.map((p) => p.part), ...prev.missing])].filter((part) => !kept.has(part)),
  };
}
