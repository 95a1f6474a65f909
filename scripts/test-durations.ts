/**
 * Writes test/durations.json — each test file's seconds in the last CI-mode run (.vitest-results.json,
 * vitest's JSON report) — which test/support/sequencer.ts reads to start the longest files first.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { relative, resolve, sep } from "node:path";

const root = resolve(import.meta.dirname, "..");
/**
 * A file's key, relative to the repository as the sequencer looks it up: the report may come from a run
 * in another clone (.ci/run on a fresh one), whose absolute paths are not under this root.
 */
const keyOf = (file: string): string => {
  const rel = relative(root, file);
  if (!rel.startsWith("..")) return rel;
  const at = file.lastIndexOf(`${sep}test${sep}`);
  return at < 0 ? rel : file.slice(at + 1);
};
const report = JSON.parse(readFileSync(resolve(root, ".vitest-results.json"), "utf8")) as { testResults: Array<{ name: string; startTime: number; endTime: number }> };
const out = Object.fromEntries(
  report.testResults
    .map((t) => [keyOf(t.name), Math.round((t.endTime - t.startTime) / 100) / 10] as const)
    .sort((a, b) => b[1] - a[1]),
);
writeFileSync(resolve(root, "test/durations.json"), `${JSON.stringify(out, null, 2)}\n`);
console.log(`test/durations.json: ${Object.keys(out).length} files`);
