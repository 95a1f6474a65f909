/**
 * What someone trying Lookout sees when the machine or the platform is not ready: the real `lookout`
 * command in a child process, so the test sees exactly what a terminal would — one line on stderr that
 * says what to do, exit 1, no stack trace.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { DynamoDbLocalError, freePort, startDynamoDbLocal } from "../../../local/runtime/dynamodb-local.js";
import { dynamodbEndpoint } from "../../support/dynamodb.js";

const BIN = new URL("../../../bin/lookout.mjs", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "lookout-startup-"));
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ seed: 5, size: { applications: 1, clusters: 0, webhooks: 0 } });
});
afterAll(() => sim.close());

interface Outcome {
  code: number | null;
  stderr: string[];
}

/** `lookout <args>` with only the given environment (PATH too: some tests hide Java). */
function lookout(args: string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { cwd: dir, env, timeout: 60_000 }, (err, _stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : null) : 0;
      done({ code, stderr: stderr.split("\n").filter((l) => l && !l.startsWith("npm warn")) });
    });
  });
}

/** A configuration watching the simulator's application, its token from SIM_TOKEN. */
function configFile(url: string, dataDir = join(dir, "data")): string {
  const file = join(dir, `${randomUUID().slice(0, 8)}.yaml`);
  writeFileSync(
    file,
    `platform: { url: "${url}", token: "env:SIM_TOKEN" }
watch: [{ organization: ${sim.ids.organizationId}, applications: [${sim.ids.applicationIds[0]}] }]
data_dir: ${dataDir}
`,
  );
  return file;
}

const baseEnv = (): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  DYNAMODB_ENDPOINT: dynamodbEndpoint(),
  LOOKOUT_TABLE: `startup-${randomUUID().slice(0, 8)}`,
});

function expectOneLine(r: Outcome, pattern: RegExp) {
  expect(r.code).toBe(1);
  expect(r.stderr).toHaveLength(1);
  expect(r.stderr[0]).toMatch(pattern);
}

describe("start-up problems are one line that says what to do", () => {
  it("Java missing, when DynamoDB Local is needed", async () => {
    // A PATH with no java on it; node itself is started by its full path.
    const { DYNAMODB_ENDPOINT: _, ...env } = baseEnv();
    const r = await lookout(["run", "--once", "--config", configFile(sim.url)], { ...env, PATH: mkdtempSync(join(tmpdir(), "no-java-")), SIM_TOKEN: sim.apiToken });
    // Not a terminal: the start indicator's first line, then the one line that says what to do.
    expect(r.stderr[0]).toBe("starting DynamoDB Local…");
    expectOneLine({ ...r, stderr: r.stderr.slice(1) }, /^lookout run: Java is not installed: DynamoDB Local needs it \(apt-get install -y default-jre-headless\), or set DYNAMODB_ENDPOINT/);
  });

  it("an unreachable platform", async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const r = await lookout(["run", "--once", "--config", configFile(closed)], { ...baseEnv(), SIM_TOKEN: sim.apiToken });
    expectOneLine(r, new RegExp(`^lookout run: cannot reach the platform at ${closed} \\(ECONNREFUSED\\): check PLATFORM_API_URL or platform.url$`));
  });

  it("a token the platform rejects", async () => {
    const r = await lookout(["run", "--once", "--config", configFile(sim.url)], { ...baseEnv(), SIM_TOKEN: "wrong" });
    expectOneLine(r, /^lookout run: the platform at \S+ rejected the token \(401\): check the token that platform.token names \(env:SIM_TOKEN\)$/);
  });

  it("run --once whose polls fail exits 1, saying how many", async () => {
    // An application the platform does not know: the start-up check passes, its poll fails (404).
    const file = configFile(sim.url);
    writeFileSync(file, readFileSync(file, "utf8").replace(sim.ids.applicationIds[0]!, randomUUID()));
    const r = await lookout(["run", "--once", "--config", file], { ...baseEnv(), SIM_TOKEN: sim.apiToken });
    expect(r.code).toBe(1);
    expect(r.stderr.at(-1)).toBe("lookout run: 1 of 1 polls failed; their lines above say why");
  });

  it("start pointed at a platform with no configuration file", async () => {
    const r = await lookout(["start", "--config", join(dir, "absent.yaml")], { ...baseEnv(), PLATFORM_API_URL: sim.url, PLATFORM_API_TOKEN: "x" });
    expectOneLine(r, /^lookout start: \S+absent.yaml: not found; pass --config FILE .*without PLATFORM_API_URL for the embedded demo$/);
  });

  it("a data_dir that is a file, or on /proc: run, audit and mutes say so (docs/limits.md)", async () => {
    const file = join(dir, "not-a-dir");
    writeFileSync(file, "");
    const env = { ...baseEnv(), SIM_TOKEN: sim.apiToken };
    for (const [dataDir, problem] of [[file, "is a file, not a directory"], ["/proc/lookout", "is on proc, a kernel filesystem, not storage; choose a directory on a disk"]]) {
      const config = configFile(sim.url, dataDir);
      const escaped = `${config}: data_dir: ${dataDir}: ${problem}`.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      for (const args of [["run", "--once"], ["audit"], ["mutes"]]) {
        expectOneLine(await lookout([...args, "--config", config], env), new RegExp(`^lookout ${args[0]}: ${escaped}$`));
      }
    }
  }, 120_000);

  describe("a taken port", () => {
    let holder: Server;
    let port: number;
    const sockets = new Set<Socket>();
    beforeAll(async () => {
      // Accepts connections and never answers: the worst neighbour for a readiness check.
      holder = createServer((s) => sockets.add(s));
      await new Promise<void>((ok) => holder.listen(0, "127.0.0.1", ok));
      port = (holder.address() as { port: number }).port;
    });
    afterAll(() => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((ok) => holder.close(() => ok()));
    });

    it("DynamoDB Local says the port is taken instead of waiting", async () => {
      const started = Date.now();
      const err = await startDynamoDbLocal({ port, readyTimeoutMs: 30_000 }).then(
        async (ddb) => (await ddb.stop(), undefined),
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DynamoDbLocalError);
      expect((err as Error).message).toBe(`port ${port} is taken: DynamoDB Local cannot listen there; choose another port or stop what uses it`);
      expect(Date.now() - started).toBeLessThan(25_000);
    }, 40_000);

    it("lookout simulate", async () => {
      const r = await lookout(["simulate", "--port", String(port)], baseEnv());
      expectOneLine(r, new RegExp(`^lookout simulate: port ${port} is already in use; choose another with --port <n>`));
    });
  });
});
