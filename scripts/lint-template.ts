/**
 * `npm run lint:template`: cfn-lint on the packaged template (run `npm run package` first). Where
 * cfn-lint is not installed it says so and succeeds: the machines this project runs on have it
 * (pip install cfn-lint), a laptop may not.
 *
 * W3005 ("dependency already enforced") is ignored: serverless itself writes those DependsOn (function →
 * its role and log group, API route → integration); they are redundant, not wrong.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

export const IGNORED_CHECKS = ["W3005"];

export function cfnLintAvailable(): boolean {
  const r = spawnSync("cfn-lint", ["--version"], { encoding: "utf8" });
  return !r.error && r.status === 0;
}

export interface LintResult {
  status: number;
  output: string;
}

export function lintTemplate(template: string): LintResult {
  const r = spawnSync("cfn-lint", ["--ignore-checks", ...IGNORED_CHECKS, "--", template], { encoding: "utf8" });
  if (r.error) throw r.error;
  return { status: r.status ?? 1, output: `${r.stdout ?? ""}${r.stderr ?? ""}`.trim() };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const template = resolve(process.argv[2] ?? ".serverless/cloudformation-template-update-stack.json");
  if (!cfnLintAvailable()) {
    console.log("lint:template: cfn-lint is not installed (pip install cfn-lint): the template was NOT linted");
    process.exit(0);
  }
  if (!existsSync(template)) {
    console.error(`lint:template: ${template} does not exist: run \`npm run package\` first`);
    process.exit(1);
  }
  const r = lintTemplate(template);
  if (r.output) console.log(r.output);
  console.log(r.status === 0 ? `lint:template: cfn-lint found nothing in ${template}` : `lint:template: cfn-lint found problems (exit ${r.status})`);
  process.exit(r.status === 0 ? 0 : 1);
}
