/**
 * What a packaged function loads, by source file: esbuild's metafile of the packaging's own build of its
 * handler (the options of serverless.yml's custom.esbuild, infra/esbuild-plugins.cjs with the default
 * configuration), and of its output chunks those importing the handler loads — or that a path it takes
 * loads on demand (`onDemand`: whether a chunk, given its source files, is loaded too).
 *
 *   node bin/run-ts.mjs scripts/bundle-inputs.ts --failure-path   the files one deployment failure's path loads
 */
import { createRequire } from "node:module";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { DEFAULT_CONFIG, ROOT } from "./package.js";

/** infra/esbuild-plugins.cjs as the packaging gives them, with the configuration it was given: the default one (packageStack's). */
export function packagingPlugins(): import("esbuild").Plugin[] {
  const given = process.env.LOOKOUT_CONFIG;
  process.env.LOOKOUT_CONFIG = given ?? DEFAULT_CONFIG;
  try {
    return createRequire(import.meta.url)(join(ROOT, "infra", "esbuild-plugins.cjs"))() as import("esbuild").Plugin[];
  } finally {
    if (given === undefined) delete process.env.LOOKOUT_CONFIG;
  }
}

/** The source files (paths as esbuild names them: relative to the project, node_modules included) `handler` (a handler such as functions/poll.ts) loads. */
export async function inputsLoaded(handler: string, onDemand: (inputs: readonly string[]) => boolean = () => false): Promise<string[]> {
  const { build } = await import("esbuild");
  const plugins = packagingPlugins();
  const outdir = mkdtempSync(join(tmpdir(), "lookout-bundle-inputs-"));
  try {
    const { metafile } = await build({
      entryPoints: [join(ROOT, handler)], absWorkingDir: ROOT, bundle: true, minify: true, platform: "node", format: "esm", target: "node22",
      mainFields: ["module", "main"], splitting: true, outdir, outExtension: { ".js": ".mjs" }, metafile: true, write: false, logLevel: "silent", plugins,
    });
    const outputs = metafile.outputs;
    const main = Object.keys(outputs).find((k) => outputs[k]!.entryPoint?.endsWith(handler));
    const loaded = new Set<string>();
    const visit = (k: string) => {
      if (loaded.has(k) || !outputs[k]) return;
      loaded.add(k);
      for (const i of outputs[k].imports) {
        if (i.kind === "import-statement" || (i.kind === "dynamic-import" && outputs[i.path] && onDemand(Object.keys(outputs[i.path]!.inputs)))) visit(i.path);
      }
    };
    if (main) visit(main);
    return [...new Set([...loaded].flatMap((k) => Object.keys(outputs[k]!.inputs)))].sort();
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/**
 * The repository's files one deployment failure's path loads (docs/architecture.md, "Following one
 * deployment failure"): the poll, publish and Slack functions, and the Slack Web API form the last
 * loads to post.
 */
export async function failurePathFiles(): Promise<string[]> {
  const slackApi = (inputs: readonly string[]) => inputs.some((f) => f.endsWith("lib/notify/slack/api-form.ts"));
  const files = await Promise.all(["functions/poll.ts", "functions/publish.ts", "functions/notify-slack.ts"].map((h) => inputsLoaded(h, slackApi)));
  return [...new Set(files.flat().filter((f) => !f.includes("node_modules")))].sort();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href && process.argv.includes("--failure-path")) {
  const files = await failurePathFiles();
  console.log(files.join("\n"));
  console.log(`${files.length} files`);
}
