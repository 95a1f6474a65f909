/**
 * What every command shares: exit codes, `--format`, output lines, failures said in lines. Every
 * expected failure — a bad configuration, a missing token, no Java, a taken port, an unreachable
 * platform — becomes a line that says what to do, and exit 1; a usage mistake, exit 2.
 */
import { type Config, ConfigError } from "../../lib/config/load.js";
import { dataClockLine, dataClockNow } from "../runtime/data-clock.js";
import { DynamoDbLocalError } from "../runtime/dynamodb-local.js";
import { PreflightError } from "../runtime/preflight.js";
import { redactText } from "../../lib/platform/redact.js";

/** Exit codes, the same for every command (README, "The `lookout` command"). */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** A flag, argument or value the command cannot take: said in a line, exit 2. */
export class UsageError extends Error {}

/** The `--format` asked for, one of `allowed` (the first is the default). */
export function formatOf<F extends string>(format: string | undefined, allowed: readonly F[]): F {
  const f = format ?? allowed[0]!;
  if (!(allowed as readonly string[]).includes(f)) throw new UsageError(`--format: "${f}" is not one of ${allowed.join(", ")}`);
  return f as F;
}

/** Writes one JSON document (stdout, for scripts: nothing else goes there with --format json). */
export const jsonDocument = (value: unknown): string => JSON.stringify(value, null, 2);

/** A count and its noun: "1 poll", "2 polls". */
export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/** Where a command writes its lines: stdout and stderr, a line each (tests pass their own). */
/**
 * The clock to read a store on: a local folder the demo wrote on its own clock (said on stderr), anything
 * else — a deployed table, a folder written on the wall clock — on the wall clock.
 */
export function readingClock(config: Pick<Config, "dataDir"> | undefined, deployed: boolean, io: Output): () => number {
  if (!config || deployed) return Date.now;
  const at = dataClockNow(config.dataDir);
  if (at === undefined) return Date.now;
  io.err(dataClockLine(at));
  return () => dataClockNow(config.dataDir) ?? Date.now();
}

export interface Output {
  out(line: string): void;
  err(line: string): void;
}

export const stdio: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

const MISSING_CONFIG_HINT = "pass --config FILE (see lookout.example.yaml), or run `npm start` without PLATFORM_API_URL for the embedded demo";

export function reportFailure(command: string, err: unknown, signal?: AbortSignal): number {
  // Ctrl-C while starting: what failed after it (a request cut short, a store being stopped) is no failure to report.
  if (signal?.aborted) {
    process.stderr.write(`lookout ${command}: stopped before it was running\n`);
    return EXIT.ok;
  }
  return reportFailureTo(command, err, (line) => process.stderr.write(`${line}\n`));
}

/** Says an expected failure through `err` and returns its exit code; a bug is thrown on. */
export function reportFailureTo(command: string, failure: unknown, err: (line: string) => void): number {
  const lines = failureLines(command, failure);
  if (!lines) throw failure;
  for (const line of lines) err(line);
  return failure instanceof UsageError ? EXIT.usage : EXIT.failure;
}

/**
 * An error's message as lines to show. Messages quote configuration (a URL with a password, a YAML
 * line): redacted like everything shown. A configuration's problems are one a line, each with its path:
 * the file's is kept as it is (a file named `tokens.yaml` is no secret, and whole-line redaction took
 * `tokens.yaml: routes…` for an assignment); the field's path is redacted alone (an unknown key may be a
 * pasted token), and what is said of the field.
 */
export function shownLines(err: Error): string[] {
  const text = err instanceof ConfigError
    ? err.problems.map((p) => `${err.source}: ${p.field ? `${redactText(p.field)}: ` : ""}${redactText(p.problem)}`).join("\n")
    : redactText(err.message);
  return text.split("\n");
}

/** An expected failure as the lines to show (each `lookout <command>: …`), or undefined for a bug. */
export function failureLines(command: string, err: unknown): string[] | undefined {
  if (err instanceof UsageError) return [`lookout ${command}: ${err.message}`];
  if (!(err instanceof ConfigError || err instanceof DynamoDbLocalError || err instanceof PreflightError)) return undefined;
  const missing = err instanceof ConfigError && err.field === "" && err.problem === "not found";
  const lines = shownLines(err).map((l) => `lookout ${command}: ${l}`);
  if (missing) lines[0] += `; ${MISSING_CONFIG_HINT}`;
  return lines;
}
