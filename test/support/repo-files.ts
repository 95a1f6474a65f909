/** The repository's files, for the tests that check the repository as a whole (test/unit/repo/). */
import { readdirSync } from "node:fs";
import { join, posix } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root, with a trailing `/`. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Repo-relative paths (with `/`) of every file below `dir` whose name ends with `ending`. */
export function filesBelow(dir: string, ending: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = posix.join(dir, e.name);
    if (e.isDirectory()) return filesBelow(path, ending);
    return e.name.endsWith(ending) ? [path] : [];
  });
}
