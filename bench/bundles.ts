/**
 * Bundle size and module load time per function, before and after the lean bundles: packages the stack
 * offline (scripts/package.ts, in a temporary copy so the project's .serverless/ is left alone) and the
 * same stack as an earlier commit had it (the baseline), reads the sizes (scripts/bundle-sizes.ts), and
 * times `import()` of each minified bundle in a fresh `node` process — a proxy for the part of a Lambda
 * cold start that is ours. Before and after are loaded in turn, so that both see the same machine.
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { createRequire } from "node:module";
import { promisify } from "node:util";
import { packageStack, ROOT, type Packaged } from "../scripts/package.js";
import { bundleSizes, type BundleSize } from "../scripts/bundle-sizes.js";
import { extractZip } from "../scripts/zip.js";
import { failurePathFiles, inputsLoaded, packagingPlugins } from "../scripts/bundle-inputs.js";
import { percentile, report, section } from "./support.js";

const RUNS = 15;
/** Each function's module load, at most this many times the SDK floor's. */
const FLOOR_TARGET = 1.25;
/** serverless.yml's esbuild banner: CommonJS dependencies call require() for Node's built-ins. */
const BANNER = "import{createRequire as __lookoutRequire}from'node:module';const require=__lookoutRequire(import.meta.url);";
const run = promisify(execFile);

/**
 * The "before": the last commit whose bundles carried the AWS SDK, a YAML parser and both senders in
 * both notify functions. LOOKOUT_BENCH_BASELINE=<ref> compares with another; `none` measures only now.
 * A baseline whose package-lock.json is not this one's gets its own `npm ci`.
 */
const BASELINE = process.env.LOOKOUT_BENCH_BASELINE ?? "030ded2";
/** Packaging takes seconds; serverless can wait forever on a build that failed. */
const PACKAGE_TIMEOUT_MS = 5 * 60_000;

/**
 * Times the import inside the child, so Node's own start-up is apart, and the CPU time it took (user and
 * system, which other processes on a busy machine move less than the wall clock); prints them as JSON.
 */
const LOADER = `const c = process.cpuUsage(); const t = performance.now(); await import(process.argv[1]); const u = process.cpuUsage(c); console.log(JSON.stringify({ importMs: performance.now() - t, sinceStartMs: performance.now(), cpuMs: (u.user + u.system) / 1000 }));`;

/**
 * The same with Node's web streams loaded first, outside the timing: every function loads them at import
 * (middy's response streaming names them), the floor at its first request (the SDK's request path does,
 * a failed DynamoDB call too), so a first invocation pays them either way. Timed without them, the
 * import is set against the floor for what differs.
 */
const LOADER_STREAMS_LOADED = `await import("node:stream/web"); ${LOADER}`;

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

interface Load {
  importMs: number;
  sinceStartMs: number;
  cpuMs: number;
}

interface Variant {
  label: string;
  packaged: Packaged;
  sizes: Map<string, BundleSize>;
}

