/**
 * Records that raised nothing, stored compactly (docs/audit.md, "Records that raised nothing"): the
 * records of one write that share every audit dimension and one clock hour go into one compressed
 * batch item, which stands for all of them in the index of their source (cluster, webhook) and in their
 * kind's partition, with their other dimensions among its filtered fields (every row it holds matches
 * a filter exactly when the batch does); each record keeps a small item under its own key that points to its
 * batch, so `explain` finds it by id. A batch sorts by its newest row, so a reader widens its upper
 * time bound by the span a batch may cover (`BATCH_SPAN_MS`) and holds expanded rows until nothing
 * unread can be newer.
 */
import { createHash } from "node:crypto";
import { brotliCompressSync, brotliDecompressSync, constants } from "node:zlib";
import { AUDIT_FILTERS, AUDIT_SLOTS, AUDIT_SORT, BATCH_FILTERED_DIMENSIONS, ROW_FILTER_FIELDS, type AuditFilterRow, dimensionOfKey, filterRow, instantOf, sortKey } from "../model/audit-index.js";
import type { RecordItem } from "../model/ingest-store.js";
import { BATCH_PREFIX, TTL_ATTRIBUTE, keys } from "../model/items.js";

/** A batch holds rows of one clock hour: its sort key (its newest row's) is less than an hour past any row's. */
export const BATCH_SPAN_MS = 3_600_000;
/** Compressed rows per item, well under DynamoDB's 400 KB with the keys beside them. */
const MAX_BATCH_BYTES = 300 * 1024;
/** Brotli at a middle quality: about as fast as gzip on JSON and a third smaller. */
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } };

/** The attribute holding a batch's compressed records. */
export const BATCH_ROWS = "rows";

export const isBatchKey = (pk: unknown): boolean => typeof pk === "string" && pk.startsWith(BATCH_PREFIX);

/** What a batch keeps of each record: its item without the index keys and TTL the batch carries for all. */
type BatchedRecord = Record<string, unknown> & { pk: string; sk: string };

const SLOT_ATTRS = Object.values(AUDIT_SLOTS);

/** Records that may share a batch: same slots, same filtered row fields, same clock hour. */
function groupKey(item: RecordItem): string {
  const row = item[AUDIT_FILTERS] as AuditFilterRow | undefined;
  const at = String(item[AUDIT_SORT] ?? "");
  return JSON.stringify([at.slice(0, 13), ...SLOT_ATTRS.map((a) => item[a] ?? null), ...ROW_FILTER_FIELDS.map((f) => row?.[f] ?? null)]);
}

const compress = (records: BatchedRecord[]) => brotliCompressSync(Buffer.from(JSON.stringify(records)), BROTLI);

/** The records of a batch item, each as the record item it stands for (its slot keys, filtered fields and TTL are the batch's). */
export function batchRecords(batch: Record<string, unknown>): RecordItem[] {
  const shared: Record<string, unknown> = Object.fromEntries([...SLOT_ATTRS, AUDIT_FILTERS, TTL_ATTRIBUTE].filter((a) => batch[a] !== undefined).map((a) => [a, batch[a]]));
  // The slot keys a batch carries among its filtered fields are its records' keys.
  const filters = batch[AUDIT_FILTERS] as Record<string, unknown> | undefined;
  if (filters && !("id" in filters)) {
    const slots = SLOT_ATTRS.filter((a) => filters[a] !== undefined);
    for (const a of slots) shared[a] = filters[a];
    if (slots.length) shared[AUDIT_FILTERS] = filterRow(filters as AuditFilterRow);
  }
  const rows = JSON.parse(brotliDecompressSync(batch[BATCH_ROWS] as Uint8Array).toString("utf8")) as BatchedRecord[];
  // A record batched before the lean entries keeps its whole row under the filters' name: it wins.
  return rows.map((r) => ({ ...shared, ...r, item_type: "record" }));
}

export interface RoutineWrite {
  /** The batch items, each standing for `records`. */
  batches: Array<{ item: Record<string, unknown> & { pk: string; sk: string }; records: RecordItem[] }>;
  /** One small item per record, under the record's own key, naming its batch. */
  pointers: Array<Record<string, unknown> & { pk: string; sk: string }>;
}

