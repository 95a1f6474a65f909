/**
 * Dispatch's state held in memory: the DispatchStore port with DynamoDispatchStore's semantics (a
 * version per state, conditional writes, lost races read again), without the round trips. For the
 * simulated day, benchmarks and fast tests.
 */
import type { DispatchState } from "../../model/dispatch.js";
import type { DispatchStore } from "../../model/dispatch-store.js";
import { type Versioned, VersionedStates } from "../optimistic.js";

export class MemoryDispatchStore extends VersionedStates<DispatchState> implements DispatchStore {
  private readonly states = new Map<string, Versioned<DispatchState>>();
  readonly writes = { count: 0 };

  constructor(opts: { maxAttempts?: number } = {}) {
    super("dispatch state", opts.maxAttempts);
  }

  protected async write(name: string, next: DispatchState, readVersion: number | undefined): Promise<boolean> {
    this.writes.count++;
    if (this.states.get(name)?.version !== readVersion) return false;
    this.states.set(name, { state: structuredClone(next), version: (readVersion ?? 0) + 1 });
    return true;
  }

  /** A copy, as a read from a table gives: what the caller does with it does not change what is stored. */
  protected async read(name: string): Promise<Versioned<DispatchState> | undefined> {
    // A read is a round trip: other writers may go between it and the write that follows.
    await Promise.resolve();
    const stored = this.states.get(name);
    return stored && structuredClone(stored);
  }
}
