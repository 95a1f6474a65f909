/**
 * Prints the size of each function's package: its minified bundle (`functions/<name>.mjs`, the AWS SDK
 * clients included) and the zip uploaded to Lambda. Reads the packages `npm run package` wrote.
 *
 *   node bin/run-ts.mjs scripts/bundle-sizes.ts [packageDir=.serverless] [--markdown]
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { readZip } from "./zip.js";

export interface BundleSize {
  /** The function's key in serverless.yml. */
  fn: string;
  /** The bundle inside the package. */
  bundle: string;
  /** Minified bundle, bytes. */
  bundleBytes: number;
  /** The whole zip, bytes. */
  zipBytes: number;
}

export function bundleSizes(dir: string): BundleSize[] {
  if (!existsSync(dir)) throw new Error(`${dir} does not exist: run \`npm run package\` first`);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".zip"))
    .sort()
    .map((zip) => {
      const bundles = readZip(join(dir, zip)).filter((e) => /\.(mjs|cjs|js)$/.test(e.name));
      return {
        fn: basename(zip, ".zip"),
        bundle: bundles.map((b) => b.name).join(", "),
        bundleBytes: bundles.reduce((n, b) => n + b.size, 0),
        zipBytes: statSync(join(dir, zip)).size,
      };
    });
}

const kb = (n: number) => `${(n / 1024).toFixed(n < 10 * 1024 ? 1 : 0)} KB`;

export function formatSizes(sizes: readonly BundleSize[], markdown = false): string {
  if (markdown) {
    return [
      "| function | bundle | minified | zip |",
      "|---|---|---:|---:|",
      ...sizes.map((s) => `| ${s.fn} | \`${s.bundle}\` | ${kb(s.bundleBytes)} | ${kb(s.zipBytes)} |`),
    ].join("\n");
  }
  const w = Math.max(...sizes.map((s) => s.fn.length), 8);
  return [
    `${"function".padEnd(w)}  ${"minified".padStart(9)}  ${"zip".padStart(8)}  bundle`,
    ...sizes.map((s) => `${s.fn.padEnd(w)}  ${kb(s.bundleBytes).padStart(9)}  ${kb(s.zipBytes).padStart(8)}  ${s.bundle}`),
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