export async function benchBundles() {
  section({
    id: "bundles",
    title: "Bundle size and module load time per function",
    method:
      "`npm run package`'s packaging (scripts/package.ts: osls + serverless-esbuild, offline, lookout.example.yaml, stage prod) into a temporary " +
      `copy of the project (after, the AWS SDK bundled and tree-shaken), the same with LOOKOUT_RUNTIME_AWS_SDK=1 (in brackets: the AWS SDK left to the runtime, as docs/deploy.md weighs), and the ` +
      `same packaging of commit ${BASELINE} (before: the AWS SDK, the YAML parser and both senders in every notify bundle; with its own package-lock.json's dependencies, npm ci, where it differs), ` +
      "from `git archive`; sizes as `npm run bundle-sizes` reads them (the minified code with the chunks it loads on demand, what importing it loads, and the zip uploaded to Lambda). In brackets the AWS SDK " +
      "is not in the bundles: Lambda's nodejs22.x runtime provides it (docs/deploy.md, \"The AWS SDK\"), and here a `node_modules` beside each " +
      "extracted bundle links to the project's, as the runtime's own node_modules does in Lambda, so the load time includes loading the SDK as " +
      `in the others. Module load time: each zip is extracted and its bundle (\`functions/<name>.mjs\`, which imports the chunks it needs at once) is \`import()\`ed in a fresh \`node\` process, ${RUNS} times, the variants in turn; ` +
      "the figure is the median of the time the import took inside that process (Node's own start-up apart, given beside it as the whole " +
      "process's time to the end of the import). The child gets only PATH, a region, dummy AWS keys and TABLE_NAME: loading sends no request " +
      "and needs no credentials. This is a proxy for the part of a Lambda cold start that is ours — on this machine and Node " +
      `${process.version}, not Lambda's nodejs22.x runtime, whose own init and network are not included.`,
  });
  const cleanup: string[] = [];
  try {
    const t = performance.now();
    const after = await variant("after", () => packageStack({ isolated: true, timeoutMs: PACKAGE_TIMEOUT_MS }), cleanup);
    report({ name: "packaging time (whole stack, offline)", value: (performance.now() - t) / 1000, unit: "s", method: "serverless package in a temporary copy of the project, bundling every function" });
    const path = await failurePathFiles();
    report({
      name: "the repository's files one deployment failure's path loads (poll, publish, notify-slack)", value: path.length, unit: "files",
      method: "scripts/bundle-inputs.ts --failure-path: each function's packaged build (esbuild's metafile), what importing it loads and the Slack Web API form it loads to post (docs/architecture.md, \"Following one deployment failure\")",
    });
    // The alternative docs/deploy.md weighs: the same code with the SDK left to the runtime.
    const sdkRuntime = await variant("sdk-runtime", () => packageStack({ isolated: true, timeoutMs: PACKAGE_TIMEOUT_MS, env: { LOOKOUT_RUNTIME_AWS_SDK: "1" } }), cleanup);
    const before = BASELINE === "none" ? undefined : await baseline(cleanup);
    const variants = [...(before ? [before] : []), after, sdkRuntime];

    const unpacked = mkdtempSync(join(tmpdir(), "lookout-bench-bundles-"));
    cleanup.push(unpacked);
    // The floor: what any bundled function that reads DynamoDB pays, its client alone, bundled the same way.
    const floorBundle = await sdkFloor(join(unpacked, "floor"));
    // The same client with the SDK's own default credential chain, as any function bundles it unless it does as ours.
    const chainFloorBundle = await sdkFloor(join(unpacked, "floor-chain"), { defaultChain: true });
    const floorLoads: Load[] = [];
    const chainRatios: Array<{ fn: string; ratio: number; cpu: number }> = [];
    const ratios: Array<{ fn: string; ratio: number; cpu: number }> = [];
    const streamRatios: Array<{ fn: string; ratio: number; cpu: number }> = [];
    const ownRatios: Array<{ fn: string; clients: string[]; ratio: number; cpu: number }> = [];
    for (const fn of after.sizes.keys()) {
      const roots = variants.map((v) => (v.sizes.has(fn) ? extracted(v, fn, join(unpacked, v.label, fn)) : undefined));
      const loads: Load[][] = variants.map(() => []);
      const floor: Load[] = [];
      const chainFloor: Load[] = [];
      const own: Load[] = [];
      // With Node's web streams loaded first, the function's bundle and then the floor's.
      const streamsLoaded: Load[] = [];
      const floorStreamsLoaded: Load[] = [];
      const afterIndex = variants.indexOf(after);
      // The AWS SDK clients this function loads at import, bare, bundled the same way: its own floor.
      const clients = await clientsAtImport(after.sizes.get(fn)!.handler);
      const ownBundle = await sdkFloor(join(unpacked, `floor-${fn}`), { clients });
      for (let i = 0; i < RUNS; i++) {
        for (const [j, root] of roots.entries()) {
          if (root) loads[j]!.push(await load(root.dir, root.bundle));
          // The floors right after the function's bundle, so that each ratio is of loads on the same machine at the same time.
          if (j === afterIndex) {
            floor.push(await load(dirname(floorBundle), floorBundle));
            chainFloor.push(await load(dirname(chainFloorBundle), chainFloorBundle));
            own.push(await load(dirname(ownBundle), ownBundle));
            streamsLoaded.push(await load(root!.dir, root!.bundle, LOADER_STREAMS_LOADED));
            floorStreamsLoaded.push(await load(dirname(floorBundle), floorBundle, LOADER_STREAMS_LOADED));
          }
        }
      }
      floorLoads.push(...floor);
      // The median of the runs' ratios, each of a load and the floor's just after it: a busy machine's load moves both alike.
      const of = (k: "importMs" | "cpuMs", by: Load[] = floor, timed: Load[] = loads[afterIndex]!) => percentile(timed.map((x, i) => x[k] / by[i]![k]), 50);
      ratios.push({ fn, ratio: of("importMs"), cpu: of("cpuMs") });
      streamRatios.push({ fn, ratio: of("importMs", floorStreamsLoaded, streamsLoaded), cpu: of("cpuMs", floorStreamsLoaded, streamsLoaded) });
      ownRatios.push({ fn, clients, ratio: of("importMs", own), cpu: of("cpuMs", own) });
      chainRatios.push({ fn, ratio: of("importMs", chainFloor), cpu: of("cpuMs", chainFloor) });
      // "before → after (after with the runtime's SDK)"
      const both = (f: (v: Variant, j: number) => string) => {
        const xs = variants.map(f);
        return `${xs.slice(0, -1).join(" → ")} (${xs.at(-1)})`;
      };
      const label = before ? ", before → after (runtime's SDK)" : ", now (runtime's SDK)";
      report({
        name: `${fn}: minified code / loaded at import / zip${label}`,
        value: both((v) => {
          const s = v.sizes.get(fn);
          return s ? `${kb(s.bundleBytes)} / ${kb(s.loadedBytes)} / ${kb(s.zipBytes)}` : "—";
        }),
        unit: "KB",
        method: "scripts/bundle-sizes.ts: the function's `functions/<name>.mjs` with the chunks beside it it loads on demand, of that what importing it loads (the bundle and the chunks it imports statically), and its `<fn>.zip`",
      });
      report({
        name: `${fn}: module load (import) / whole process to loaded, median${label}`,
        value: both((_, j) => {
          const l = loads[j]!;
          return l.length ? `${median(l.map((x) => x.importMs))} / ${median(l.map((x) => x.sinceStartMs))}` : "—";
        }),
        unit: "ms",
        method: `median of ${RUNS} fresh \`node\` processes: performance.now() around import() of the bundle, and performance.now() at its end (since the process started)`,
      });
    }
    report({
      name: "the SDK floor: the bare DynamoDB client bundled the same way, module load (import) / whole process, median",
      value: `${median(floorLoads.map((x) => x.importMs))} / ${median(floorLoads.map((x) => x.sinceStartMs))}`,
      unit: "ms",
      method: "esbuild (the packaging's options: ESM, node22, minified, split into chunks loaded on demand, the same require banner, the SDK schemas' trait keys and the environment's credentials for the SDK's default chain as infra/esbuild-plugins.cjs gives them) of `new DynamoDBClient({})` from @aws-sdk/client-dynamodb; loaded in turn with each function's bundle",
    });
    report({
      name: "module load against the SDK floor with the SDK's own default credential chain (how a function bundles the client unless it does as Lookout's)",
      value: chainRatios.map((r) => `${r.fn} ${r.ratio.toFixed(2)}× (CPU ${r.cpu.toFixed(2)}×)`).join(", "),
      method: `the same floor without infra/lambda-credentials.mjs (its other credential providers are chunks, one of which shares the Query and XML protocols with the client's chunk, loaded at import), loaded just after each of the function's ${RUNS} loads; the median of the ratios`,
    });
    // The floor as one file, as the functions were bundled before they were split: what their earlier ratios were taken against.
    const whole = await sdkFloor(join(unpacked, "floor-whole"), { splitting: false });
    const wholeLoads: Load[] = [];
    const splitLoads: Load[] = [];
    for (let i = 0; i < RUNS; i++) {
      wholeLoads.push(await load(dirname(whole), whole));
      splitLoads.push(await load(dirname(floorBundle), floorBundle));
    }
    report({
      name: "the SDK floor in one file (not split), module load (import), median, against the split floor's loaded in turn",
      value: `${median(wholeLoads.map((x) => x.importMs))} against ${median(splitLoads.map((x) => x.importMs))}`,
      unit: "ms",
      method: "the same esbuild options without splitting: the SDK's own on-demand imports (its other credential providers) in the one file, as the functions' bundles had them before they were split",
    });
    const met = (r: { ratio: number }) => r.ratio <= FLOOR_TARGET;
    const missed = ratios.filter((r) => !met(r)).map((r) => r.fn);
    report({
      name: "module load against the SDK floor (the median of each function's import ÷ the floor's loaded just after it)",
      value: ratios.map((r) => `${r.fn} ${r.ratio.toFixed(2)}× ${met(r) ? "met" : "not met"} (CPU ${r.cpu.toFixed(2)}×)`).join(", "),
      method: `the bundled variant (after); the floor loaded just after each of its ${RUNS} loads, and the median of the ${RUNS} ratios; target ≤ ${FLOOR_TARGET}× for each function: ${missed.length ? `not met (${missed.join(", ")})` : "met"}; in brackets the same of the imports' CPU time (process.cpuUsage(), user + system)`,
    });
    const streamsMissed = streamRatios.filter((r) => !met(r)).map((r) => r.fn);
    report({
      name: "module load against the SDK floor, Node's web streams loaded first in both (a first invocation loads them either way)",
      value: streamRatios.map((r) => `${r.fn} ${r.ratio.toFixed(2)}× (CPU ${r.cpu.toFixed(2)}×)`).join(", "),
      method: `as the line above, each child importing node:stream/web before the timing: the functions load them at import (@middy/core imports ReadableStream for response streaming), the floor at its first request (the SDK's request path: a failed DynamoDB call loads them), so a first invocation pays them either way; ≤ ${FLOOR_TARGET}×: ${streamsMissed.length ? `not met (${streamsMissed.join(", ")})` : "met"}`,
    });
    // What is ours (our code, Powertools, the Slack and mail libraries) above the AWS SDK clients the function needs at every cold start.
    const ownMissed = ownRatios.filter((r) => r.ratio > FLOOR_TARGET).map((r) => r.fn);
    report({
      name: "module load against the function's own clients' floor (its AWS SDK clients, bare, bundled the same way)",
      value: ownRatios.map((r) => `${r.fn} ${r.ratio.toFixed(2)}× (CPU ${r.cpu.toFixed(2)}×; ${r.clients.map((c) => c.replace("@aws-sdk/client-", "")).join(" + ")})`).join(", "),
      method: `the AWS SDK clients each function's bundle loads at import (esbuild's metafile of the packaging's own build of it, infra/esbuild-plugins.cjs included), each constructed bare in one bundle built as the floor is, loaded just after each of the function's ${RUNS} loads; the median of the ratios; ≤ ${FLOOR_TARGET}×: ${ownMissed.length ? `not met (${ownMissed.join(", ")})` : "met"} for each function`,
    });
    await libraryShare([...after.sizes.values()].map((s) => ({ fn: s.fn, handler: s.handler })), unpacked, floorBundle);
  } finally {
    for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
  }
}

