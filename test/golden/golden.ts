/**
 * Golden files: `expectGolden(path, actual)` compares with the file under test/golden/; with
 * UPDATE_GOLDEN=1 it (re)writes the file instead. A missing file fails the test, naming the command.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";

export const GOLDEN_DIR = dirname(fileURLToPath(import.meta.url));
export const updating = process.env.UPDATE_GOLDEN === "1";

/** "Deployment Still Failing" → "deployment-still-failing". */
export const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");

export function expectGolden(relPath: string, actual: string): void {
  const path = join(GOLDEN_DIR, relPath);
  if (updating) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, actual);
    return;
  }
  if (!existsSync(path)) throw new Error(`golden file test/golden/${relPath} is missing: run UPDATE_GOLDEN=1 npx vitest run`);
  expect(actual, `test/golden/${relPath} (UPDATE_GOLDEN=1 rewrites it)`).toBe(readFileSync(path, "utf8"));
}

export const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
