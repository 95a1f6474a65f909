/**
 * CI as it runs on a clean clone: `bash .ci/run` (npm ci, then the README's `npm test`) in a fresh clone of
 * this repository's HEAD, timed from outside; the test count from its last line, and the slowest test
 * files from vitest's JSON report. The clone is removed afterwards, however the run ended.
 */
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { report, section } from "./support.js";

const ROOT = resolve(import.meta.dirname, "..");
const TARGET_S = 300;

export async function benchCi(): Promise<void> {
  section({
    id: "ci",
    title: "CI on a clean clone",
    method:
      "A fresh `git clone` of the repository's HEAD into a temporary directory, then `CI=true bash .ci/run` there (it installs what the tests need, " +
      "`npm ci` included, and runs `npm test`: the type check and the whole suite), timed from outside; the counts from its last line; the " +
      "slowest files from vitest's JSON report (each file's own span; two run at once). Committed work only: what the working tree holds uncommitted is not measured.",
  });
  const dir = mkdtempSync(join(tmpdir(), "lookout-ci-bench-"));
  // Readable by others, as CI's checkout is: the tests run as user nobody are skipped in a private folder.
  chmodSync(dir, 0o755);
  try {
    execFileSync("git", ["clone", "-q", ROOT, dir]);
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: dir, encoding: "utf8" }).trim();
    const started = performance.now();
    const out = await run("bash", [".ci/run"], dir);
    const seconds = (performance.now() - started) / 1000;
    const counts = /(\d+) passed, (\d+) failed\s*$/.exec(out.trim());
    report({ name: "clean-clone CI, wall time", value: seconds, unit: "s", method: `commit ${commit}; two cores; target ≤ ${TARGET_S} s: ${seconds <= TARGET_S ? "met" : "not met"}` });
    report({ name: "tests passed / failed", value: counts ? `${counts[1]} / ${counts[2]}` : "no count line", method: "the last line of .ci/run (vitest's JSON report)" });
    const results = JSON.parse(readFileSync(join(dir, ".vitest-results.json"), "utf8")) as { testResults: Array<{ name: string; startTime: number; endTime: number }> };
    const slowest = results.testResults
      .map((f) => ({ file: f.name.slice(dir.length + 1), s: (f.endTime - f.startTime) / 1000 }))
      .sort((a, b) => b.s - a.s)
      .slice(0, 8);
    report({ name: "slowest test files", value: slowest.map((f) => `${f.file.replace(/^test\//, "")} ${f.s.toFixed(0)} s`).join(", "), method: "vitest's JSON report: each file from its start to its end" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs a command to its end; its output, stdout and stderr together (printed as it comes when BENCH_VERBOSE is set). */
function run(cmd: string, args: string[], cwd: string): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, CI: "true" }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const take = (b: Buffer) => {
      out += b.toString();
      if (process.env.BENCH_VERBOSE) process.stdout.write(b);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("error", fail);
    child.on("close", () => done(out));
  });
}
