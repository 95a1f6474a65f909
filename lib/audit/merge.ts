/**
 * Reading one page of a plan: each partition is read lazily, newest first, and the partitions are
 * merged by sort key. A row is taken only when it is the newest left in every partition, so a page is
 * exactly the next `limit` rows of the union, whatever the filter drops and wherever DynamoDB stops.
 */
import { AUDIT_SORT } from "../model/audit-index.js";
import type { Plan } from "./plan.js";

export type Item = Record<string, unknown>;

/** One Query call: the partition, where to resume, how many items to evaluate. */
export type QueryFn = (partition: string, start: Item | undefined, limit: number) => Promise<{ items: Item[]; last?: Item }>;

const MAX_EVALUATED = 1000;

class PartitionReader {
  private buf: Item[] = [];
  private start: Item | undefined;
  private done = false;
  private evaluate: number;

  constructor(
    private readonly partition: string,
    private readonly query: QueryFn,
    private readonly hi: string | undefined,
    first: number,
  ) {
    this.evaluate = Math.min(MAX_EVALUATED, first);
  }

  get head(): Item | undefined {
    return this.buf[0];
  }

  get needsRead(): boolean {
    return !this.buf.length && !this.done;
  }

  take(): Item | undefined {
    return this.buf.shift();
  }

  /** Reads until there is a row or the partition is exhausted. */
  async fill(): Promise<void> {
    while (this.needsRead) {
      const res = await this.query(this.partition, this.start, this.evaluate);
      // BETWEEN includes its upper bound: that row is the previous page's last.
      for (const item of res.items) if (this.hi === undefined || (item[AUDIT_SORT] as string) < this.hi) this.buf.push(item);
      this.start = res.last;
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
  const readers = plan.partitions.map((p) => new PartitionReader(p, query, plan.hi, first));
  const out: Item[] = [];
  while (out.length < want) {
    await Promise.all(readers.filter((r) => r.needsRead).map((r) => r.fill()));
    let best: PartitionReader | undefined;
    for (const r of readers) {
      const h = r.head;
      if (h && (!best || (h[AUDIT_SORT] as string) > (best.head![AUDIT_SORT] as string))) best = r;
    }
    if (!best) break;
    out.push(best.take()!);
  }
  return out;
}
