/**
 * Bundle size and module load time per function: packages the stack offline (scripts/package.ts, in a
 * temporary copy so the project's .serverless/ is left alone), reads the sizes (scripts/bundle-sizes.ts),
 * and times `import()` of each minified bundle in a fresh `node` process — a proxy for the part of a
 * Lambda cold start that is ours.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { packageStack, ROOT } from "../scripts/package.js";
import { bundleSizes } from "../scripts/bundle-sizes.js";
import { extractZip } from "../scripts/zip.js";
import { percentile, report, section } from "./support.js";

const RUNS = 5;
const run = promisify(execFile);

/** Times the import inside the child, so Node's own start-up is apart; prints both as JSON. */
const LOADER = `const t = performance.now(); await import(process.argv[1]); console.log(JSON.stringify({ importMs: performance.now() - t, sinceStartMs: performance.now() }));`;

/** The child's whole environment: a region and dummy keys, so no SDK client looks for credentials or a region anywhere. */
const childEnv = (taskRoot: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "bench",
  AWS_SECRET_ACCESS_KEY: "bench",
  AWS_EC2_METADATA_DISABLED: "true",
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  LAMBDA_TASK_ROOT: taskRoot,
  TABLE_NAME: "lookout-bench",
});

export async function benchBundles() {
  section({
    id: "bundles",
    title: "Bundle size and module load time per function",
    method:
      "`npm run package`'s packaging (scripts/package.ts: osls + serverless-esbuild, offline, lookout.example.yaml, stage prod) into a temporary " +
      "copy of the project; sizes as `npm run bundle-sizes` reads them (the minified bundle with the AWS SDK clients it uses, and the zip " +
      `uploaded to Lambda). Module load time: each zip is extracted and its bundle is \`import()\`ed in a fresh \`node\` process, ${RUNS} times; ` +
      "the figure is the median of the time the import took inside that process (Node's own start-up apart, given beside it as the whole " +
      "process's time to the end of the import). The child gets only PATH, a region, dummy AWS keys and TABLE_NAME: loading sends no request " +
      "and needs no credentials. This is a proxy for the part of a Lambda cold start that is ours — on this machine and Node " +
      `${process.version}, not Lambda's nodejs22.x runtime, whose own init and network are not included.`,
  });
  const t = performance.now();
  let packaged;
  try {
    packaged = await packageStack({ isolated: true });
  } catch (err) {
    report({ name: "packaging failed", value: (err as Error).message.split("\n")[0]!, method: "scripts/package.ts packageStack({ isolated: true }); run `npm run package` to see why" });
    throw err;
  }
  const unpacked = mkdtempSync(join(tmpdir(), "lookout-bench-bundles-"));
  try {
    report({ name: "packaging time (whole stack, offline)", value: (performance.now() - t) / 1000, unit: "s", method: "serverless package in a temporary copy of the project, bundling every function" });
    for (const s of bundleSizes(packaged.outDir)) {
      report({ name: `${s.fn}: minified bundle / zip`, value: `${kb(s.bundleBytes)} / ${kb(s.zipBytes)}`, unit: "KB", method: "scripts/bundle-sizes.ts: the function's `functions/<name>.mjs` and its `<fn>.zip`" });
      const root = join(unpacked, s.fn);
      extractZip(join(packaged.outDir, `${s.fn}.zip`), root);
      const loads: Array<{ importMs: number; sinceStartMs: number }> = [];
      for (let i = 0; i < RUNS; i++) {
        const { stdout } = await run(process.execPath, ["--input-type=module", "-e", LOADER, pathToFileURL(join(root, s.bundle.split(", ")[0]!)).href], { cwd: root, env: childEnv(root) });
        loads.push(JSON.parse(stdout.trim().split("\n").at(-1)!) as { importMs: number; sinceStartMs: number });
      }
      report({
        name: `${s.fn}: module load (import) / whole process to loaded, median`,
        value: `${percentile(loads.map((l) => l.importMs), 50).toFixed(0)} / ${percentile(loads.map((l) => l.sinceStartMs), 50).toFixed(0)}`,
        unit: "ms",
        method: `median of ${RUNS} fresh \`node\` processes: performance.now() around import() of the bundle, and performance.now() at its end (since the process started)`,
      });
    }
  } finally {
    rmSync(unpacked, { recursive: true, force: true });
    if (packaged.serviceDir !== ROOT) rmSync(packaged.serviceDir, { recursive: true, force: true });
  }
}

const kb = (n: number) => (n / 1024).toFixed(0);
