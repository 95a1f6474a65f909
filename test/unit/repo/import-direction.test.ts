/**
 * Imports point one way (docs/architecture.md, "Layout and import direction"): a module under lib/
 * imports its own folder or a folder of lower rank, and store/, platform/ and config/ import only model/;
 * and no file of lib/ reaches itself through its imports, within a folder either. In local/, the
 * commands (cli/) sit on the one-machine runtime (runtime/, cloud-local/), which sits on the stand-ins
 * for the platform (simulator/) and the receivers (receivers/); no file of local/ reaches itself either.
 * Every relative import counts: static, `import type`, re-exports and dynamic `import()`.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join, posix } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT, filesBelow } from "../../support/repo-files.js";


const RANK: Readonly<Record<string, number>> = {
  model: 0,
  platform: 1, store: 1, config: 1,
  alerts: 2,
  // Dispatch runs polls (pollAndRecord, pollBatch, the change feed's feedTick) and lends them its budget
  // (spareRequestsOf implements poll's SpareRequests port), so poll/ is below dispatch/; a poll knows
  // nothing of dispatch's state, and dispatch folds a poll's result (model/poll.ts) into its own.
  poll: 3, routes: 3,
  dispatch: 4, notify: 4, audit: 4,
  // The `lookout status` report reads dispatch's state and notify's store.
  status: 5, actions: 5,
  app: 6,
};
/** Adapters and configuration need no stage: the ports and types they serve live in model/. */
const ONLY_MODEL = new Set(["platform", "store", "config"]);

/**
 * Imports that still break the rule, in files whose rework is under way. Empty since the ingest and
 * dispatch stores import only model/; a pair listed here that no longer occurs fails the test, so the
 * list only shrinks.
 */
const PENDING: readonly string[] = [];

/**
 * What each folder of local/ may import besides its own files: lib/ in full, or (simulator/: it is the
 * platform, not Lookout) only lib/model/ and lib/platform/; the folders of local/ listed; and scripts/
 * (cloud-local/ packages the stack as a deployment would).
 */
const LOCAL: Readonly<Record<string, { lib: "all" | readonly string[]; local: readonly string[]; scripts?: true }>> = {
  simulator: { lib: ["model", "platform"], local: [] },
  receivers: { lib: "all", local: [] },
  runtime: { lib: "all", local: ["simulator", "receivers"] },
  "cloud-local": { lib: "all", local: ["runtime", "simulator", "receivers"], scripts: true },
  cli: { lib: "all", local: ["runtime", "cloud-local", "simulator", "receivers"] },
};

/** The repo-relative modules a file imports by relative path (`./x.js` is the source `x.ts`). */
function importsOf(file: string, source: string): string[] {
  return ts
    .preProcessFile(source, true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((spec) => spec.startsWith("."))
    .map((spec) => posix.normalize(posix.join(posix.dirname(file), spec)).replace(/\.js$/, ".ts"));
}

const folderOf = (path: string): string | undefined => {
  const [top, folder, ...rest] = path.split("/");
  return top === "lib" && rest.length ? folder : undefined;
};

/** Why `from` may not import `to`, or undefined when it may. */
function ruleBroken(from: string, to: string): string | undefined {
  const a = folderOf(from);
  const b = folderOf(to);
  if (a === undefined) return undefined; // functions/, local/, bench/, scripts/ may import anything
  if (b === undefined) return "lib/ imports nothing outside its folders";
  if (a === b) return undefined;
  if (RANK[a] === undefined || RANK[b] === undefined) return `every folder of lib/ needs a rank (${RANK[a] === undefined ? a : b})`;
  if (ONLY_MODEL.has(a) && b !== "model") return `${a}/ imports only model/`;
  if (RANK[b]! >= RANK[a]!) return `${a}/ (rank ${RANK[a]}) imports only lower ranks, not ${b}/ (rank ${RANK[b]})`;
  return undefined;
}

/** Why a file of local/ may not import `to`, or undefined when it may. */
function localRuleBroken(from: string, to: string): string | undefined {
  const [, a] = from.split("/");
  const rule = LOCAL[a!];
  if (!rule || from.split("/").length < 3) return "every file of local/ is in one of its folders";
  const [top, b] = to.split("/");
  if (top === "lib") return rule.lib === "all" || rule.lib.includes(b!) ? undefined : `local/${a}/ imports only ${rule.lib.map((f) => `lib/${f}/`).join(" and ")} of lib/`;
  if (top === "scripts" && rule.scripts) return undefined;
  if (top !== "local") return `local/${a}/ imports only lib/ and local/${rule.scripts ? " and scripts/" : ""}`;
  return b === a || rule.local.includes(b!) ? undefined : `local/${a}/ does not import local/${b}/`;
}

/** Every file below `dir` and the files it imports. */
function importGraph(dir = "lib"): Map<string, string[]> {
  return new Map(filesBelow(dir, ".ts").map((file) => [file, importsOf(file, readFileSync(join(ROOT, file), "utf8"))]));
}

function brokenImports(graph: ReadonlyMap<string, readonly string[]>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [file, imports] of graph) {
    for (const to of imports) {
      const why = ruleBroken(file, to);
      if (why) out.set(`${file} -> ${to}`, why);
    }
  }
  return out;
}