/**
 * The batches and pointers that store these records. A batch's id is a hash of what it holds, so the
 * same records written again (a retried poll) land on the same items.
 */
export function routineWrite(records: RecordItem[], expiresAt: number): RoutineWrite {
  const groups = new Map<string, RecordItem[]>();
  for (const r of records) {
    const k = groupKey(r);
    const g = groups.get(k);
    if (g) g.push(r);
    else groups.set(k, [r]);
  }
  const out: RoutineWrite = { batches: [], pointers: [] };
  for (const group of groups.values()) {
    for (const { records: part, rows } of fitted(group)) {
      const item = batchItem(part, rows, expiresAt);
      out.batches.push({ item, records: part });
      for (const r of part) out.pointers.push({ pk: r.pk, sk: r.sk, item_type: "record_ref", batch: item.pk, [TTL_ATTRIBUTE]: expiresAt });
    }
  }
  return out;
}

/** The group split in halves until each part's compressed rows fit an item. */
function fitted(group: RecordItem[]): Array<{ records: RecordItem[]; rows: Buffer }> {
  const rows = compress(group.map(batched));
  if (rows.length <= MAX_BATCH_BYTES || group.length === 1) return [{ records: group, rows }];
  const half = Math.ceil(group.length / 2);
  return [...fitted(group.slice(0, half)), ...fitted(group.slice(half))];
}

/** Attributes a batch carries once for all its records. */
const SHARED_ATTRS = new Set<string>([...SLOT_ATTRS, AUDIT_FILTERS, TTL_ATTRIBUTE, "item_type"]);

/** A record as a batch keeps it: the slot keys, filtered fields and TTL are the batch's. */
function batched(item: RecordItem): BatchedRecord {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item)) if (!SHARED_ATTRS.has(k)) out[k] = v;
  return out as BatchedRecord;
}

function batchItem(records: RecordItem[], rows: Buffer, expiresAt: number): Record<string, unknown> & { pk: string; sk: string } {
  const first = records[0]!;
  const pks = records.map((r) => r.pk).sort();
  const id = createHash("sha256").update(groupKey(first)).update("\u0000").update(pks.join("\u0000")).digest("base64url").slice(0, 27);
  const { pk, sk } = keys.routineBatch(id);
  const newest = records.map((r) => String(r[AUDIT_SORT])).reduce((a, b) => (a > b ? a : b));
  const slots = SLOT_ATTRS.filter((a) => first[a] !== undefined);
  const filters = BATCH_FILTERED_DIMENSIONS[first.record_kind as keyof typeof BATCH_FILTERED_DIMENSIONS] ?? [];
  const isKey = (a: string) => !filters.includes(dimensionOfKey(first[a])!);
  const keyed = slots.filter(isKey);
  const filtered = slots.filter((a) => !isKey(a));
  return {
    pk, sk, item_type: "routine_batch", count: records.length, [BATCH_ROWS]: rows,
    // Keys of its source and kind only; its other dimensions are filtered fields (docs/audit.md).
    ...Object.fromEntries(keyed.map((a) => [a, first[a]])),
    // Its newest row's instant: every row it holds sorts at or below it.
    [AUDIT_SORT]: sortKey(instantOf(newest), pk),
    [AUDIT_FILTERS]: { ...filterRow(first[AUDIT_FILTERS] as AuditFilterRow | undefined), ...Object.fromEntries(filtered.map((a) => [a, first[a]])) },
    [TTL_ATTRIBUTE]: expiresAt,
  };
}

/**
 * Every record item in these items (a whole table read), each once: a batched record where its pointer
 * names that batch (a record written again in another batch has a stale copy in the first), pointers
 * left out.
 */
export function expandRecords(items: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const pointed = new Map(items.filter((i) => i.item_type === "record_ref").map((i) => [String(i.pk), String(i.batch)]));
  return items.flatMap((i): Array<Record<string, unknown>> => {
    if (i.item_type === "routine_batch") return batchRecords(i).filter((r) => pointed.get(r.pk) === i.pk);
    return i.item_type === "record_ref" ? [] : [i];
  });
}
