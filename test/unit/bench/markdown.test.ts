/** BENCHMARKS.md's generator: a partial bench run replaces its own sections and keeps the others. */
import { describe, expect, it } from "vitest";
import { parseSections, renderReport, renderSection } from "../../../bench/markdown.js";

const section = (id: string) => ({ id, title: `Title ${id}`, method: `How ${id} is measured.` });

describe("BENCHMARKS.md", () => {
  it("renders a table, the method and each distinct figure method once as a note", () => {
    const md = renderSection(
      section("e2e"),
      [
        { name: "p50 | p95", value: 1.234, unit: "ms", method: "wall clock" },
        { name: "count", value: "3 of 3", method: "wall clock" },
        { name: "wait", value: 2, unit: "s", method: "simulator clock" },
      ],
      "2026-01-02",
      "a machine",
    );
    expect(md).toContain("| p50 \\| p95 | 1.23 ms | [1] |");
    expect(md).toContain("| count | 3 of 3 | [1] |");
    expect(md).toContain("| wait | 2 s | [2] |");
    expect(md).toContain("**Method.** How e2e is measured.");
    expect(md).toContain("1. wall clock\n2. simulator clock");
    expect(md).toContain("_Measured 2026-01-02 on a machine.");
  });

  it("keeps the sections a partial run did not rerun, in the canonical order", () => {
    const old = renderReport({
      order: ["a", "b", "c"],
      fresh: new Map([["a", renderSection(section("a"), [], "old", "m")], ["b", renderSection(section("b"), [], "old", "m")]]),
      header: "# old",
    });
    const next = renderReport({ order: ["a", "b", "c"], fresh: new Map([["c", renderSection(section("c"), [], "new", "m")], ["b", renderSection(section("b"), [], "new", "m")]]), previous: old, header: "# new" });
    const kept = parseSections(next);
    expect([...kept.keys()]).toEqual(["a", "b", "c"]);
    expect(kept.get("a")).toContain("_Measured old");
    expect(kept.get("b")).toContain("_Measured new");
    expect(next.startsWith("# new\n")).toBe(true);
    expect(next).not.toContain("# old");
  });
});
