/**
 * Prints the size of each function's package: its minified code (`functions/<name>.mjs`, the AWS SDK
 * clients included, and the chunks beside it that it loads on demand), what of it is loaded at its cold
 * start (the bundle and the chunks it imports statically), and the zip uploaded to Lambda. Reads the
 * packages `npm run package` wrote.
 *
 *   node bin/run-ts.mjs scripts/bundle-sizes.ts [packageDir=.serverless] [--markdown]
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, join, posix } from "node:path";
import { pathToFileURL } from "node:url";
import { readZip, type ZipEntry } from "./zip.js";

export interface BundleSize {
  /** The function's key in serverless.yml. */
  fn: string;
  /** The handler's bundle inside the package (`functions/<name>.mjs`): what Lambda imports. */
  handler: string;
  /** The code inside the package: the handler's bundle, other scripts (the audit page's), and how many chunks. */
  bundle: string;
  /** Minified code, bytes: the bundle and every chunk. */
  bundleBytes: number;
  /** Of it, what importing the handler loads: the bundle and the chunks it imports statically, transitively. */
  loadedBytes: number;
  /** The whole zip, bytes. */
  zipBytes: number;
}

/** A function's own chunks (infra/esbuild-plugins.cjs): `functions/<name>.<chunk>-<hash>.mjs`. */
const CHUNK = /^functions\/[^/.]+\.[^/]+\.mjs$/;
/** esbuild's static imports of a sibling chunk (`import{a as b}from"./x.mjs"`, `import"./x.mjs"`); `import("./x.mjs")` is on demand. */
const STATIC_IMPORT = /(?:\bfrom|\bimport)\s*"(\.\/[^"]+\.mjs)"/g;

/** What importing `handler` loads: it and the chunks it imports statically, transitively, each once. */
export function loadedScripts(entries: readonly ZipEntry[], handler: string): ZipEntry[] {
  const byName = new Map(entries.map((e) => [e.name, e]));
  const loaded = new Map<string, ZipEntry>();
  const visit = (e: ZipEntry | undefined) => {
    if (!e || loaded.has(e.name)) return;
    loaded.set(e.name, e);
    for (const m of e.data().toString("utf8").matchAll(STATIC_IMPORT)) visit(byName.get(posix.join(posix.dirname(e.name), m[1]!)));
  };
  visit(byName.get(handler));
  return [...loaded.values()];
}

export function bundleSizes(dir: string): BundleSize[] {
  if (!existsSync(dir)) throw new Error(`${dir} does not exist: run \`npm run package\` first`);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".zip"))
    .sort()
    .map((zip) => {
      const scripts = readZip(join(dir, zip)).filter((e) => /\.(mjs|cjs|js)$/.test(e.name));
      const chunks = scripts.filter((e) => CHUNK.test(e.name));
      const others = scripts.filter((e) => !CHUNK.test(e.name));
      const handler = others.find((e) => /^functions\/[^/.]+\.(mjs|cjs|js)$/.test(e.name)) ?? others[0]!;
      const named = [handler, ...others.filter((e) => e !== handler)].map((e) => e.name);
      return {
        fn: basename(zip, ".zip"),
        handler: handler.name,
        bundle: [...named, ...(chunks.length ? [`${chunks.length} chunks`] : [])].join(", "),
        bundleBytes: scripts.reduce((n, b) => n + b.size, 0),
        loadedBytes: loadedScripts(scripts, handler.name).reduce((n, e) => n + e.size, 0),
        zipBytes: statSync(join(dir, zip)).size,
      };
    });
}

const kb = (n: number) => `${(n / 1024).toFixed(n < 10 * 1024 ? 1 : 0)} KB`;

export function formatSizes(sizes: readonly BundleSize[], markdown = false): string {
  if (markdown) {
    return [
      "| function | bundle | minified | loaded at import | zip |",
      "|---|---|---:|---:|---:|",
      ...sizes.map((s) => `| ${s.fn} | \`${s.bundle}\` | ${kb(s.bundleBytes)} | ${kb(s.loadedBytes)} | ${kb(s.zipBytes)} |`),
    ].join("\n");
  }
  const w = Math.max(...sizes.map((s) => s.fn.length), 8);
  return [
    `${"function".padEnd(w)}  ${"minified".padStart(9)}  ${"loaded".padStart(9)}  ${"zip".padStart(8)}  bundle`,
    ...sizes.map((s) => `${s.fn.padEnd(w)}  ${kb(s.bundleBytes).padStart(9)}  ${kb(s.loadedBytes).padStart(9)}  ${kb(s.zipBytes).padStart(8)}  ${s.bundle}`),
  ].join("\n");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const dir = args.find((a) => !a.startsWith("--")) ?? ".serverless";
  try {
    console.log(formatSizes(bundleSizes(dir), args.includes("--markdown")));
  } catch (err) {
    console.error(`bundle-sizes: ${(err as Error).message}`);
    process.exit(1);
  }
}
