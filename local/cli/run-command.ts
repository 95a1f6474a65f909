/** `lookout run`: the pipeline on this machine (local/runtime/run.ts), its summary for people or scripts. */
import { loadConfigFile } from "../../lib/config/load.js";
import { runLookout, type RunSummary } from "../runtime/run.js";
import { terminalLog } from "../runtime/view.js";
import { formatOf, jsonDocument, plural, reportFailure } from "./shared.js";

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
