/**
 * The commands that run the pipeline. Every expected failure — a bad configuration, a missing token,
 * no Java, a taken port, an unreachable platform — becomes one line that says what to do, and exit 1.
 */
import { ConfigError, loadConfigFile } from "../lib/config/load.js";
import { DynamoDbLocalError } from "./dynamodb-local.js";
import { PreflightError, runLookout } from "./run.js";
import { terminalLog } from "./view.js";
import { redactText } from "../lib/platform/redact.js";

export async function runCommand(opts: { once: boolean; configFile: string; verbose: boolean }): Promise<number> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    const config = loadConfigFile(opts.configFile);
    const summary = await runLookout({
      config,
      once: opts.once,
      log: terminalLog(process.stderr, opts.verbose),
      print: (line) => process.stdout.write(`${line}\n`),
      signal: controller.signal,
    });
    process.stdout.write(
      `lookout: ${summary.polls} polls, ${summary.requests} requests, ${summary.newRecords} new records, ${summary.alerts} alerts, ${summary.published} published\n`,
    );
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
    return 0;
  }
  if (err instanceof ConfigError || err instanceof DynamoDbLocalError || err instanceof PreflightError) {
    const missing = err instanceof ConfigError && err.field === "" && err.problem === "not found";
    // Messages quote configuration (a URL with a password, a YAML line): redacted like everything shown.
    process.stderr.write(`lookout ${command}: ${redactText(err.message)}${missing ? `; ${MISSING_CONFIG_HINT}` : ""}\n`);
    return 1;
  }
  throw err;
}
