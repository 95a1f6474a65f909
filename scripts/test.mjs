#!/usr/bin/env node
/**
 * `npm test`: the type check (`tsc --noEmit`) and the suites (`vitest run`, with any arguments given)
 * side by side rather than one after the other — the suites spend much of their time waiting on DynamoDB
 * Local and child processes, and tsc fills it (a clean clone has no incremental build to reuse).
 * Fails if either fails. A type error stops the suites at once, as it did when tsc ran first: a run
 * whose code does not type-check reports no passed tests (.ci/run then prints "0 passed, 1 failed").
 * tsc's output is held and printed once it ends, so it never lands inside vitest's. Both work in a
 * temporary directory of their own, removed when this ends: vitest stopped midway leaves its own files
 * there (test/support/run-tmp.ts removes the tests' on any exit).
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);
/** A package's command, by its package.json (vitest exports no path to its bin). */
const bin = (pkg, name) => {
  const manifest = require.resolve(`${pkg}/package.json`);
  return join(dirname(manifest), require(manifest).bin[name]);
};

const tmp = mkdtempSync(join(tmpdir(), "lookout-npm-test-"));
// Others may enter it, as they may /tmp (a test runs a command as an unprivileged user); none may write.
chmodSync(tmp, 0o755);
process.once("exit", () => rmSync(tmp, { recursive: true, force: true }));
const env = { ...process.env, TMPDIR: tmp };

const vitest = spawn(process.execPath, [bin("vitest", "vitest"), "run", ...process.argv.slice(2)], { stdio: "inherit", env });
const tsc = spawn(process.execPath, [bin("typescript", "tsc"), "--noEmit"], { stdio: ["ignore", "pipe", "pipe"], env });

let typeOutput = "";
tsc.stdout.on("data", (d) => (typeOutput += d));
tsc.stderr.on("data", (d) => (typeOutput += d));

const ended = (child) => new Promise((done) => child.once("exit", (code, signal) => done(code ?? (signal ? 1 : 0))));
const vitestEnded = ended(vitest);

// Ctrl-C reaches the children too (the terminal signals the whole job): wait for them to end. A TERM or HUP
// for this process alone is passed on, as an interrupt to vitest (on SIGTERM it skips its teardown).
let stopping = false;
process.on("SIGINT", () => void (stopping = true));
for (const signal of ["SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    stopping = true;
    vitest.kill("SIGINT");
    tsc.kill(signal);
  });
}

const tscCode = await ended(tsc);
if (tscCode !== 0 && !stopping) {
  vitest.kill("SIGINT");
  process.stderr.write(`${typeOutput}\ntsc --noEmit failed (exit ${tscCode}): the suites were stopped\n`);
}
const vitestCode = await vitestEnded;
process.exitCode = tscCode || vitestCode;
