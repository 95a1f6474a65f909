/** Facts for `Lookout Health` events, as data: dispatch finds them (lib/ingest/dispatch.ts), alerts word them. */
export interface HealthFacts {
  /** Sources whose last polls failed, `failingAfter` or more in a row. */
  failing: Array<{ source: string; consecutiveFailures: number; lastError: string }>;
  /** Sources with no successful poll for longer than `stalledAfterMs`. */
  stalled: Array<{ source: string; lastOkAt: string; silentForMs: number }>;
  /** The platform refused the token; the sources whose last error says so. */
  tokenRejected: { sources: string[]; statuses: number[] } | undefined;
}
