/**
 * The stack packaged once per test run from lookout.example.yaml for stage prod, shared by the files that
 * read it (packaging takes seconds of both cores). The first file to ask packages it into the run's
 * temporary directory (removed when the run ends); files in other workers wait for it. A file must not
 * change it. STACK_PACKAGE_DIR=<dir> names a package made earlier instead.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { packageStack } from "../../scripts/package.js";

export const EXAMPLE_CONFIG = "lookout.example.yaml";
export const EXAMPLE_STAGE = "prod";

export interface ExamplePackage {
  /** The packaged artifacts: the template and each function's zip. */
  outDir: string;
  template: string;
}

let mine: Promise<ExamplePackage> | undefined;

export function examplePackage(): Promise<ExamplePackage> {
  if (process.env.STACK_PACKAGE_DIR) {
    const outDir = resolve(process.env.STACK_PACKAGE_DIR);
    return Promise.resolve({ outDir, template: join(outDir, "cloudformation-template-update-stack.json") });
  }
  return (mine ??= shared());
}

async function shared(): Promise<ExamplePackage> {
  const claim = join(tmpdir(), "lookout-example-package");
  const result = join(claim, "result.json");
  try {
    mkdirSync(claim); // atomic: one file of the run packages it
  } catch {
    for (const started = Date.now(); !existsSync(result); await sleep(200)) {
      if (Date.now() - started > 180_000) throw new Error(`the example stack was not packaged within 3 minutes (${claim})`);
    }
    const r = JSON.parse(readFileSync(result, "utf8")) as ExamplePackage | { error: string };
    if ("error" in r) throw new Error(r.error);
    return r;
  }
  const write = (r: unknown) => {
    writeFileSync(`${result}.part`, JSON.stringify(r));
    renameSync(`${result}.part`, result);
  };
  try {
    const p = await packageStack({ isolated: true, config: EXAMPLE_CONFIG, stage: EXAMPLE_STAGE });
    const r = { outDir: p.outDir, template: p.template };
    write(r);
    return r;
  } catch (err) {
    write({ error: (err as Error).message });
    throw err;
  }
}
