/**
 * moto_server (Python, `pip install 'moto[server]'`, not an npm package): the AWS services with behaviour
 * that `lookout cloud-local` and the tests need — EventBridge rules delivering to SQS, SQS, SES v2 sends,
 * SSM and Secrets Manager. Uses the one at MOTO_ENDPOINT when set; otherwise starts one in a process
 * group of its own, watched so that it never outlives the process that started it (process-group.ts).
 * Tests skip, saying why, when moto_server is absent (`it.skipIf(!motoAvailable())`).
 */
import { PreflightError } from "./preflight.js";
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { freePort } from "./dynamodb-local.js";
import { killGroup, startWatchdog } from "./process-group.js";

/** moto rejects made-up region names (docs/architecture.md, "Tests on moto_server"): use a real one. */
export const MOTO_REGION = "us-east-1";
export const MOTO_CREDENTIALS = { accessKeyId: "testing", secretAccessKey: "testing" };
export const MOTO_ACCOUNT = "123456789012";
export const MOTO_ABSENT = "moto_server is not installed (pip install 'moto[server]'): test skipped";

export interface MotoServer {
  endpoint: string;
  /** For any AWS SDK v3 client: `new SQSClient(moto.clientConfig)`. */
  clientConfig: { endpoint: string; region: string; credentials: typeof MOTO_CREDENTIALS };
  /** Forgets every resource (POST /moto-api/reset): call between files sharing one server. */
  reset(): Promise<void>;
  /** Stops a server this helper started; a shared one (MOTO_ENDPOINT) is left running. */
  stop(): Promise<void>;
}

export function motoAvailable(): boolean {
  if (process.env.MOTO_ENDPOINT) return true;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, "moto_server"), constants.X_OK);
      return true;
    } catch {
      // not in this directory
    }
  }
  return false;
}

export async function startMoto(opts: { readyTimeoutMs?: number } = {}): Promise<MotoServer> {
  const shared = process.env.MOTO_ENDPOINT;
  if (shared) {
    await waitReady(shared, opts.readyTimeoutMs ?? 10_000, () => undefined, "; is it running there? (unset MOTO_ENDPOINT to have one started here)");
    return server(shared, async () => undefined);
  }
  const port = await freePort();
  const child = spawn("moto_server", ["-H", "127.0.0.1", "-p", String(port)], { stdio: ["ignore", "pipe", "pipe"], detached: true });
  const watchdog = child.pid ? startWatchdog(child.pid) : undefined;
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  child.stderr?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  let exited: string | undefined;
  child.once("error", (err) => (exited = `moto_server could not start: ${err.message}`));
  child.once("exit", (code) => (exited ??= `moto_server exited (code ${code}): ${output.trim().split("\n").slice(-3).join(" | ")}`));

  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitReady(endpoint, opts.readyTimeoutMs ?? 20_000, () => exited);
  } catch (err) {
    await kill(child);
    watchdog?.stdin?.end();
    throw err;
  }
  return server(endpoint, async () => {
    await kill(child);
    watchdog?.stdin?.end();
  });
}

function server(endpoint: string, stop: () => Promise<void>): MotoServer {
  return {
    endpoint,
    clientConfig: { endpoint, region: MOTO_REGION, credentials: MOTO_CREDENTIALS },
    async reset() {
      const res = await fetch(`${endpoint}/moto-api/reset`, { method: "POST" });
      if (!res.ok) throw new Error(`moto reset answered ${res.status}`);
    },
    stop,
  };
}

/** Waits for moto_server to answer; one that never does is a start-up problem said in a line (PreflightError). */
async function waitReady(endpoint: string, timeoutMs: number, exited: () => string | undefined, hint = ""): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const why = exited();
    if (why) throw new PreflightError(why);
    try {
      const res = await fetch(`${endpoint}/moto-api/`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new PreflightError(`moto_server did not answer at ${endpoint} within ${timeoutMs / 1000} s${hint}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((r) => child.once("exit", () => r()));
  killGroup(child, "SIGTERM");
  const timer = setTimeout(() => killGroup(child, "SIGKILL"), 3_000);
  await gone;
  clearTimeout(timer);
}
