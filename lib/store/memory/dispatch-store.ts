/**
 * Dispatch's state held in memory: the DispatchStore port with DynamoDispatchStore's semantics (a
 * version per state, conditional writes, lost races read again), without the round trips. For the
 * simulated day, benchmarks and fast tests.
 */
import type { DispatchState } from "../../model/dispatch.js";
import type { DispatchStore, Updated } from "../../model/dispatch-store.js";
import { type Versioned, jitter, updateOnVersion } from "../optimistic.js";

export class MemoryDispatchStore implements DispatchStore {
  private readonly states = new Map<string, Versioned<DispatchState>>();
  readonly writes = { count: 0 };

  constructor(private readonly opts: { maxAttempts?: number } = {}) {}

  async get(name: string): Promise<DispatchState | undefined> {
    return (await this.read(name))?.state;
  }

  update(name: string, fn: (current: DispatchState | undefined) => DispatchState | undefined): Promise<Updated> {
    const opts = { attempts: this.opts.maxAttempts ?? 20, what: `dispatch state ${name}`, pause: jitter };
    return updateOnVersion(opts, { read: () => this.read(name), write: (next, version) => this.write(name, next, version) }, fn);
  }

  private async write(name: string, next: DispatchState, readVersion: number | undefined): Promise<boolean> {
    this.writes.count++;
    if (this.states.get(name)?.version !== readVersion) return false;
    this.states.set(name, { state: structuredClone(next), version: (readVersion ?? 0) + 1 });
    return true;
  }

  /** A copy, as a read from a table gives: what the caller does with it does not change what is stored. */
  private async read(name: string): Promise<Versioned<DispatchState> | undefined> {
    // A read is a round trip: other writers may go between it and the write that follows.
    await Promise.resolve();
    const stored = this.states.get(name);
    return stored && structuredClone(stored);
  }
}
