/**
 * `npm run package [-- --stage dev] [-- --config F]`: packages the stack offline into .serverless/ — the
 * CloudFormation template and one zip per function — with no AWS credentials and no network, then prints
 * each bundle's size. Packages `--config`, else LOOKOUT_CONFIG, else lookout.example.yaml, for stage prod
 * unless told otherwise (the example's parameters are /lookout/prod/…). A configuration packaging would
 * refuse is said first, a problem a line, and nothing is touched; else an earlier packaging's .serverless/
 * is removed before serverless starts.
 */
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { bundleSizes, formatSizes } from "./bundle-sizes.js";
import { shownLines } from "../local/cli/shared.js";

export const ROOT = resolve(import.meta.dirname, "..");
export const DEFAULT_CONFIG = "lookout.example.yaml";
export const DEFAULT_STAGE = "prod";

export interface PackageOptions {
  stage?: string;
  /** Where the template and zips go; default .serverless. */
  outDir?: string;
  /** The configuration to package, relative to the project; default LOOKOUT_CONFIG or the example. */
  config?: string;
  /** Further arguments for `serverless package`. */
  args?: string[];
  /** Print serverless's output as it comes (the CLI); otherwise it is kept for the error. */
  inherit?: boolean;
  /**
   * Package a copy of the project in a temporary directory (node_modules linked), so that the project's
   * own .serverless/ and .esbuild/ are left alone (serverless empties .serverless/ whatever --package
   * says). The tests do this.
   */
  isolated?: boolean;
  /** Another copy of the project to package in place (an earlier commit's, for the bundle bench); default this one. */
  serviceDir?: string;
  /** Stop serverless and fail after this long (it can wait forever on a build that failed); default no limit. */
  timeoutMs?: number;
  /**
   * Files written into the isolated copy before packaging, by path relative to it (`lookout cloud-local`
   * packages the configuration it generates this way). Only with `isolated`.
   */
  files?: Record<string, string>;
  /** Variables for the packaging besides the process's own (LOOKOUT_RUNTIME_AWS_SDK=1: infra/esbuild-plugins.cjs). */
  env?: NodeJS.ProcessEnv;
}

export interface Packaged {
  /** The directory that was packaged: the project, or its temporary copy. */
  serviceDir: string;
  outDir: string;
  template: string;
  ms: number;
}

/** osls's own entry point: no npx, no shell, the version package-lock.json pins. */
const serverlessBin = () => createRequire(import.meta.url).resolve("osls/bin/serverless.js");

/** Not copied into an isolated package's directory. */
const LEFT_OUT = new Set(["node_modules", ".git", ".serverless", ".esbuild", ".lookout", "coverage", "dist"]);

function isolatedCopy(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "lookout-package-"));
  for (const entry of readdirSync(ROOT)) {
    if (!LEFT_OUT.has(entry)) cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

export function packageStack(opts: PackageOptions = {}): Promise<Packaged> {
  const copied = !opts.serviceDir && opts.isolated;
  if (opts.files && !copied) throw new Error("packageStack: files are written into an isolated copy only");
  const serviceDir = opts.serviceDir ?? (copied ? isolatedCopy(opts.files) : ROOT);
  // A failed package leaves no copy of the project behind (a packaged one is the caller's to remove).
  const failed = (err: Error) => {
    if (copied) rmSync(serviceDir, { recursive: true, force: true });
    return err;
  };
  const outDir = resolve(serviceDir, opts.outDir ?? ".serverless");
  const args = [serverlessBin(), "package", "--stage", opts.stage ?? DEFAULT_STAGE, ...(opts.outDir ? ["--package", outDir] : []), ...(opts.args ?? [])];
  // serverless-esbuild builds in the system's temporary directory and leaves its work there: given one of
  // its own, removed when packaging ends, it leaves nothing.
  const scratch = mkdtempSync(join(tmpdir(), "lookout-package-tmp-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TMPDIR: scratch,
    LOOKOUT_CONFIG: opts.config ?? process.env.LOOKOUT_CONFIG ?? DEFAULT_CONFIG,
    // Packaging asks AWS nothing; a region keeps the SDK from looking for one in ~/.aws.
    AWS_REGION: process.env.AWS_REGION ?? "us-east-1",
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
    ...opts.env,
  };
  const started = Date.now();
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { cwd: serviceDir, env, stdio: opts.inherit ? "inherit" : ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
    child.stderr?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
    let timedOut = false;
    const timer = opts.timeoutMs === undefined ? undefined : setTimeout(() => ((timedOut = true), child.kill("SIGKILL")), opts.timeoutMs);
    child.once("error", (err) => {
      clearTimeout(timer);
      fail(failed(err));
    });
    child.once("close", () => rmSync(scratch, { recursive: true, force: true }));
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (signal === "SIGKILL" && timedOut) fail(failed(new Error(`serverless package did not end within ${(opts.timeoutMs ?? 0) / 1000} s${output ? `:\n${output.trim()}` : ""}`)));
      else if (code === 0) done({ serviceDir, outDir, template: resolve(outDir, "cloudformation-template-update-stack.json"), ms: Date.now() - started });
      else fail(failed(new Error(`serverless package failed (${signal ?? `exit ${code}`})${output ? `:\n${output.trim()}` : ""}`)));
    });
  });
}

/** `--name value` or `--name=value` taken out of `argv` (the rest goes to serverless), or undefined. */
function option(argv: string[], name: string): string | undefined {
  const joined = argv.findIndex((a) => a.startsWith(`${name}=`));
  if (joined >= 0) return argv.splice(joined, 1)[0]!.slice(name.length + 1) || missing(name);
  const i = argv.indexOf(name);
  if (i < 0) return undefined;
  const [, value] = argv.splice(i, 2);
  return !value || value.startsWith("--") ? missing(name) : value;
}
const missing = (name: string): never => {
  throw new Error(`${name} needs a value`);
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const argv = process.argv.slice(2);
  let stage: string | undefined;
  let config: string;
  try {
    stage = option(argv, "--stage");
    // As check-config and cloud-local take it; serverless would read `--config` as its own service file.
    config = option(argv, "--config") ?? process.env.LOOKOUT_CONFIG ?? DEFAULT_CONFIG;
    // What the configuration's checks refuse is said here, a problem a line, before serverless wraps it.
    const { loadDeployConfig } = await import("../infra/stack.js");
    loadDeployConfig(ROOT, config);
  } catch (err) {
    // Said as every command says it: a quoted line of the file (a URL with a password) is redacted.
    for (const line of shownLines(err as Error)) console.error(`package: ${line}`);
    process.exit(1);
  }
  // An earlier packaging's output is not left to pass for this one's, should this one fail. (A refused
  // configuration, said above, touches nothing: the tests check that refusal in the project itself.)
  rmSync(join(ROOT, ".serverless"), { recursive: true, force: true });
  console.log(`packaging ${config} for stage ${stage ?? DEFAULT_STAGE}`);
  try {
    const p = await packageStack({ ...(stage ? { stage } : {}), config, args: argv, inherit: true });
    console.log(`\npackaged in ${(p.ms / 1000).toFixed(1)} s: ${p.template}\n`);
    console.log(formatSizes(bundleSizes(p.outDir)));
  } catch (err) {
    console.error(`package: ${(err as Error).message}`);
    process.exit(1);
  }
}
