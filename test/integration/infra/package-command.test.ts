/**
 * `npm run package`'s own checks, before serverless starts (docs/deploy.md): `--config` is Lookout's
 * configuration, not serverless's service file, and what packaging would refuse is a problem a line.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../../../scripts/package.js";

// Inside the project, as packaging requires; removed after.
const name = `lookout.package-test-${randomUUID().slice(0, 8)}.yaml`;
afterAll(() => rmSync(join(ROOT, name), { force: true }));

const pkg = (...args: string[]) => spawnSync(process.execPath, ["bin/run-ts.mjs", "scripts/package.ts", ...args], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });

describe("npm run package, before serverless starts", () => {
  it("takes --config (here as --config=F), and says each problem of a configuration it would refuse on a line of its own", () => {
    const example = readFileSync(join(ROOT, "lookout.example.yaml"), "utf8");
    writeFileSync(join(ROOT, name), example.replace("token: ssm:/lookout/prod/platform-token", "token: env:PLATFORM_API_TOKEN").replace("digest_within: 2m", "digest_within: 30s"));
    const r = pkg(`--config=${name}`);
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines[0]).toBe(`package: ${name}: platform.token: env:PLATFORM_API_TOKEN is read from the environment, which the deployed functions do not get; use ssm:/… (SecureString) or secretsmanager:…`);
    expect(lines.slice(1)).toEqual([`package: ${name}: notify.digest_within: the cloud flushes digests once a minute; give at least 1m`]);
    expect(r.stdout).not.toContain("packaging");
  });

  it("a --config without its file is a usage line", () => {
    const r = pkg("--config");
    expect([r.status, r.stderr.trim()]).toEqual([1, "package: --config needs a value"]);
  });
});
