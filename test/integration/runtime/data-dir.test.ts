/**
 * data_dir checked before Lookout starts anything in it (local/runtime/data-dir.ts): created when missing, and
 * one line naming the field and the path for a file, a path through a file, a kernel filesystem, or a
 * directory Lookout may not write (tried as an unprivileged user, since root may write anywhere).
 */
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../../lib/config/load.js";
import { ensureDataDir } from "../../../local/runtime/data-dir.js";

const dir = mkdtempSync(join(tmpdir(), "lookout-datadir-"));

function problem(path: string): string {
  try {
    ensureDataDir(path, "lookout.yaml");
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error(`expected ${path} to be refused`);
}

describe("data_dir", () => {
  it("creates a missing directory, however deep, and leaves nothing of its check behind", () => {
    const deep = join(dir, "a", "b", "c");
    expect(ensureDataDir(deep)).toBe(deep);
    expect(statSync(deep).isDirectory()).toBe(true);
    expect(readdirSync(deep)).toEqual([]);
    expect(ensureDataDir(deep)).toBe(deep); // again: it exists, still fine
  });

  it("refuses a file, and a path through a file", () => {
    const file = join(dir, "plain-file");
    writeFileSync(file, "x");
    expect(problem(file)).toBe(`lookout.yaml: data_dir: ${file}: is a file, not a directory`);
    expect(problem(join(file, "sub", "dir"))).toBe(`lookout.yaml: data_dir: ${join(file, "sub", "dir")}: ${file} is a file, not a directory`);
  });

  it("refuses kernel filesystems without creating anything there", () => {
    for (const path of ["/proc/lookout", "/proc/self/lookout", "/proc", "/sys/kernel/lookout", "/dev/lookout", "/dev/shm/lookout"]) {
      expect(problem(path)).toMatch(new RegExp(`^lookout\\.yaml: data_dir: ${path}: is on \\S+, a kernel filesystem, not storage; choose a directory on a disk$`));
    }
    expect(existsSync("/dev/lookout")).toBe(false);
    expect(existsSync("/dev/shm/lookout")).toBe(false);
  });

  // As root the check runs as nobody, who must be able to read the project (a clone in a private
  // folder, such as mktemp -d's, is not) and reach the test's directory (a private TMPDIR is not): where
  // it cannot, this case is skipped, and says so.
  const moduleFile = new URL("../../../local/runtime/data-dir.ts", import.meta.url).pathname;
  chmodSync(dir, 0o755);
  const nobodyCan = (test: string, path: string) => spawnSync("test", [test, path], { uid: 65534, gid: 65534 }).status === 0;
  const unreachable = process.getuid?.() !== 0 ? undefined
    : !nobodyCan("-r", moduleFile) ? `user nobody cannot read ${moduleFile}`
    : !nobodyCan("-x", dir) ? `user nobody cannot enter ${dir}`
    : undefined;
  if (unreachable) console.warn(`data_dir: the unprivileged-user case is skipped: ${unreachable}`);
  it.skipIf(unreachable !== undefined)("refuses a directory it may not write or create in, as an unprivileged user", () => {
    const locked = join(dir, "locked");
    mkdirSync(locked);
    chmodSync(locked, 0o555);
    // Root may write anywhere: as root, the check runs as nobody in a child process.
    const asNobody = (path: string) => {
      if (process.getuid?.() !== 0) return problem(path);
      const script = `import { ensureDataDir } from ${JSON.stringify(new URL("../../../local/runtime/data-dir.ts", import.meta.url).pathname)};
try { ensureDataDir(${JSON.stringify(path)}, "lookout.yaml"); console.log("accepted"); } catch (e) { console.log(e.message); }`;
      const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        encoding: "utf8", uid: 65534, gid: 65534, env: { PATH: process.env.PATH, HOME: tmpdir() },
      });
      return (r.stdout || r.stderr).trim();
    };
    expect(asNobody(locked)).toBe(`lookout.yaml: data_dir: ${locked}: is not writable (EACCES: permission denied)`);
    expect(asNobody(join(locked, "new"))).toBe(`lookout.yaml: data_dir: ${join(locked, "new")}: cannot be created (EACCES: permission denied)`);
  });
});
