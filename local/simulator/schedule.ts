/**
 * Actions due at simulated instants (a run starting or ending, a scheduled cluster run), kept in a binary
 * heap ordered by (time, insertion). `runDue(now)` fires every action due, in order.
 */
interface Entry {
  atMs: number;
  seq: number;
  fire: () => void;
}

export class Schedule {
  private readonly heap: Entry[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  add(atMs: number, fire: () => void): void {
    this.heap.push({ atMs, seq: this.seq++, fire });
    this.up(this.heap.length - 1);
  }

  /** Fires the due actions in time order; returns how many fired. Actions may schedule others. */
  runDue(nowMs: number): number {
    let fired = 0;
    while (this.heap.length > 0 && this.heap[0]!.atMs <= nowMs) {
      const top = this.pop();
      top.fire();
      fired++;
    }
    return fired;
  }

  private less(a: Entry, b: Entry): boolean {
    return a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq);
  }

  private pop(): Entry {
    const top = this.heap[0]!;
    const last = this.heap.pop()!;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.down(0);
    }
    return top;
  }

  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}
