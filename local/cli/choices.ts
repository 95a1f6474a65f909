/**
 * The values the command line offers, kept apart from the commands that use them: the program is built
 * (help, completions, choices the parser refuses) without loading any command (local/cli/main.ts).
 */
/** `lookout audit --format`: a table for people; for scripts one JSON document, a row a line (ndjson), or CSV. */
export const AUDIT_FORMATS = ["table", "json", "ndjson", "csv"] as const;
export const REPORT_FORMATS = ["table", "json", "csv"] as const;
export const COMPLETION_SHELLS = ["bash", "zsh", "fish"] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];
/** `lookout audit --serve`'s port. */
export const DEFAULT_SERVE_PORT = 4020;
