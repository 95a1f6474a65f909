/**
 * Facts for `Lookout Health` events about polling, as data: dispatch finds them (lib/dispatch/health-facts.ts),
 * alerts word them. Not the event's own `health` facts (HealthFacts in event.ts).
 */
export interface SourceHealthFacts {
  /** Sources whose last polls failed, `failingAfter` or more in a row. */
  failing: Array<{ source: string; consecutiveFailures: number; lastError: string }>;
  /** Sources with no successful poll for longer than `stalledAfterMs`: since their last, or since first watched (`watchedSince`) when none. */
  stalled: Array<{ source: string; silentForMs: number } & ({ lastOkAt: string; watchedSince?: never } | { watchedSince: string; lastOkAt?: never })>;
  /** The platform refused the token; the sources whose last error says so. */
  tokenRejected: { sources: string[]; statuses: number[] } | undefined;
}
