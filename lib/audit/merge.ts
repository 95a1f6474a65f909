/**
 * Reading one page of a plan: each partition (a stream) is read lazily, newest first, and the streams
 * are merged by sort key. A row is taken only when it is the newest left in every stream, so a page is
 * exactly the next `limit` rows of the union, whatever the filter drops and wherever DynamoDB stops.
 *
 * A partition may hold batches of rows (records that raised nothing, lib/store/routine-batches.ts),
 * sorted by their newest row: their rows come out of order, so a partition's rows are held until
 * nothing it has not read can be newer (the `frontier`, the sort key of the last entry read).
 */
import { AUDIT_SORT } from "../model/audit-index.js";
import type { Filter, Plan } from "./query-plan.js";

export type Item = Record<string, unknown>;

/**
 * One Query call: the partition, where to resume, how many entries to evaluate. `items` are rows (a
 * batch's expanded, in any order); `last` is where DynamoDB stopped, whose sort key bounds every
 * entry not yet read.
 */
export type QueryFn = (stream: Stream, start: Item | undefined, limit: number) => Promise<{ items: Item[]; last?: Item }>;

/** One partition of one index, with the filter its entries must pass. */
export interface Stream {
  index: string;
  keyAttr: string;
  partition: string;
  filter?: Filter;
}

/** The partitions a plan reads: the key's, then those of batches not in the key's index. */
export function streamsOf(plan: Plan): Stream[] {
  const of = (index: string, keyAttr: string, partitions: string[], filter: Filter | undefined) =>
    partitions.map((partition): Stream => ({ index, keyAttr, partition, ...(filter ? { filter } : {}) }));
  return [
    ...of(plan.index, plan.keyAttr, plan.partitions, plan.filter),
    ...(plan.batches ? of(plan.batches.index, plan.batches.keyAttr, plan.batches.partitions, plan.batches.filter) : []),
  ];
}

const sortOf = (i: Item) => i[AUDIT_SORT] as string;
const newestFirst = (a: Item, b: Item) => (sortOf(a) > sortOf(b) ? -1 : sortOf(a) < sortOf(b) ? 1 : 0);

const MAX_EVALUATED = 1000;

class StreamReader {
  private buf: Item[] = [];
  private start: Item | undefined;
  private done = false;
  private evaluate: number;
  /** Every entry not yet read sorts below this. */
  private frontier: string | undefined;

  constructor(
    private readonly stream: Stream,
    private readonly query: QueryFn,
    private readonly range: { lo?: string; hi?: string },
    first: number,
  ) {
    this.evaluate = Math.min(MAX_EVALUATED, first);
  }

  /** The newest row held (entries not yet read may hold newer: see `mayHoldNewer`). */
  get head(): Item | undefined {
    return this.buf[0];
  }

  /** Whether an entry not yet read can hold a row newer than `row` (or any row, without one). */
  mayHoldNewer(row: Item | undefined): boolean {
    if (this.done) return false;
    // Not yet read, or read to a frontier above the row (a read leaves the stream done or with a frontier).
    return row === undefined || this.frontier === undefined || this.frontier > sortOf(row);
  }

  take(): Item | undefined {
    return this.buf.shift();
  }

  /** One Query: the next entries, their rows held in order. */
  async next(): Promise<void> {
    const res = await this.query(this.stream, this.start, this.evaluate);
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

/**
 * The next `want` rows of these streams, newest first. A row is taken once no stream can still hold a
 * newer one, so a stream whose filter keeps little is read only as far back as the page reaches.
 */
export async function readMerged(streams: Stream[], range: { lo?: string; hi?: string }, query: QueryFn, want: number): Promise<Item[]> {
  // Merged partitions start with a share of the page each; a busy one reads more as it is drained.
  const first = streams.length > 1 ? Math.max(8, Math.ceil((2 * want) / streams.length)) : want;
  const readers = streams.map((s) => new StreamReader(s, query, range, first));
  const out: Item[] = [];
  let previous: string | undefined;
  while (out.length < want) {
    let best: StreamReader | undefined;
    for (;;) {
      best = undefined;
      for (const r of readers) if (r.head && (!best || sortOf(r.head) > sortOf(best.head!))) best = r;
      const behind = readers.filter((r) => r.mayHoldNewer(best?.head));
      if (!behind.length) break;
      await Promise.all(behind.map((r) => r.next()));
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
