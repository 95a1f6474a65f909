/**
 * Every repo path a comment or a doc names exists, so that a rename cannot leave a pointer to nothing;
 * and the repository cites only itself (docs/platform.md for the platform, docs/architecture.md for the
 * design), never a file kept outside it.
 *
 * What is read: the comments of code (.ts, .js, .mjs, .cjs, through the TypeScript parser, so that
 * strings and regular expressions are not taken for comments), the `#` comments of YAML, and the whole
 * text of Markdown, in the folders of SCANNED. What counts as a path:
 * - one rooted at a folder of the repo: `lib/model/items.ts`, `docs/platform.md`, `infra/table.yml`,
 *   `test/unit/repo/import-direction.test.ts`, or a folder such as `lib/app/lambda/`;
 * - one that starts with a folder of lib/ or of the file's own folder: `store/optimistic.ts`;
 * - in code, a bare lowercase file name (`import-direction.test.ts` here), which must be in the file's
 *   own folder or be a file of the repo's root (`serverless.yml`); a one-letter name is an example;
 * - in Markdown, a link's target, from the file's folder (a file or a folder).
 * Not paths: URLs, globs (`test/support/*-contract.ts`), placeholders (`functions/<name>.mjs`,
 * `${name}.ts`), `./` and `../` specifiers (tsc checks imports), and what starts with a folder the
 * repo does not have (a package's file, something generated). A broken path fails the test with its
 * file, line and path.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** Where references are read. */
const SCANNED = ["lib", "local", "functions", "infra", "test", "bench", "scripts", "docs", "README.md", "serverless.yml"];
/** Top-level folders a path may be rooted at. */
const ROOTS = new Set(["lib", "local", "functions", "infra", "test", "bench", "scripts", "docs", "bin"]);

const CODE = /\.(?:ts|mts|cts|js|mjs|cjs)$/;
const YAML = /\.ya?ml$/;
const MARKDOWN = /\.md$/;

/**
 * Files kept outside the repository, which it must not cite. Spelled so that the test does not name
 * them itself.
 */
const OUTSIDE = /DESIGN\.md|platform-fact[s]|platform-api\.md|shared\/spec/;

