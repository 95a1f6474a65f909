/**
 * The port dispatch keeps its state through (one state per platform token). Adapters:
 * lib/store/dispatch-store.ts (DynamoDB), lib/store/memory/dispatch-store.ts (in memory); both are
 * checked by the same contract tests (test/support/dispatch-store-contract.ts).
 */
import type { DispatchState, FeedLoopState } from "./dispatch.js";

export interface DispatchStore {
  get(name: string): Promise<DispatchState | undefined>;
  /**
   * Reads the state, applies `fn` and writes the result unless `fn` returns undefined (nothing to
   * write), on condition that nobody wrote since the read. When someone did, reads again and applies
   * `fn` again: `fn` must be pure.
   */
  update(name: string, fn: (current: DispatchState | undefined) => DispatchState | undefined): Promise<Updated>;
  /** Writes attempted, for benchmarks and the steady-state test. */
  readonly writes: { count: number };
}

export interface Updated {
  state: DispatchState | undefined;
  written: boolean;
}

/**
 * The port the change feed's loop keeps its lease and reads through (lib/dispatch/feed-loop.ts), with the
 * same optimistic update as dispatch's state. Adapters beside DispatchStore's.
 */
export interface FeedLoopStore {
  get(name: string): Promise<FeedLoopState | undefined>;
  update(name: string, fn: (current: FeedLoopState | undefined) => FeedLoopState | undefined): Promise<{ state: FeedLoopState | undefined; written: boolean }>;
}