/** Stand-ins for the libraries every function's handler is built on, doing nothing: what is left is the rest. */
const LIBRARY_STUBS: Record<string, string> = {
  "@aws-lambda-powertools/logger": "export class Logger { info() {} warn() {} error() {} debug() {} appendKeys() {} }",
  "@aws-lambda-powertools/logger/middleware": "export const injectLambdaContext = () => ({ before() {} });",
  "@aws-lambda-powertools/metrics": 'export class Metrics { addMetric() {} addDimension() {} publishStoredMetrics() {} }\nexport const MetricUnit = { Count: "Count", Milliseconds: "Milliseconds", Bytes: "Bytes", Seconds: "Seconds" };',
  "@aws-lambda-powertools/metrics/middleware": "export const logMetrics = () => ({ before() {} });",
  // middy's own imports of Node (response streaming, its timeout) kept: a first invocation loads them either way.
  "@middy/core":
    'import "node:stream"; import "node:stream/promises"; import "node:stream/web"; import "node:timers";\n' +
    "export default (handler) => Object.assign((event, context) => handler(event, context), { use() { return this; } });",
};

/**
 * What Powertools' Logger and Metrics and middy cost at each function's import: the function's handler built
 * as the packaging builds it (infra/esbuild-plugins.cjs), and again with those libraries as stubs, each loaded
 * in turn with the floor.
 */
