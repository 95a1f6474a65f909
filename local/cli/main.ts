/**
 * The `lookout` command line. Each command lives beside the stage it drives; this file only wires them.
 * Exit codes are the same everywhere (local/cli/shared.ts EXIT): 0 ok, 1 a failure found or a runtime
 * error, 2 usage (an unknown command or flag, a bad value).
 */
import { readFileSync } from "node:fs";
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { EXIT } from "./shared.js";
import { AUDIT_FORMATS, COMPLETION_SHELLS, DEFAULT_SERVE_PORT, REPORT_FORMATS } from "./choices.js";
import { completionCommand } from "./completion-commands.js";
import { reportStartupTo } from "../runtime/dynamodb-local.js";
import { EVENT_VERSION } from "../../lib/model/event.js";

/**
 * Each command's module, loaded when that command runs: a command starts without loading the others
 * (`lookout run` neither the cloud rehearsal nor the audit server, `lookout simulate` not the pipeline).
 */
const commands = {
  simulate: () => import("./simulate-command.js"),
  run: () => import("./run-command.js"),
  routes: () => import("./routes-commands.js"),
  start: () => import("./start-command.js"),
  cloudLocal: () => import("./cloud-local-command.js"),
  mutes: () => import("./mute-commands.js"),
  audit: () => import("./audit-commands.js"),
  report: () => import("./report-command.js"),
  status: () => import("./status-command.js"),
};

const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

/** `lookout 0.1.0 (event schema version 1)`: what `--version` prints. */
export const VERSION_LINE = `lookout ${PACKAGE_VERSION} (event schema version ${EVENT_VERSION})`;

/** `--format`, its values listed in help and completions, and refused by the parser (exit 2) when not one. */
const formatOption = (formats: readonly string[], what = "") =>
  new Option("--format <format>", `${formats.join(", ")}${what}`).choices(formats).default(formats[0]);

/** A whole number in a range, or a usage error naming the flag. */
const integer = (min: number, max: number) => (value: string) => {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
  return value;
};

