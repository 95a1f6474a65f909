/**
 * Imports point one way (docs/architecture.md, "Layout and import direction"): a module under lib/
 * imports its own folder or a folder of lower rank, and store/, platform/ and config/ import only model/.
 * Every relative import counts: static, `import type`, re-exports and dynamic `import()`.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

const RANK: Readonly<Record<string, number>> = {
  model: 0,
  platform: 1, store: 1, config: 1,
  alerts: 2,
  ingest: 3, routes: 3,
  notify: 4, audit: 4,
  actions: 5,
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

/** Repo-relative paths (with `/`) of every .ts file below `dir`. */
function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = posix.join(dir, e.name);
    if (e.isDirectory()) return tsFiles(path);
    return e.name.endsWith(".ts") ? [path] : [];
  });
}

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

function brokenImports(): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of tsFiles("lib")) {
    for (const to of importsOf(file, readFileSync(join(ROOT, file), "utf8"))) {
      const why = ruleBroken(file, to);
      if (why) out.set(`${file} -> ${to}`, why);
    }
  }
  return out;
}

describe("import direction in lib/", () => {
  const broken = brokenImports();

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

  it("sees static, type-only, re-exported and dynamic imports, not ones in comments", () => {
    const source = [
      'import { a } from "./a.js";',
      'import type { B } from "../model/b.js";',
      'export * from "../store/c.js";',
      'const d = await import("../ingest/d.js");',
      '// import("../app/e.js")',
    ].join("\n");
    expect(importsOf("lib/alerts/x.ts", source)).toEqual(["lib/alerts/a.ts", "lib/model/b.ts", "lib/store/c.ts", "lib/ingest/d.ts"]);
    expect(ruleBroken("lib/alerts/x.ts", "lib/store/c.ts")).toBeUndefined();
    expect(ruleBroken("lib/alerts/x.ts", "lib/ingest/d.ts")).toMatch(/rank 2/);
    expect(ruleBroken("lib/store/x.ts", "lib/platform/y.ts")).toBe("store/ imports only model/");
    expect(ruleBroken("lib/ingest/x.ts", "lib/routes/y.ts")).toMatch(/not routes\//);
  });
});