async function libraryShare(fns: Array<{ fn: string; handler: string }>, dir: string, floorBundle: string) {
  const { build } = await import("esbuild");
  const stubs: import("esbuild").Plugin = {
    name: "bench-library-stubs",
    setup(b) {
      const names = Object.keys(LIBRARY_STUBS).map((n) => n.replace(/[/.]/g, "\\$&")).join("|");
      b.onResolve({ filter: new RegExp(`^(${names})$`) }, (args) => ({ path: args.path, namespace: "bench-stub" }));
      b.onLoad({ filter: /.*/, namespace: "bench-stub" }, (args) => ({ contents: LIBRARY_STUBS[args.path], loader: "js" }));
    },
  };
  const built = async (handler: string, out: string, extra: import("esbuild").Plugin[]) => {
    await build({
      entryPoints: [join(ROOT, handler.replace(/\.mjs$/, ".ts"))], absWorkingDir: ROOT, bundle: true, minify: true, platform: "node", format: "esm", target: "node22",
      mainFields: ["module", "main"], splitting: true, outdir: out, entryNames: "handler", chunkNames: "handler.[name]-[hash]", outExtension: { ".js": ".mjs" },
      logLevel: "silent", plugins: [...extra, ...packagingPlugins()], banner: { js: BANNER },
    });
    return join(out, "handler.mjs");
  };
  const rows: string[] = [];
  for (const { fn, handler } of fns) {
    const whole = await built(handler, join(dir, "libraries", fn, "whole"), []);
    const without = await built(handler, join(dir, "libraries", fn, "without"), [stubs]);
    const ratio: Record<"whole" | "without", number[]> = { whole: [], without: [] };
    for (let i = 0; i < RUNS; i++) {
      for (const [k, bundle] of [["whole", whole], ["without", without]] as const) {
        const l = await load(dirname(bundle), bundle);
        ratio[k].push(l.cpuMs / (await load(dirname(floorBundle), floorBundle)).cpuMs);
      }
    }
    const [w, wo] = [percentile(ratio.whole, 50), percentile(ratio.without, 50)];
    rows.push(`${fn} ${w.toFixed(2)}× → ${wo.toFixed(2)}×`);
  }
  report({
    name: "module load (CPU) against the SDK floor, built here as packaged → with Powertools' Logger and Metrics and middy as stubs",
    value: rows.join(", "),
    method: `each function's handler built with the packaging's options and plugins (infra/esbuild-plugins.cjs), and again with those libraries replaced by stubs that do nothing; each loaded ${RUNS} times in turn, the floor just after each load; the median of the ratios of CPU time: the difference is what those libraries cost at a cold start, the rest is our code, zod, the clients' commands and the other libraries`,
  });
}

