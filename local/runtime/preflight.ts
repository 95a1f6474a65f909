/**
 * A start-up problem of one machine's runtime, with one line that says what to do: a file of its own so
 * that the commands that only report it (local/cli/shared.ts) do not load the runtime.
 */
/** A start-up problem with one line that says what to do. */
export class PreflightError extends Error {
  /** The platform's refusal, as a poll would have failed with it. */
  constructor(message: string, readonly failure?: { kind: string; status?: number; message: string }) {
    super(message);
  }
}
