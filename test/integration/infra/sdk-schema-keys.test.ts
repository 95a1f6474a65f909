/**
 * The packaging's rewrite of the AWS SDK clients' schemas (infra/sdk-schema-keys.cjs) gives the same
 * schemas: each client's schema module bundled with and without it exports the same values.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build, type Plugin } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const { sdkSchemaKeys } = require("../../../infra/sdk-schema-keys.cjs") as { sdkSchemaKeys: () => Plugin };
const dir = mkdtempSync(join(tmpdir(), "lookout-schema-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every schema the client's schema module exports, thunks followed, as text (a schema met again is named, not repeated). */
async function exportedSchemas(pkg: string, plugins: Plugin[], name: string): Promise<string> {
  const outfile = join(dir, `${name}.mjs`);
  await build({
    stdin: { contents: `export * from "${pkg}/dist-es/schemas/schemas_0.js";`, resolveDir: process.cwd(), loader: "js" },
    bundle: true, platform: "node", format: "esm", mainFields: ["module", "main"], outfile, plugins, logLevel: "silent",
  });
  const mod = (await import(pathToFileURL(outfile).href)) as Record<string, unknown>;
  const seen = new Map<object, string>();
  const show = (v: unknown, at: string): unknown => {
    if (typeof v === "function") return v.length === 0 ? show((v as () => unknown)(), at) : String(v);
    if (v === null || typeof v !== "object") return v;
    if (seen.has(v)) return `@${seen.get(v)}`;
    seen.set(v, at);
    return Array.isArray(v) ? v.map((x, i) => show(x, `${at}.${i}`)) : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, show(x, `${at}.${k}`)]));
  };
  return JSON.stringify(Object.keys(mod).sort().map((k) => [k, show(mod[k], k)]));
}

describe("the SDK schemas, packaged", () => {
  it.each(["@aws-sdk/client-dynamodb", "@aws-sdk/client-eventbridge", "@aws-sdk/client-lambda", "@aws-sdk/client-sesv2", "@aws-sdk/client-sqs"])("are the same with their trait keys written as strings: every one of %s's", async (pkg) => {
    const name = pkg.replace(/\W/g, "-");
    const original = await exportedSchemas(pkg, [], `${name}-original`);
    const rewritten = await exportedSchemas(pkg, [sdkSchemaKeys()], `${name}-rewritten`);
    expect(original.length).toBeGreaterThan(10_000);
    expect(rewritten).toBe(original);
  });
});
