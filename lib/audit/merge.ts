/**
 * Reading one page of a plan: each partition is read lazily, newest first, and the partitions are
 * merged by sort key. A row is taken only when it is the newest left in every partition, so a page is
 * exactly the next `limit` rows of the union, whatever the filter drops and wherever DynamoDB stops.
 *
 * A partition may hold batches of rows (records that raised nothing, lib/store/routine-batches.ts),
 * sorted by their newest row: their rows come out of order, so a partition's rows are held until
 * nothing it has not read can be newer (the `frontier`, the sort key of the last entry read).
 */
import { AUDIT_SORT } from "../model/audit-index.js";
import type { Plan } from "./plan.js";

export type Item = Record<string, unknown>;

/**
 * One Query call: the partition, where to resume, how many entries to evaluate. `items` are rows (a
 * batch's expanded, in any order); `last` is where DynamoDB stopped, whose sort key bounds every
 * entry not yet read.
 */
export type QueryFn = (partition: string, start: Item | undefined, limit: number) => Promise<{ items: Item[]; last?: Item }>;

const sortOf = (i: Item) => i[AUDIT_SORT] as string;
const newestFirst = (a: Item, b: Item) => (sortOf(a) > sortOf(b) ? -1 : sortOf(a) < sortOf(b) ? 1 : 0);

const MAX_EVALUATED = 1000;

class PartitionReader {
  private buf: Item[] = [];
  private start: Item | undefined;
  private done = false;
  private evaluate: number;
  /** Every entry not yet read sorts below this. */
  private frontier: string | undefined;

  constructor(
    private readonly partition: string,
    private readonly query: QueryFn,
    private readonly range: { lo?: string; hi?: string },
    first: number,
  ) {
    this.evaluate = Math.min(MAX_EVALUATED, first);
  }

  /** The newest row held, once nothing unread can be newer. */
  get head(): Item | undefined {
    return this.needsRead ? undefined : this.buf[0];
  }

  get needsRead(): boolean {
    if (this.done) return false;
    return !this.buf.length || (this.frontier !== undefined && sortOf(this.buf[0]!) < this.frontier);
  }

  take(): Item | undefined {
    return this.buf.shift();
  }

  /** Reads until there is a row or the partition is exhausted. */
  async fill(): Promise<void> {
    while (this.needsRead) {
      const res = await this.query(this.partition, this.start, this.evaluate);
      const { lo, hi } = this.range;
      // BETWEEN includes its upper bound (that row is the previous page's last); a batch's rows reach outside the range.
      const rows = res.items.filter((i) => (hi === undefined || sortOf(i) < hi) && (lo === undefined || sortOf(i) >= lo));
      if (rows.length) this.buf = [...this.buf, ...rows].sort(newestFirst);
      this.start = res.last;
      this.frontier = res.last?.[AUDIT_SORT] as string | undefined;
      if (!res.last) this.done = true;
      // Read more at a time when a partition keeps being needed (or its filter keeps little).
      this.evaluate = Math.min(MAX_EVALUATED, this.evaluate * 2);
    }
  }
}

/** The next `want` items of the plan's partitions, newest first. */
export async function readMerged(plan: Plan, query: QueryFn, want: number): Promise<Item[]> {
  // Merged partitions start with a share of the page each; a busy one reads more as it is drained.
  const first = plan.partitions.length > 1 ? Math.max(8, Math.ceil((2 * want) / plan.partitions.length)) : want;
  const readers = plan.partitions.map((p) => new PartitionReader(p, query, { lo: plan.lo, hi: plan.hi }, first));
  const out: Item[] = [];
  let previous: string | undefined;
  while (out.length < want) {
    await Promise.all(readers.filter((r) => r.needsRead).map((r) => r.fill()));
    let best: PartitionReader | undefined;
    for (const r of readers) {
      const h = r.head;
      if (h && (!best || (h[AUDIT_SORT] as string) > (best.head![AUDIT_SORT] as string))) best = r;
    }
    if (!best) break;
    const row = best.take()!;
    // A record in two batches (written again after a crash, in another chunk) is one row: sort keys are unique.
    if (sortOf(row) === previous) continue;
    previous = sortOf(row);
    out.push(row);
  }
  return out;
}
