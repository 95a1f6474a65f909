/**
 * Items as earlier versions of Lookout wrote them, for tests that upgrade a table: what a reader must
 * still read (docs/audit.md, "Lean index entries", "Records that raised nothing").
 */
import { brotliCompressSync, brotliDecompressSync } from "node:zlib";
import { AUDIT_FILTERS, AUDIT_ROW, AUDIT_SLOTS } from "../../lib/model/audit-index.js";

/** An audited item as written before lean index entries: its whole row under the projected name. */
export function beforeLeanEntries<T extends Record<string, unknown>>(item: T): T {
  if (!item[AUDIT_ROW]) return item;
  const { [AUDIT_ROW]: row, ...rest } = item;
  return { ...rest, [AUDIT_FILTERS]: row } as unknown as T;
}

/**
 * A batch of records as written before lean index entries: each record's whole row under the projected
 * name (and, as then, in every index of its records' dimensions).
 */
export function batchBeforeLeanEntries<T extends Record<string, unknown>>(batch: T): T {
  const records = JSON.parse(brotliDecompressSync(batch.rows as Uint8Array).toString("utf8")) as Array<Record<string, unknown>>;
  return { ...batchBeforeSourceKeys(batch), rows: brotliCompressSync(Buffer.from(JSON.stringify(records.map(beforeLeanEntries)))) };
}

/**
 * A batch as written before batches were found by their source and kind only: every dimension's key an
 * attribute of its own, so the batch is in every index of its records' dimensions.
 */
export function batchBeforeSourceKeys<T extends Record<string, unknown>>(batch: T): T {
  const filters = (batch[AUDIT_FILTERS] ?? {}) as Record<string, unknown>;
  const slots = Object.values(AUDIT_SLOTS) as string[];
  const keys = Object.fromEntries(Object.entries(filters).filter(([k]) => slots.includes(k)));
  const rest = Object.fromEntries(Object.entries(filters).filter(([k]) => !slots.includes(k)));
  return { ...batch, ...keys, [AUDIT_FILTERS]: rest };
}
