/**
 * The commands that run the pipeline, and what every command shares: exit codes, `--format`, failures
 * said in lines. Every expected failure — a bad configuration, a missing token, no Java, a taken port,
 * an unreachable platform — becomes a line that says what to do, and exit 1; a usage mistake, exit 2.
 */
import { ConfigError, loadConfigFile } from "../lib/config/load.js";
import { DynamoDbLocalError } from "./dynamodb-local.js";
import { PreflightError, runLookout, type RunSummary } from "./run.js";
import { terminalLog } from "./view.js";
import { redactText } from "../lib/platform/redact.js";

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

export interface RunSummaryJson {
  polls: number;
  failed_polls: number;
  requests: number;
  new_records: number;
  alerts: number;
  published: number;
  /** Events whose delivery is unfinished: the next run retries them. */
  owed: number;
  /** Alerts held for a digest that a later run sends. */
  held: number;
}

/** A count and its noun: "1 poll", "2 polls". */
export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * A run's counts for people. Alerts are those polls raised; published events also count Lookout's own
 * health events, so "0 alerts, 1 published" must not read as a contradiction.
 */
export const runSummaryText = (s: RunSummary): string =>
  `${plural(s.polls, "poll")}, ${plural(s.requests, "request")}, ${plural(s.newRecords, "new record")}, ` +
  `${plural(s.alerts, "alert")} raised by polls, ${plural(s.published, "event")} published (health included)` +
  (s.owed ? `; ${plural(s.owed, "event")} not yet delivered to every receiver: the next run retries (lookout status)` : "") +
  (s.held ? `; ${plural(s.held, "alert")} held for a digest: a run within notify.digest_within sends it` : "");

export async function runCommand(opts: { once: boolean; configFile: string; verbose: boolean; format?: string }): Promise<number> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    const format = formatOf(opts.format, ["text", "json"] as const);
    const config = loadConfigFile(opts.configFile);
    // With --format json, stdout carries the summary alone: the running lines go to stderr.
    const lines = format === "json" ? process.stderr : process.stdout;
    const summary = await runLookout({
      config,
      once: opts.once,
      log: terminalLog(process.stderr, opts.verbose),
      print: (line) => lines.write(`${line}\n`),
      signal: controller.signal,
    });
    if (format === "json") {
      const doc: RunSummaryJson = {
        polls: summary.polls, failed_polls: summary.failedPolls, requests: summary.requests,
        new_records: summary.newRecords, alerts: summary.alerts, published: summary.published,
        owed: summary.owed ?? 0, held: summary.held ?? 0,
      };
      process.stdout.write(`${jsonDocument(doc)}\n`);
    } else {
      process.stdout.write(`lookout: ${runSummaryText(summary)}\n`);
    }
    // A single pass that could not read a source has not done its job: a script must be able to tell.
    if (opts.once && summary.failedPolls) {
      process.stderr.write(`lookout run: ${summary.failedPolls} of ${summary.polls} polls failed; their lines above say why\n`);
      return 1;
    }
    return 0;
  } catch (err) {
    return reportFailure("run", err, controller.signal);
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}

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

/** An expected failure as the lines to show (each `lookout <command>: …`), or undefined for a bug. */
export function failureLines(command: string, err: unknown): string[] | undefined {
  if (err instanceof UsageError) return [`lookout ${command}: ${err.message}`];
  if (!(err instanceof ConfigError || err instanceof DynamoDbLocalError || err instanceof PreflightError)) return undefined;
  const missing = err instanceof ConfigError && err.field === "" && err.problem === "not found";
  // Messages quote configuration (a URL with a password, a YAML line): redacted like everything shown.
  // A configuration's problems are one a line, each with its path.
  const lines = redactText(err.message).split("\n").map((l) => `lookout ${command}: ${l}`);
  if (missing) lines[0] += `; ${MISSING_CONFIG_HINT}`;
  return lines;
}