/** The program, without running anything: `main` parses with it, completions are generated from it. */
export function buildProgram(run: (fn: () => Promise<number>) => () => Promise<void>): Command {
  const program = new Command("lookout")
    .description("Watches a deployment platform and tells on-call teams when something fails.")
    .version(VERSION_LINE, "-V, --version", "the package version and the event schema version")
    .exitOverride()
    // A usage error is one line and a pointer to the help, not forty lines of it.
    .showHelpAfterError("(lookout --help, or lookout <command> --help, for usage)");

  program
    .command("simulate")
    .description("start the platform simulator and print its URL, a token and the seeded ids")
    .option("--port <n>", "port to listen on (0 picks a free one)", integer(0, 65_535), "4010")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .addOption(formatOption(["text", "json"], ": json prints the connection details as one JSON object"))
    .option("--json", "the same as --format json")
    .action((opts: { port: string; host: string; json?: boolean; format: string }) =>
      run(async () => (await commands.simulate()).simulateCommand({ port: Number(opts.port), host: opts.host, json: Boolean(opts.json) || opts.format === "json" }))(),
    );

  program
    .command("run")
    .description("poll the configured platform, store what is new, raise and publish alerts")
    .option("--once", "poll every configured source once, publish, and exit")
    .option("--config <file>", "configuration file (YAML or JSON)", "lookout.yaml")
    .option("--verbose", "log every step")
    .addOption(formatOption(["text", "json"], ": json prints the summary as one JSON object, the running lines on stderr"))
    .action((opts: { once?: boolean; config: string; verbose?: boolean; format: string }) =>
      run(async () => (await commands.run()).runCommand({ once: Boolean(opts.once), configFile: opts.config, verbose: Boolean(opts.verbose), format: opts.format }))(),
    );

  program
    .command("check-config")
    .description("check a configuration (platform, watch, routes, notify) and say what it sets up")
    .option("--config <file>", "configuration file (YAML or JSON)", "lookout.yaml")
    .option("--deploy", "also what deploying to AWS refuses (env: secrets, a digest_within under 1m, …), each a problem")
    .addOption(formatOption(["text", "json"]))
    .action((opts: { config: string; format: string; deploy?: boolean }) =>
      run(async () => (await commands.routes()).checkConfigCommand({ configFile: opts.config, format: opts.format, deploy: Boolean(opts.deploy) }))());

  program
    .command("routes")
    .description("routes: who is told about which event")
    .command("test")
    .description("show which routes and receivers an event reaches, and why")
    .option("--config <file>", "configuration file (YAML or JSON)", "lookout.yaml")
    .requiredOption("--event <file>", "an event detail, or a whole envelope, as JSON")
    .addOption(formatOption(["text", "json"]))
    .action((opts: { config: string; event: string; format: string }) =>
      run(async () => (await commands.routes()).routesTestCommand({ configFile: opts.config, eventFile: opts.event, format: opts.format }))(),
    );

  program
    .command("start")
    .description("run Lookout on its embedded default: the simulator with a demo, or the configured platform")
    .option("--config <file>", "configuration file (YAML or JSON), used when it exists", "lookout.yaml")
    .action((opts: { config: string }) => run(async () => (await commands.start()).startCommand({ configFile: opts.config }))());

  program
    .command("cloud-local")
    .description("rehearse the deployment: the packaged stack's zips and template on DynamoDB Local and moto_server, against the simulator's demo or the configured platform")
    .option("--config <file>", "the configuration to package (default: a demo watching the simulator); PLATFORM_API_TOKEN gives its platform token")
    .addHelpText("after", [
      "",
      "Needs Java and moto_server (pip install 'moto[server]', or MOTO_ENDPOINT); DYNAMODB_ENDPOINT uses a running DynamoDB Local.",
      "Slack is shown in the terminal and email goes to SES on moto_server: nothing is posted for real.",
      "The functions' logs and .eml copies are kept in a work dir it names; Ctrl-C stops everything.",
      "See docs/cloud-local.md.",
    ].join("\n"))
    .action((opts: { config?: string }) => run(async () => (await commands.cloudLocal()).cloudLocalCommand(opts.config ? { configFile: opts.config } : {}))());

  const storeOptions = (cmd: Command) =>
    cmd
      .option("--config <file>", "configuration file: the local store is in its data_dir", "lookout.yaml")
      .option("--table <name>", "the deployed DynamoDB table (uses the environment's AWS credentials)");

  storeOptions(
    program
      .command("mute")
      .description("stop sending alerts for a scope for a while (they are still recorded, as suppressed)")
      .option("--organization <id|name>")
      .option("--project <id|name>")
      .option("--environment <id|name>")
      .option("--service <id|name>", "a service name may use * wildcards")
      .option("--cluster <uuid>", "a cluster's errors, by id")
      .option("--webhook <uuid>", "a webhook's failed deliveries, by id")
      .option("--for <duration>", "e.g. 30m, 2h, 1d")
      .option("--until <iso>", "e.g. 2026-12-01T08:00:00Z")
      .option("--reason <text>", "why (shown when someone asks why nobody was told)")
      .option("--by <who>", "who sets it (default: LOOKOUT_USER or your login)")
      .addOption(formatOption(["text", "json"])),
  ).action((opts) => run(async () => (await commands.mutes()).muteCommand(opts))());

  storeOptions(program.command("unmute").description("lift a mute before its end").argument("<id>").addOption(formatOption(["text", "json"])))
    .action((id: string, opts) => run(async () => (await commands.mutes()).unmuteCommand(id, opts))());

  storeOptions(
    program.command("mutes").description("list active mutes").option("--all", "include ended and lifted ones").addOption(formatOption(["table", "json"])),
  ).action((opts) => run(async () => (await commands.mutes()).mutesCommand(opts))());

  storeOptions(
    program
      .command("audit")
      .description("what Lookout saw and who was told: executions, records and alerts, newest first")
      .option("--organization <id|name>")
      .option("--project <id|name>")
      .option("--environment <id|name>")
      .option("--service <id|name>")
      .option("--cluster <id|name>")
      .option("--webhook <uuid>")
      .option("--kind <kind>", "deployment, webhook_delivery, cluster_log or health")
      .option("--status <status>", "the platform's status: DEPLOYMENT_ERROR, 503, error…")
      .option("--transition <t>", "failed, still_failing, recovered, cancelled, delivery_failed, cluster_error, …")
      .option("--severity <s>", "critical, error, warning or info")
      .option("--actor <who>", "who triggered the deployment")
      .option("--commit <id>", "a commit id, 7 characters or more")
      .option("--type <type>", "execution, record or alert")
      .option("--since <duration>", "e.g. 7d, 12h, 30m")
      .option("--from <iso>", "e.g. 2026-03-01 or 2026-03-01T08:00:00Z (inclusive)")
      .option("--to <iso>", "(exclusive)")
      .addOption(formatOption(AUDIT_FORMATS, ": json one document, ndjson one row a line"))
      .option("--limit <n>", "rows per page (1 to 1000)", "50")
      .option("--cursor <c>", "the next page of the same query")
      .option("--serve", "serve the audit web page and the audit API on 127.0.0.1 until Ctrl-C (the filters open the page)")
      .option("--port <n>", "with --serve: the port (0 picks a free one)", integer(0, 65_535), String(DEFAULT_SERVE_PORT)),
  ).action((opts) => run(async () => {
    const { auditCommand, auditServeCommand } = await commands.audit();
    return opts.serve ? auditServeCommand(opts) : auditCommand(opts);
  })());

  storeOptions(
    program
      .command("explain")
      .description("a record, execution or alert: as read, each transition, each alert, who was told and why not")
      .argument("<id>", "an ID from lookout audit: alert, record, or <service id>:<execution id>")
      .addOption(formatOption(["text", "json"])),
  ).action((id: string, opts) => run(async () => (await commands.audit()).explainCommand(id, opts))());

  storeOptions(
    program
      .command("report")
      .description("delivery figures per service: deployment frequency, lead time, change failure rate, time to restore")
      .option("--service <id|name>")
      .option("--environment <id|name>")
      .option("--since <duration>", "the period: e.g. 30d, 7d (default 30d)")
      .option("--from <iso>", "e.g. 2026-03-01 or 2026-03-01T08:00:00Z (inclusive)")
      .option("--to <iso>", "(exclusive; default now)")
      .addOption(formatOption(REPORT_FORMATS, ": json the whole report with every id, csv a line per service")),
  ).action((opts) => run(async () => (await commands.report()).reportCommand(opts))());

  program
    .command("status")
    .description("polling, the request budget, receivers, held digests and quarantine; exit 1 when something is unhealthy")
    .option("--config <file>", "configuration file: what is watched and who is told; the local store is in its data_dir", "lookout.yaml")
    .addOption(formatOption(["table", "json"]))
    .option("--table <name>", "the deployed DynamoDB table (default LOOKOUT_TABLE; uses the environment's AWS credentials)")
    .option("--region <region>", "the deployed table's region (default AWS_REGION)")
    .option("--quarantine-within <duration>", "quarantined records this recent make Lookout unhealthy", "24h")
    .action((opts) => run(async () => (await commands.status()).statusCommand(opts))());

  program
    .command("completion")
    .description("print a completion script: lookout completion bash > /etc/bash_completion.d/lookout")
    .addArgument(new Argument("<shell>", "the shell").choices(COMPLETION_SHELLS))
    .action((shell: string) => run(() => completionCommand(shell, buildProgram(() => async () => undefined)))());

  return program;
}

