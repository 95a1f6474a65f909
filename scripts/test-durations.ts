/**
 * Writes test/durations.json — each test file's seconds in the last CI-mode run (.vitest-results.json,
 * vitest's JSON report) — which test/support/sequencer.ts reads to start the longest files first.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { relative, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const report = JSON.parse(readFileSync(resolve(root, ".vitest-results.json"), "utf8")) as { testResults: Array<{ name: string; startTime: number; endTime: number }> };
const out = Object.fromEntries(
  report.testResults
    .map((t) => [relative(root, t.name), Math.round((t.endTime - t.startTime) / 100) / 10] as const)
    .sort((a, b) => b[1] - a[1]),
);
writeFileSync(resolve(root, "test/durations.json"), `${JSON.stringify(out, null, 2)}\n`);
console.log(`test/durations.json: ${Object.keys(out).length} files`);
