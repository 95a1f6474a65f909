/**
 * The port the audit trail reads the table through (lib/audit/trail.ts): a page of an audit index, items
 * by key, a partition whole. Read-only: the deployed function may only GetItem, BatchGetItem and Query.
 * Adapter: lib/store/audit-store.ts (DynamoDB); the keys it reads are built in lib/model/items.ts.
 */

/** An item as stored, or an index entry. */
export type StoredItem = Record<string, unknown>;

export type ItemKey = { pk: string; sk: string };

/** A condition expression with its attribute names and values. */
export interface Expression {
  expression: string;
  names: Record<string, string>;
  values: Record<string, string>;
}

/** One read of an audit index: newest first, at most `limit` entries evaluated, resuming at `start`. */
export interface IndexRead {
  index: string;
  key: Expression;
  filter?: Expression;
  limit: number;
  start?: StoredItem;
}

export interface AuditItems {
  /** The entries of one read of an index, and where it stopped (absent at the partition's end). */
  queryIndex(read: IndexRead): Promise<{ items: StoredItem[]; last?: StoredItem }>;
  /**
   * What an audit row needs of the items of these keys (its row, a batch's rows), read together: those
   * that exist, by `itemKeyString`. Throws when the table leaves some unread after its retries.
   */
  rowItems(keys: ItemKey[]): Promise<Map<string, StoredItem>>;
  get(key: ItemKey): Promise<StoredItem | undefined>;
  /** Every item of a partition, page after page. */
  partition(pk: string): Promise<StoredItem[]>;
}
