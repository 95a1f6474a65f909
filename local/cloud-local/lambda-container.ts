/**
 * A packaged function as Lambda runs it (docs/cloud-local.md): its zip extracted as the task root, and
 * containers — each its own Node process with the function's environment from the template, its memory
 * size as the heap limit and its handler imported once (bootstrap.mjs) — each running one event at a
 * time, up to the function's concurrency. A container that outlives its timeout is killed and the
 * invocation fails `Sandbox.Timedout`; one whose process dies mid-event fails `Runtime.ExitError`; both
 * are replaced by a cold one for the next event, as Lambda replaces a sandbox.
 */
import { type ChildProcess, fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createWriteStream, mkdirSync, rmSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { extractZip } from "../../scripts/zip.js";
import type { Activity, Invocation } from "./call-function.js";

/** One `AWS::Lambda::Function` of the template, resolved. */
export interface FunctionDefinition {
  logicalId: string;
  name: string;
  arn: string;
  /** `functions/poll.handler` */
  handler: string;
  runtime: string;
  memoryMb: number;
  timeoutSec: number;
  /** The template's `Environment.Variables`, resolved. */
  environment: Record<string, string>;
  /** The template's `Layers`: only the Parameters and Secrets extension's is played (secrets-extension.ts). */
  layers: string[];
  /** The packaged zip. */
  zip: string;
  /** ReservedConcurrentExecutions, when the template sets it. */
  reservedConcurrency?: number;
}

export interface FunctionHostOptions {
  /** Where the task root is extracted and the function's log written. */
  workDir: string;
  /** What every container gets besides the template's variables: region, credentials, endpoints. */
  baseEnv: Record<string, string>;
  /** Containers at once when the template reserves no concurrency. */
  defaultConcurrency?: number;
  activity?: Activity;
}

/** Lambda's largest synchronous answer. */
const MAX_RESPONSE_BYTES = 6 * 1024 * 1024;
const BOOTSTRAP = fileURLToPath(new URL("./bootstrap.mjs", import.meta.url));

/** Where Lambda puts the task root: values of the template that name it are pointed at the extracted zip. */
const LAMBDA_TASK_ROOT = "/var/task";

interface Container {
  child: ChildProcess;
  ready: Promise<{ initMs: number }>;
  busy: boolean;
  /** It has run an event: the next one is not a cold start. */
  warm: boolean;
  /** The invocation under way: settles it when the process dies. */
  pending?: (outcome: Invocation) => void;
}

export class FunctionHost {
  readonly taskRoot: string;
  readonly logFile: string;
  private readonly idle: Container[] = [];
  private readonly all = new Set<Container>();
  private readonly waiting: Array<() => void> = [];
  private readonly log: WriteStream;
  private stopped = false;
  /** Invocations run, cold starts among them: what `lookout cloud-local` reports. */
  readonly counts = { invocations: 0, errors: 0, coldStarts: 0 };

  constructor(readonly def: FunctionDefinition, private readonly opts: FunctionHostOptions) {
    this.taskRoot = join(opts.workDir, def.name);
    rmSync(this.taskRoot, { recursive: true, force: true });
    extractZip(def.zip, this.taskRoot);
    mkdirSync(join(opts.workDir, "logs"), { recursive: true });
    this.logFile = join(opts.workDir, "logs", `${def.name}.log`);
    this.log = createWriteStream(this.logFile, { flags: "a" });
  }

  get concurrency(): number {
    return this.def.reservedConcurrency ?? this.opts.defaultConcurrency ?? 10;
  }

  /** The process ids of containers running an event now (the crash test kills one). */
  busyPids(): number[] {
    return [...this.all].filter((c) => c.busy && c.child.pid).map((c) => c.child.pid!);
  }

  /** Runs one event; waits for a container when all the function's concurrency is busy. */
  async invoke(event: unknown): Promise<Invocation> {
    const started = Date.now();
    const container = await this.acquire();
    const requestId = randomUUID();
    this.counts.invocations++;
    let outcome: Invocation;
    try {
      const ready = await container.ready;
      outcome = await this.run(container, event, requestId, ready.initMs);
    } catch (err) {
      outcome = { ok: false, errorType: "Runtime.ExitError", errorMessage: (err as Error).message, ms: Date.now() - started };
    }
    if (!outcome.ok) this.counts.errors++;
    this.release(container, outcome);
    return outcome;
  }

  /** Kills every container; events under way fail as a killed sandbox's do. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.all].map((c) => this.kill(c)));
    await new Promise<void>((r) => this.log.end(() => r()));
  }

  private async acquire(): Promise<Container> {
    for (;;) {
      if (this.stopped) throw new Error(`${this.def.name} is stopped`);
      const idle = this.idle.pop();
      if (idle) return ((idle.busy = true), idle);
      if (this.all.size < this.concurrency) {
        const c = this.spawn();
        c.busy = true;
        return c;
      }
      await new Promise<void>((r) => this.waiting.push(r));
    }
  }

  private release(c: Container, outcome: Invocation): void {
    c.busy = false;
    c.pending = undefined;
    // A timed-out or dead sandbox is not reused.
    if (!outcome.ok && (outcome.errorType === "Sandbox.Timedout" || outcome.errorType === "Runtime.ExitError")) void this.kill(c);
    else if (this.all.has(c)) this.idle.push(c);
    this.waiting.shift()?.();
  }

  private run(c: Container, event: unknown, requestId: string, initMs: number): Promise<Invocation> {
    const started = Date.now();
    const cold = !c.warm;
    c.warm = true;
    if (cold) this.counts.coldStarts++;
    return new Promise<Invocation>((resolve) => {
      const timeoutMs = this.def.timeoutSec * 1000;
      let maxRssKb: number | undefined;
      const finish = (o: Invocation) => {
        c.pending = undefined;
        clearTimeout(timer);
        c.child.off("message", onMessage);
        this.report(requestId, o, cold ? initMs : undefined, maxRssKb);
        resolve(o);
      };
      const timer = setTimeout(() => {
        finish({ ok: false, errorType: "Sandbox.Timedout", errorMessage: `Task timed out after ${this.def.timeoutSec.toFixed(2)} seconds`, ms: Date.now() - started });
        void this.kill(c);
      }, timeoutMs);
      c.pending = (o) => finish({ ...o, ms: Date.now() - started });
      const onMessage = (m: { type?: string; id?: string; ok?: boolean; payload?: string; errorType?: string; errorMessage?: string; maxRssKb?: number }) => {
        if (m?.type !== "result" || m.id !== requestId) return;
        maxRssKb = m.maxRssKb;
        if (!m.ok) return finish({ ok: false, errorType: m.errorType ?? "Error", errorMessage: m.errorMessage ?? "", ms: Date.now() - started });
        const text = m.payload ?? "null";
        if (Buffer.byteLength(text) > MAX_RESPONSE_BYTES) {
          return finish({ ok: false, errorType: "Function.ResponseSizeTooLarge", errorMessage: `Response payload size (${Buffer.byteLength(text)} bytes) exceeded maximum allowed payload size (${MAX_RESPONSE_BYTES} bytes).`, ms: Date.now() - started });
        }
        finish({ ok: true, payload: JSON.parse(text), ms: Date.now() - started });
      };
      c.child.on("message", onMessage);
      c.child.send({ type: "invoke", id: requestId, event: JSON.stringify(event ?? null), deadline: Date.now() + timeoutMs, requestId, functionArn: this.def.arn });
    });
  }

  /** Lambda's REPORT line, its fields tab-separated as CloudWatch shows them; the container's peak RSS as its memory used. */
  private report(requestId: string, o: Invocation, initMs: number | undefined, maxRssKb: number | undefined): void {
    const fields = [
      `REPORT RequestId: ${requestId}`, `Duration: ${o.ms.toFixed(2)} ms`, `Billed Duration: ${Math.max(1, Math.ceil(o.ms))} ms`,
      `Memory Size: ${this.def.memoryMb} MB`, `Max Memory Used: ${maxRssKb === undefined ? "-" : Math.ceil(maxRssKb / 1024)} MB`,
      ...(initMs === undefined ? [] : [`Init Duration: ${initMs.toFixed(2)} ms`]),
      ...(o.ok ? [] : [`Status: error`, `Error Type: ${o.errorType}`, o.errorMessage]),
    ];
    this.log.write(`${fields.join("\t")}\n`);
  }

  private spawn(): Container {
    const def = this.def;
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      TZ: ":UTC",
      LANG: "en_US.UTF-8",
      ...this.opts.baseEnv,
      LAMBDA_TASK_ROOT: this.taskRoot,
      _HANDLER: def.handler,
      AWS_EXECUTION_ENV: `AWS_Lambda_${def.runtime}`,
      AWS_LAMBDA_FUNCTION_NAME: def.name,
      AWS_LAMBDA_FUNCTION_VERSION: "$LATEST",
      // Powertools reports a cold start only when Lambda says the sandbox was started on demand.
      AWS_LAMBDA_INITIALIZATION_TYPE: "on-demand",
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(def.memoryMb),
      AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${def.name}`,
      AWS_LAMBDA_LOG_STREAM_NAME: `cloud-local/${randomUUID()}`,
      ...Object.fromEntries(Object.entries(def.environment).map(([k, v]) => [k, v.startsWith(`${LAMBDA_TASK_ROOT}/`) ? join(this.taskRoot, v.slice(LAMBDA_TASK_ROOT.length)) : v])),
    };
    const child = fork(BOOTSTRAP, [def.handler], {
      cwd: this.taskRoot,
      env,
      // Lambda gives Node most of the function's memory as heap; the rest is the runtime's.
      execArgv: [`--max-old-space-size=${Math.max(64, Math.floor(def.memoryMb * 0.9))}`],
      stdio: ["ignore", "pipe", "pipe", "ipc"],
      serialization: "json",
    });
    const c: Container = { child, busy: false, warm: false, ready: undefined as never };
    this.all.add(c);
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on("line", (line) => {
        this.log.write(`${line}\n`);
        const error = loggedError(line);
        if (error) this.opts.activity?.(`${def.name} logged ERROR: ${error}`);
      });
    }
    c.ready = new Promise((resolve, reject) => {
      const onReady = (m: { type?: string; initMs?: number; error?: { errorType: string; errorMessage: string } }) => {
        if (m?.type !== "ready") return;
        child.off("message", onReady);
        if (m.error) this.opts.activity?.(`${def.name}: init failed: ${m.error.errorType}: ${m.error.errorMessage}`);
        resolve({ initMs: m.initMs ?? 0 });
      };
      child.on("message", onReady);
      child.once("exit", (code, signal) => reject(new Error(`Runtime exited with error: ${signal ? `signal: ${signal}` : `exit status ${code}`} before it was ready`)));
    });
    c.ready.catch(() => undefined);
    child.once("exit", (code, signal) => {
      this.all.delete(c);
      const i = this.idle.indexOf(c);
      if (i >= 0) this.idle.splice(i, 1);
      c.pending?.({ ok: false, errorType: "Runtime.ExitError", errorMessage: `Runtime exited with error: ${signal ? `signal: ${signal}` : `exit status ${code}`}`, ms: 0 });
      this.waiting.shift()?.();
    });
    return c;
  }

  private kill(c: Container): Promise<void> {
    this.all.delete(c);
    const i = this.idle.indexOf(c);
    if (i >= 0) this.idle.splice(i, 1);
    if (c.child.exitCode !== null || c.child.signalCode !== null) return Promise.resolve();
    const gone = new Promise<void>((r) => c.child.once("exit", () => r()));
    c.child.kill("SIGKILL");
    return gone;
  }
}

/**
 * A Powertools ERROR line as one line for the terminal (its message and its error's), or undefined: a
 * failure a function handles (a poll the platform refused) leaves no failed invocation, only its log.
 */
export function loggedError(line: string): string | undefined {
  if (!line.startsWith("{") || !line.includes('"ERROR"')) return undefined;
  try {
    const entry = JSON.parse(line) as { level?: string; message?: unknown; error?: { message?: unknown } | unknown };
    if (entry.level !== "ERROR") return undefined;
    const cause = typeof entry.error === "object" && entry.error !== null ? (entry.error as { message?: unknown }).message : entry.error;
    const text = `${String(entry.message ?? "")}${cause ? ` (${String(cause)})` : ""}`.replace(/\s+/g, " ");
    return text.length > 300 ? `${text.slice(0, 299)}…` : text;
  } catch {
    return undefined;
  }
}