/** A path-like word: folders, a name and an extension Lookout's files have. */
const PATH = /(?<![\w.\-/*<>{}$@~\\])((?:\.{1,2}\/)*(?:[\w.\-]+\/)*[\w\-]+(?:\.[\w\-]+)*\.(?:ts|mts|cts|js|mjs|cjs|json|md|ya?ml))(?![\w\-/*<>{}])/g;
/** A folder rooted at a top-level folder, written with its trailing slash: `lib/app/lambda/`. */
const FOLDER = /(?<![\w.\-/*<>{}$@~\\])((?:lib|local|functions|infra|test|bench|scripts|docs|bin)\/(?:[\w\-]+\/)*)(?![\w\-*<>{}])/g;
/** A Markdown link's target, without its anchor: `[Quarantine](docs/audit.md#quarantine)`. */
const MD_LINK = /\]\(([^)\s#]+)(?:#[^)\s]*)?\)/g;
/** A bare file name that must be a file: lowercase, more than one letter, a source or a doc. */
const BARE = /^[a-z0-9][a-z0-9\-]+(?:\.[a-z0-9\-]+)*\.(?:ts|mts|cts|js|mjs|cjs|md)$/;
const URL_LIKE = /\b[a-z][a-z0-9+.\-]*:\/\/[^\s)>`'"\]]*/gi;

interface Text {
  /** Offset of the text in its file. */
  at: number;
  text: string;
}

/** Repo-relative paths (with `/`) of every file below `dir` (or `dir` itself when it is a file). */
function filesBelow(dir: string): string[] {
  if (statSync(join(ROOT, dir)).isFile()) return [dir];
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = posix.join(dir, e.name);
    return e.isDirectory() ? filesBelow(path) : [path];
  });
}

/** The comments of a script, found by parsing it. */
function codeComments(file: string, source: string): Text[] {
  const kind = /\.(?:m|c)?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, false, kind);
  const seen = new Map<number, Text>();
  const take = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) if (!seen.has(r.pos)) seen.set(r.pos, { at: r.pos, text: source.slice(r.pos, r.end) });
  };
  const visit = (node: ts.Node) => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    take(ts.getLeadingCommentRanges(source, node.getFullStart()));
    take(ts.getTrailingCommentRanges(source, node.getEnd()));
    for (const child of node.getChildren(sf)) visit(child);
  };
  visit(sf);
  return [...seen.values()].sort((a, b) => a.at - b.at);
}

/** The `#` comments of a YAML file (a `#` at the start of a line or after a space, outside quotes). */
function yamlComments(source: string): Text[] {
  const out: Text[] = [];
  let at = 0;
  for (const line of source.split("\n")) {
    const m = /(?:^|\s)#/.exec(line.replace(/"[^"]*"|'[^']*'/g, (q) => " ".repeat(q.length)));
    if (m) out.push({ at: at + m.index + m[0].length - 1, text: line.slice(m.index + m[0].length - 1) });
    at += line.length + 1;
  }
  return out;
}

/** What of a file may name paths: the comments of code and YAML, the whole of Markdown. */
function textsOf(file: string, source: string): Text[] {
  if (CODE.test(file)) return codeComments(file, source);
  if (YAML.test(file)) return yamlComments(source);
  if (MARKDOWN.test(file)) return [{ at: 0, text: source }];
  return [];
}

/** The paths a text names, with their offsets; URLs blanked first. */
function pathsIn(text: string): { at: number; path: string }[] {
  const plain = text.replace(URL_LIKE, (u) => " ".repeat(u.length));
  return [...plain.matchAll(PATH), ...plain.matchAll(FOLDER)].map((m) => ({ at: m.index, path: m[1]! }));
}

const isFile = (path: string) => existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isFile();
const isDir = (path: string) => existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isDirectory();
/** A source named by what it compiles to (`lib/model/poll.js` for `lib/model/poll.ts`) counts. */
const exists = (path: string) =>
  path.endsWith("/") ? isDir(path) : isFile(path) || (/\.m?js$/.test(path) && isFile(path.replace(/\.(m?)js$/, ".$1ts")));

/**
 * Where `path`, named in `file`, should be; undefined when it is no path of the repo's (a package's
 * file, something generated, a name in general).
 */
function candidates(file: string, path: string): string[] | undefined {
  const dir = posix.dirname(file);
  if (path.startsWith("./") || path.startsWith("../")) return undefined;
  const [first, ...rest] = path.split("/");
  if (!rest.length) {
    if (isFile(path)) return [path];
    return CODE.test(file) && BARE.test(path) ? [posix.join(dir, path)] : undefined;
  }
  if (ROOTS.has(first!)) return [path];
  const where: string[] = [];
  if (isDir(posix.join("lib", first!))) where.push(posix.join("lib", path));
  if (isDir(posix.join(dir, first!))) where.push(posix.join(dir, path));
  return where.length ? where : undefined;
}

interface Broken {
  file: string;
  line: number;
  path: string;
}

const lineAt = (source: string, offset: number) => source.slice(0, offset).split("\n").length;

function brokenReferences(): Broken[] {
  const out: Broken[] = [];
  for (const file of SCANNED.flatMap(filesBelow)) {
    const source = readFileSync(join(ROOT, file), "utf8");
    for (const t of textsOf(file, source)) {
      for (const { at, path } of pathsIn(t.text)) {
        const where = candidates(file, path);
        if (where && !where.some(exists)) out.push({ file, line: lineAt(source, t.at + at), path });
      }
    }
    if (!MARKDOWN.test(file)) continue;
    for (const m of source.matchAll(MD_LINK)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.\-]*:/i.test(target)) continue; // https:, mailto:
      const path = posix.normalize(posix.join(posix.dirname(file), target));
      if (!exists(path) && !isDir(path)) out.push({ file, line: lineAt(source, m.index), path: target });
    }
  }
  return out;
}

function outsideReferences(): Broken[] {
  const out: Broken[] = [];
  for (const file of SCANNED.flatMap(filesBelow)) {
    const source = readFileSync(join(ROOT, file), "utf8");
    source.split("\n").forEach((text, i) => {
      const m = OUTSIDE.exec(text);
      if (m) out.push({ file, line: i + 1, path: m[0] });
    });
  }
  return out;
}

const show = (b: Broken) => `${b.file}:${b.line}: ${b.path}`;

describe("references to files", () => {
  it("every repo path a comment or a doc names exists", () => {
    expect(brokenReferences().map(show)).toEqual([]);
  });

  it("nothing cites a file kept outside the repository", () => {
    expect(outsideReferences().map(show)).toEqual([]);
  });

  it("reads comments, not strings, and skips URLs, globs and placeholders", () => {
    const source = [
      "/** See lib/model/items.ts and `store/optimistic.ts`. */",
      'const a = "lib/not/a-comment.ts"; // test/unit/x.test.ts',
      "const r = /docs\\/y.md/; /* docs/z.md */",
      "# not a comment in code: lib/q.ts",
    ].join("\n");
    const paths = codeComments("lib/x/x.ts", source).flatMap((t) => pathsIn(t.text).map((p) => p.path));
    expect(paths).toEqual(["lib/model/items.ts", "store/optimistic.ts", "test/unit/x.test.ts", "docs/z.md"]);
    expect(yamlComments('a: "b # c" # infra/table.yml\n# lib/y.ts\nurl: x#y').map((t) => t.text)).toEqual([
      "# infra/table.yml",
      "# lib/y.ts",
    ]);
    const skipped = "https://github.com/o/r/blob/main/lib/a.ts, test/support/*-contract.ts, functions/<name>.mjs, `${name}.ts`, lib/{a,b}.ts";
    expect(pathsIn(skipped)).toEqual([]);
    expect(pathsIn("lib/app/lambda/ and docs/events.md. Then (audit.md#quarantine)").map((p) => p.path)).toEqual([
      "docs/events.md",
      "audit.md",
      "lib/app/lambda/",
    ]);
  });

  it("resolves a path from the repo's root, lib/, or the file's own folder", () => {
    expect(candidates("lib/dispatch/plan.ts", "lib/model/dispatch-store.ts")).toEqual(["lib/model/dispatch-store.ts"]);
    expect(candidates("docs/architecture.md", "store/optimistic.ts")).toEqual(["lib/store/optimistic.ts"]);
    expect(candidates("lib/poll/poll.ts", "readers/list.ts")).toEqual(["lib/poll/readers/list.ts"]);
    expect(candidates("lib/dispatch/tick.ts", "plan.ts")).toEqual(["lib/dispatch/plan.ts"]);
    expect(candidates("lib/config/routes.ts", "types.ts")).toEqual(["lib/config/types.ts"]);
    expect(candidates("README.md", "serverless.yml")).toEqual(["serverless.yml"]);
    for (const notAPath of ["../model/poll.js", "zod/mini.js", "x.ts", "Node.js", "lookout.yaml"]) {
      expect(candidates("lib/dispatch/plan.ts", notAPath)).toBeUndefined();
    }
    expect(candidates("docs/platform.md", "plan.ts")).toBeUndefined();
    expect(exists("lib/model/poll.js")).toBe(true);
    expect(exists("lib/model/patterns.ts")).toBe(false);
  });
});
