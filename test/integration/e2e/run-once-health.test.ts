/**
 * Failure counts outlive the process: `lookout run --once` (as cron runs it) against a platform that
 * refuses one source raises `source_failing` on the `failing_after`th run, not before, and once. The real
 * CLI in a child process per run; the platform is a plain node:http server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { dynamodbEndpoint } from "../../support/dynamodb.js";

const BIN = new URL("../../../bin/lookout.mjs", import.meta.url).pathname;
const ORG = randomUUID();
const WEBHOOK = randomUUID();
const CLUSTER = randomUUID();
const dir = mkdtempSync(join(tmpdir(), "lookout-once-health-"));
const seen: string[] = [];
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.url ?? "");
    res.setHeader("content-type", "application/json");
    // The cluster is refused on every run; everything else answers an empty list.
    if (req.url?.includes(`/cluster/${CLUSTER}/`)) {
      res.statusCode = 404;
      return res.end(JSON.stringify({ status: 404, detail: "Cluster not found" }));
    }
    res.end(JSON.stringify({ results: [] }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function runOnce(config: string, table: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DYNAMODB_ENDPOINT: dynamodbEndpoint(),
    LOOKOUT_TABLE: table,
    PLATFORM_TOKEN: "t-once",
  };
  return new Promise((done) => {
    execFile(process.execPath, [BIN, "run", "--once", "--config", config], { cwd: dir, env, timeout: 120_000 }, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === "number" ? err.code : null) : 0, stdout, stderr });
    });
  });
}

const healthEvents = (dataDir: string) =>
  existsSync(join(dataDir, "events.ndjson"))
    ? readFileSync(join(dataDir, "events.ndjson"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))
        .filter((e) => e["detail-type"] === "Lookout Health")
    : [];

describe("lookout run --once, run by cron", () => {
  // Four child processes, each starting the CLI: slow on a loaded machine, so a generous budget.
  it("raises source_failing on the failing_after-th failing run, not before, and once", { timeout: 180_000 }, async () => {
    const dataDir = join(dir, "data");
    const config = join(dir, "lookout.yaml");
    writeFileSync(
      config,
      `platform: { url: "${url}", token: "env:PLATFORM_TOKEN" }
watch: [{ organization: ${ORG}, webhooks: [${WEBHOOK}], clusters: [${CLUSTER}] }]
data_dir: ${dataDir}
health: { failing_after: 3 }
`,
    );
    const table = `once-${randomUUID().slice(0, 8)}`;
    for (let run = 1; run <= 4; run++) {
      const before = seen.length;
      const r = await runOnce(config, table);
      // A run with a failed poll exits 1 (docs: exit codes), and says which.
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain("1 of 2 polls failed");
      // Each run polls both sources: the failing one does not keep the other from being read.
      const asked = seen.slice(before);
      expect(asked.some((u) => u.includes(`/webhook/${WEBHOOK}/event`))).toBe(true);
      expect(asked.some((u) => u.includes(`/cluster/${CLUSTER}/logs`))).toBe(true);
      const health = healthEvents(dataDir);
      if (run < 3) expect(health, `run ${run}`).toEqual([]);
      else {
        // Raised on run 3; run 4 is the same episode (one event a day for a source that never succeeded).
        expect(health, `run ${run}`).toHaveLength(1);
        expect(health[0].detail).toMatchObject({
          transition: "source_failing",
          health: { check: "source_failing", subject: `cluster:${ORG}/${CLUSTER}`, consecutive_failures: 3 },
        });
      }
    }
  });
});
