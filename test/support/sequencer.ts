/**
 * The order test files start in: the integration project's files, then the unit project's, each longest
 * first, from the durations of a measured run (test/durations.json, `npm run test:durations` after a
 * CI-mode run). Three workers share the files, so a long file that starts last is a tail nobody shares:
 * vitest's own order on a clean clone (no cache of earlier runs) is by file size, which started the
 * model-based test — small, and the longest — near the end. Files the list does not know run first in
 * their project (they may be long: a new one is not measured yet).
 *
 * One project after the other: vitest hands a worker's process (isolate: false) to the next file only
 * when that file is of the same project, and otherwise starts a new process that loads everything again.
 * Interleaved by length, the two projects started 25 processes in a run instead of 6; the unit files
 * (about 17 s of the run in all, none over 7 s) fill the end instead.
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

/** The unit project last: its files are short, and none starts a server or waits on one. */
const projectRank = (f: TestSpecification) => (f.project.name === "unit" ? 1 : 0);

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const known = durations();
    const root = files[0]?.project.config.root ?? process.cwd();
    const seconds = (f: TestSpecification) => known.get(relative(root, f.moduleId)) ?? Number.POSITIVE_INFINITY;
    const base = await super.sort(files);
    // Stable: among files of equal weight (the unknown ones), vitest's order stands.
    return base
      .map((f, i) => ({ f, i, p: projectRank(f), s: seconds(f) }))
      .sort((a, b) => a.p - b.p || b.s - a.s || a.i - b.i)
      .map((x) => x.f);
  }
}
