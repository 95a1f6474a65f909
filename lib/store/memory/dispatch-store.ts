/**
 * Dispatch's state held in memory: the DispatchStore port with DynamoDispatchStore's semantics (a
 * version per state, conditional writes, lost races read again), without the round trips. For the
 * simulated day, benchmarks and fast tests. The change feed's loop state the same way (FeedLoopStore).
 */
import type { DispatchState, FeedLoopState } from "../../model/dispatch.js";
import type { DispatchStore, FeedLoopStore } from "../../model/dispatch-store.js";
import { type Versioned, VersionedStates } from "../optimistic.js";

/** Named states in memory, each written on its version. */
class MemoryStates<S> extends VersionedStates<S> {
  private readonly states = new Map<string, Versioned<S>>();
  readonly writes = { count: 0 };

  constructor(what: string, opts: { maxAttempts?: number } = {}) {
    super(what, opts.maxAttempts);
  }

  protected async write(name: string, next: S, readVersion: number | undefined): Promise<boolean> {
    this.writes.count++;
    if (this.states.get(name)?.version !== readVersion) return false;
    this.states.set(name, { state: structuredClone(next), version: (readVersion ?? 0) + 1 });
    return true;
  }

  /** A copy, as a read from a table gives: what the caller does with it does not change what is stored. */
  protected async read(name: string): Promise<Versioned<S> | undefined> {
    // A read is a round trip: other writers may go between it and the write that follows.
    await Promise.resolve();
    const stored = this.states.get(name);
    return stored && structuredClone(stored);
  }
}

export class MemoryDispatchStore extends MemoryStates<DispatchState> implements DispatchStore {
  constructor(opts: { maxAttempts?: number } = {}) {
    super("dispatch state", opts);
  }
}

export class MemoryFeedLoopStore extends MemoryStates<FeedLoopState> implements FeedLoopStore {
  constructor(opts: { maxAttempts?: number } = {}) {
    super("change feed loop", opts);
  }
}