/**
 * Alert ids are base64url: about one in 64 begins with `-`, which a parser takes for an option. For a
 * command whose operand is such an id, an argument that starts with `-` and is none of the command's
 * options (nor an option's value) is the operand: it is moved behind `--`, where nothing is an option.
 */
export function operandsLast(program: Command, argv: string[], commandName: string): string[] {
  const at = argv.indexOf(commandName);
  const command = program.commands.find((c) => c.name() === commandName);
  if (at < 0 || !command || argv.includes("--")) return argv;
  const options = command.options;
  const known = (arg: string) => options.find((o) => o.long === arg.split("=")[0] || o.short === arg);
  const rest = argv.slice(at + 1);
  const kept: string[] = [];
  const operands: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const option = arg.startsWith("-") ? known(arg) : undefined;
    if (option) {
      kept.push(arg);
      // An option that takes a value, given apart: its value is the next argument, whatever it looks like.
      if ((option.required || option.optional) && !arg.includes("=") && i + 1 < rest.length) kept.push(rest[++i]!);
    } else if (arg.startsWith("-") && arg.length > 1 && !["-h", "--help"].includes(arg)) {
      operands.push(arg);
    } else {
      kept.push(arg);
    }
  }
  return operands.length ? [...argv.slice(0, at + 1), ...kept, "--", ...operands] : argv;
}

export async function main(argv: string[]): Promise<number> {
  let exit: number = EXIT.ok;
  const program = buildProgram((fn) => async () => {
    exit = await fn();
  });
  // DynamoDB Local's start is shown on stderr (a spinner on a terminal): stdout stays the command's.
  const stopReporting = reportStartupTo(process.stderr);
  try {
    await program.parseAsync(operandsLast(program, argv, "explain"), { from: "user" });
  } catch (err) {
    // --help and --version end the parse with code 0; every other parse error is a usage mistake.
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    throw err;
  } finally {
    stopReporting();
  }
  return exit;
}