/**
 * The import cycles among the files, as rings from where a depth-first search entered each back to that
 * file (`a -> b -> a`); a file that imports itself is one too.
 */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const cycles: string[] = [];
  const visit = (file: string): void => {
    state.set(file, "open");
    path.push(file);
    for (const to of graph.get(file) ?? []) {
      if (!graph.has(to)) continue;
      if (state.get(to) === "open") cycles.push([...path.slice(path.indexOf(to)), to].join(" -> "));
      else if (!state.has(to)) visit(to);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return cycles;
}

describe("import direction in lib/", () => {
  const graph = importGraph();
  const broken = brokenImports(graph);

  it("every folder of lib/ has a rank", () => {
    const folders = readdirSync(join(ROOT, "lib"), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(folders.filter((f) => RANK[f] === undefined)).toEqual([]);
  });

  it("imports follow the ranks (apart from the pending ones)", () => {
    const pending = new Set(PENDING);
    expect([...broken].filter(([pair]) => !pending.has(pair)).map(([pair, why]) => `${pair}: ${why}`)).toEqual([]);
  });

  it("PENDING lists only imports that still break the rule", () => {
    expect(PENDING.filter((pair) => !broken.has(pair))).toEqual([]);
  });

  it("no file imports itself through others (type-only imports count)", () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it("finds a ring of files and a file importing itself, not a diamond", () => {
    const ring = new Map([
      ["lib/poll/poll.ts", ["lib/poll/readers/reader.ts", "lib/model/poll.ts"]],
      ["lib/poll/readers/reader.ts", ["lib/poll/deps.ts"]],
      ["lib/poll/deps.ts", ["lib/poll/poll.ts"]],
      ["lib/model/poll.ts", []],
    ]);
    expect(importCycles(ring)).toEqual(["lib/poll/deps.ts -> lib/poll/poll.ts -> lib/poll/readers/reader.ts -> lib/poll/deps.ts"]);
    expect(importCycles(new Map([["lib/a/x.ts", ["lib/a/x.ts"]]]))).toEqual(["lib/a/x.ts -> lib/a/x.ts"]);
    const diamond = new Map([["lib/a/a.ts", ["lib/a/b.ts", "lib/a/c.ts"]], ["lib/a/b.ts", ["lib/a/d.ts"]], ["lib/a/c.ts", ["lib/a/d.ts"]], ["lib/a/d.ts", []]]);
    expect(importCycles(diamond)).toEqual([]);
  });

  it("sees static, type-only, re-exported and dynamic imports, not ones in comments", () => {
    const source = [
      'import { a } from "./a.js";',
      'import type { B } from "../model/b.js";',
      'export * from "../store/c.js";',
      'const d = await import("../poll/d.js");',
      '// import("../app/e.js")',
    ].join("\n");
    expect(importsOf("lib/alerts/x.ts", source)).toEqual(["lib/alerts/a.ts", "lib/model/b.ts", "lib/store/c.ts", "lib/poll/d.ts"]);
    expect(ruleBroken("lib/alerts/x.ts", "lib/store/c.ts")).toBeUndefined();
    expect(ruleBroken("lib/alerts/x.ts", "lib/poll/d.ts")).toMatch(/rank 2/);
    expect(ruleBroken("lib/store/x.ts", "lib/platform/y.ts")).toBe("store/ imports only model/");
    expect(ruleBroken("lib/poll/x.ts", "lib/routes/y.ts")).toMatch(/not routes\//);
    expect(ruleBroken("lib/poll/x.ts", "lib/dispatch/y.ts")).toMatch(/not dispatch\//);
    expect(ruleBroken("lib/dispatch/x.ts", "lib/poll/y.ts")).toBeUndefined();
  });
});

describe("import direction in local/", () => {
  const graph = importGraph("local");

  it("every folder of local/ has its rule", () => {
    const folders = readdirSync(join(ROOT, "local"), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(folders.filter((f) => LOCAL[f] === undefined)).toEqual([]);
  });

  it("imports follow the folders' rules", () => {
    const broken = [...graph].flatMap(([file, imports]) => imports.flatMap((to) => {
      const why = localRuleBroken(file, to);
      return why ? [`${file} -> ${to}: ${why}`] : [];
    }));
    expect(broken).toEqual([]);
  });

  it("no file imports itself through others (type-only imports count)", () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it("says which import breaks a folder's rule", () => {
    expect(localRuleBroken("local/runtime/run.ts", "local/cli/shared.ts")).toBe("local/runtime/ does not import local/cli/");
    expect(localRuleBroken("local/simulator/x.ts", "lib/poll/poll.ts")).toBe("local/simulator/ imports only lib/model/ and lib/platform/ of lib/");
    expect(localRuleBroken("local/simulator/x.ts", "lib/platform/endpoints.ts")).toBeUndefined();
    expect(localRuleBroken("local/cli/main.ts", "local/runtime/run.ts")).toBeUndefined();
    expect(localRuleBroken("local/x.ts", "lib/model/event.ts")).toBe("every file of local/ is in one of its folders");
  });
});
