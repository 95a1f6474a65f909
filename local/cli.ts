/**
 * The `lookout` command line. Each command lives beside the stage it drives; this file only wires them.
 */
import { Command, CommanderError } from "commander";
import { simulateCommand } from "./simulator/command.js";
import { runCommand } from "./commands.js";
import { startCommand } from "./start.js";

export async function main(argv: string[]): Promise<number> {
  const program = new Command("lookout")
    .description("Watches a deployment platform and tells on-call teams when something fails.")
    .exitOverride()
    .showHelpAfterError();

  let exit = 0;
  const run = (fn: () => Promise<number>) => async () => {
    exit = await fn();
  };

  program
    .command("simulate")
    .description("start the platform simulator and print its URL, a token and the seeded ids")
    .option("--port <n>", "port to listen on (0 picks a free one)", "4010")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--json", "print the connection details as one JSON object")
    .action((opts: { port: string; host: string; json?: boolean }) =>
      run(() => simulateCommand({ port: Number(opts.port), host: opts.host, json: Boolean(opts.json) }))(),
    );

  program
    .command("run")
    .description("poll the configured platform, store what is new, raise and publish alerts")
    .option("--once", "poll every configured source once, publish, and exit")
    .option("--config <file>", "configuration file (YAML or JSON)", "lookout.yaml")
    .option("--verbose", "log every step")
    .action((opts: { once?: boolean; config: string; verbose?: boolean }) =>
      run(() => runCommand({ once: Boolean(opts.once), configFile: opts.config, verbose: Boolean(opts.verbose) }))(),
    );

  program
    .command("start")
    .description("run Lookout on its embedded default: the simulator with a demo, or the configured platform")
    .option("--config <file>", "configuration file (YAML or JSON), used when it exists", "lookout.yaml")
    .action((opts: { config: string }) => run(() => startCommand({ configFile: opts.config }))());

  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    throw err;
  }
  return exit;
}
