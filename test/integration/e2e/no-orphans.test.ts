/**
 * Nothing left running: `lookout run` (the real CLI, in a child process, polling the platform simulator
 * with its own DynamoDB Local) killed with SIGKILL leaves no Java behind, again and again on the same
 * data_dir; Ctrl-C (SIGINT to its process group, as a terminal sends it) stops it cleanly, Java too.
 * Java is found by its command line, which names the run's data_dir (local/runtime/dynamodb-local.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";

const BIN = new URL("../../../bin/lookout.mjs", import.meta.url).pathname;
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ seed: 7, size: { applications: 1, clusters: 0, webhooks: 0 } });
});
afterAll(() => sim.close());

/** Pids of the Java processes whose command line names `dataDir`. */
function javaOf(dataDir: string): number[] {
  const ps = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" });
  return ps
    .split("\n")
    .filter((l) => /\bjava\b/.test(l) && l.includes(join(dataDir, "dynamodb")))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

/** Polls `check` until it holds or `ms` pass; returns its last value. */
async function waitFor<T>(check: () => T, ok: (v: T) => boolean, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  let v = check();
  while (!ok(v) && Date.now() < deadline) {
    await delay(200);
    v = check();
  }
  return v;
}

/** `lookout run` (continuous) in a process group of its own, like a job in a terminal; resolves once it runs. */
async function startRun(dataDir: string): Promise<{ child: ChildProcess; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> }> {
  const config = join(dataDir, "..", `${Date.now()}.yaml`);
  writeFileSync(
    config,
    `platform: { url: "${sim.url}", token: "env:SIM_TOKEN" }
watch: [{ organization: ${sim.ids.organizationId}, applications: [${sim.ids.applicationIds[0]}] }]
data_dir: ${dataDir}
retention: 3650d
poll_interval: 1s
`,
  );
  // The JVM options the run's DynamoDB Local has (test/support/dynamodb-global-setup.ts): its Java starts in half the CPU.
  const { JDK_JAVA_OPTIONS, DDB_LOCAL_TELEMETRY } = process.env;
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, SIM_TOKEN: sim.apiToken, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true", JDK_JAVA_OPTIONS, DDB_LOCAL_TELEMETRY };
  const child = spawn(process.execPath, [BIN, "run", "--config", config], { env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>((done) =>
    child.once("exit", (code, signal) => done({ code, signal, output })),
  );
  // Its first request to the platform comes after its DynamoDB Local answered: from then on it runs.
  const before = sim.requestLog.length;
  await waitFor(() => sim.requestLog.length > before || child.exitCode !== null, Boolean, 90_000);
  expect(child.exitCode, output).toBeNull();
  expect(sim.requestLog.length, output).toBeGreaterThan(before);
  return { child, exited };
}

describe("no DynamoDB Local outlives lookout run", () => {
  it("SIGKILL, three times on the same data_dir: no Java left after any of them", async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "lookout-orphans-")), "data");
    for (let round = 1; round <= 3; round++) {
      const { child, exited } = await startRun(dataDir);
      expect(javaOf(dataDir), `round ${round}: its Java`).toHaveLength(1);
      process.kill(child.pid!, "SIGKILL");
      expect((await exited).signal).toBe("SIGKILL");
      expect(await waitFor(() => javaOf(dataDir), (p) => p.length === 0, 20_000), `round ${round}: Java left running`).toEqual([]);
    }
  }, 240_000);

  it("Ctrl-C (SIGINT to the job's process group) stops Lookout cleanly and Java with it", async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "lookout-ctrlc-")), "data");
    const { child, exited } = await startRun(dataDir);
    expect(javaOf(dataDir)).toHaveLength(1);
    process.kill(-child.pid!, "SIGINT");
    const end = await exited;
    expect(end.code, end.output).toBe(0);
    expect(end.output).toMatch(/^lookout: \d+ polls?, /m);
    expect(javaOf(dataDir)).toEqual([]);
  }, 120_000);
});