/** The `@aws-sdk/client-*` packages a function's bundle loads at import (not those of the chunks it loads on demand). */
async function clientsAtImport(handler: string): Promise<string[]> {
  const clients = new Set<string>();
  for (const input of await inputsLoaded(handler.replace(/\.mjs$/, ".ts"))) {
    const m = /node_modules\/(@aws-sdk\/client-[^/]+)\//.exec(input);
    if (m) clients.add(m[1]!);
  }
  return [...clients].sort();
}

/** A client package's client class, `SSMClient` of @aws-sdk/client-ssm: the one `<Name>Client.js` of its dist-es. */
function clientClass(pkg: string): string {
  const file = readdirSync(join(ROOT, "node_modules", pkg, "dist-es")).find((f) => /^[A-Za-z0-9]+Client\.js$/.test(f));
  if (!file) throw new Error(`no client class in ${pkg}`);
  return file.replace(/\.js$/, "");
}

/**
 * The bare DynamoDB client, bundled as serverless-esbuild bundles the functions (serverless.yml, custom.esbuild):
 * split too, so that the SDK's own on-demand imports (its other credential providers) are chunks here as there.
 */
async function sdkFloor(
  dir: string,
  { splitting = true, clients = ["@aws-sdk/client-dynamodb"], defaultChain = false }: { splitting?: boolean; clients?: readonly string[]; defaultChain?: boolean } = {},
): Promise<string> {
  const { build } = await import("esbuild");
  // Bundled the same way: the SDK's schemas as infra/esbuild-plugins.cjs gives them, and the environment's
  // credentials for the SDK's default chain (unless the floor is to keep that chain).
  type Plugins = Record<"lambdaCredentials" | "sdkSchemaKeys", () => import("esbuild").Plugin>;
  const ours = createRequire(import.meta.url)(join(ROOT, "infra", "esbuild-plugins.cjs")) as Plugins;
  const plugins = [ours.sdkSchemaKeys(), ...(defaultChain ? [] : [ours.lambdaCredentials()])];
  const contents = clients.map((pkg, i) => `import { ${clientClass(pkg)} as C${i} } from "${pkg}";\nexport const c${i} = new C${i}({});\n`).join("");
  await build({
    stdin: { contents, resolveDir: ROOT, loader: "js", sourcefile: "floor.js" },
    bundle: true, minify: true, platform: "node", format: "esm", target: "node22", mainFields: ["module", "main"], logLevel: "silent",
    outdir: dir, entryNames: "floor", splitting, chunkNames: "floor.[name]-[hash]", outExtension: { ".js": ".mjs" },
    plugins,
    banner: { js: BANNER },
  });
  return join(dir, "floor.mjs");
}

