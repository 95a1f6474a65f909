/**
 * The order test files start in: longest first, from the durations of a measured run
 * (test/durations.json, `npm run test:durations` after a CI-mode run). Two workers share the files, so a
 * long file that starts last is a tail nobody shares: vitest's own order on a clean clone (no cache of
 * earlier runs) is by file size, which started the model-based test — small, and the longest — near the end.
 * Files the list does not know run first (they may be long: a new one is not measured yet).
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const DURATIONS = new URL("../durations.json", import.meta.url);

function durations(): Map<string, number> {
  try {
    return new Map(Object.entries(JSON.parse(readFileSync(DURATIONS, "utf8")) as Record<string, number>));
  } catch {
    return new Map();
  }
}

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const known = durations();
    const root = files[0]?.project.config.root ?? process.cwd();
    const seconds = (f: TestSpecification) => known.get(relative(root, f.moduleId)) ?? Number.POSITIVE_INFINITY;
    const base = await super.sort(files);
    // Stable: among files of equal weight (the unknown ones), vitest's order stands.
    return base.map((f, i) => ({ f, i, s: seconds(f) })).sort((a, b) => b.s - a.s || a.i - b.i).map((x) => x.f);
  }
}