async function variant(label: string, pack: () => Promise<Packaged>, cleanup: string[]): Promise<Variant> {
  let packaged: Packaged;
  try {
    packaged = await pack();
  } catch (err) {
    report({ name: `packaging failed (${label})`, value: (err as Error).message.split("\n")[0]!, method: "scripts/package.ts packageStack; run `npm run package` to see why" });
    throw err;
  }
  if (packaged.serviceDir !== ROOT) cleanup.push(packaged.serviceDir);
  return { label, packaged, sizes: new Map(bundleSizes(packaged.outDir).map((s) => [s.fn, s])) };
}

/** The baseline commit, from `git archive`, packaged in place with the project's node_modules. */
async function baseline(cleanup: string[]): Promise<Variant | undefined> {
  const dir = mkdtempSync(join(tmpdir(), "lookout-bench-baseline-"));
  cleanup.push(dir);
  try {
    const tar = join(dir, "source.tar");
    execFileSync("git", ["-C", ROOT, "archive", "--format=tar", "-o", tar, BASELINE], { stdio: "pipe" });
    execFileSync("tar", ["-xf", tar, "-C", dir], { stdio: "pipe" });
  } catch (err) {
    report({ name: "baseline not packaged", value: `${BASELINE} is not in this clone`, method: `git archive ${BASELINE}: ${(err as Error).message.split("\n")[0]}` });
    return undefined;
  }
  // Its own dependencies, unless they are this one's: an earlier commit may import a package since removed.
  const lock = (d: string) => {
    try {
      return readFileSync(join(d, "package-lock.json"), "utf8");
    } catch {
      return undefined;
    }
  };
  if (lock(dir) !== undefined && lock(dir) === lock(ROOT)) {
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  } else {
    try {
      console.error(`  bundles: ${BASELINE}'s package-lock is not this one's: npm ci in its copy (a minute or so)`);
      await run("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: dir, timeout: PACKAGE_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
    } catch (err) {
      report({ name: "baseline not packaged", value: `${BASELINE}: npm ci failed`, method: `npm ci in the baseline's copy: ${(err as Error).message.split("\n")[0]}` });
      return undefined;
    }
  }
  try {
    return await variant("before", () => packageStack({ serviceDir: dir, timeoutMs: PACKAGE_TIMEOUT_MS }), cleanup);
  } catch {
    return undefined; // variant() reported why
  }
}

/** Extracts a function's zip, as Lambda does into /var/task, with the SDK's node_modules beside it (used by the runtime-SDK variant only). */
function extracted(v: Variant, fn: string, dir: string): { dir: string; bundle: string } {
  extractZip(join(v.packaged.outDir, `${fn}.zip`), dir);
  // Lambda resolves the runtime's SDK through NODE_PATH, which Node's own ESM resolver ignores: a link beside the bundle stands in.
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  return { dir, bundle: join(dir, v.sizes.get(fn)!.handler) };
}

async function load(root: string, bundle: string, loader = LOADER): Promise<Load> {
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", loader, pathToFileURL(bundle).href], { cwd: root, env: childEnv(root) });
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as Load;
}

const median = (xs: number[]) => percentile(xs, 50).toFixed(0);
const kb = (n: number) => (n / 1024).toFixed(0);
