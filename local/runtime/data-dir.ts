/**
 * `data_dir` checked before anything is started in it: a directory Lookout can write, created when
 * missing, on an ordinary filesystem. Each problem is one ConfigError naming the field and the path,
 * instead of a stack trace from deep inside DynamoDB Local or the bus (or a spin on /proc).
 */
import { mkdirSync, realpathSync, rmSync, statSync, statfsSync, writeFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { ConfigError } from "../../lib/config/load.js";

/** Kernel filesystems (statfs f_type magic numbers, linux/magic.h): files there are not storage. */
const SPECIAL_FILESYSTEMS: Record<number, string> = {
  0x9fa0: "proc",
  0x62656572: "sysfs",
  0x1cd1: "devpts",
  0x27e0eb: "cgroup",
  0x63677270: "cgroup2",
  0x64626720: "debugfs",
  0x74726163: "tracefs",
  0x73636673: "securityfs",
  0xcafe4a11: "bpf",
  0x6165676c: "pstore",
  0x62656570: "configfs",
  0xde5e81e4: "efivarfs",
  0x42494e4d: "binfmt_misc",
  0x65735543: "fusectl",
  0x19800202: "mqueue",
  0x6e736673: "nsfs",
  0xf97cff8c: "selinuxfs",
};
/** Mount points of kernel filesystems, refused by name too (/dev is devtmpfs, which reports as tmpfs). */
const SPECIAL_ROOTS = ["/proc", "/sys", "/dev"];

const CODES: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only filesystem",
  ENOSPC: "no space left",
  EDQUOT: "disk quota exceeded",
  ENOTDIR: "a part of it is a file, not a directory",
  EEXIST: "exists and is not a directory",
  ENAMETOOLONG: "the name is too long",
  ELOOP: "too many symbolic links",
};

const describe = (err: unknown): string => {
  const code = (err as NodeJS.ErrnoException).code;
  return code ? `${code}: ${CODES[code] ?? (err as Error).message}` : (err as Error).message;
};

/** The deepest part of `path` that exists, resolved through symbolic links. */
function existingAncestor(path: string): string {
  for (let p = path; ; p = dirname(p)) {
    try {
      return realpathSync(p);
    } catch (err) {
      if (p === dirname(p)) throw err;
    }
  }
}

/**
 * Checks `dataDir` (relative to the working directory) and creates it when missing; returns its
 * absolute path. Throws a ConfigError `<source>: data_dir: <path>: <problem>`.
 */
export function ensureDataDir(dataDir: string, source = "configuration"): string {
  const abs = resolve(dataDir);
  const fail = (problem: string) => new ConfigError(source, "data_dir", `${dataDir}: ${problem}`);
  let real: string;
  try {
    real = existingAncestor(abs);
  } catch (err) {
    throw fail(`cannot be looked at (${describe(err)})`);
  }
  const root = SPECIAL_ROOTS.find((r) => real === r || real.startsWith(`${r}${sep}`));
  let fsType: string | undefined;
  try {
    fsType = SPECIAL_FILESYSTEMS[statfsSync(real).type];
  } catch {
    // statfs unsupported here: the names above still catch the usual places.
  }
  if (root || fsType) throw fail(`is on ${fsType ?? root}, a kernel filesystem, not storage; choose a directory on a disk`);
  try {
    if (!statSync(real).isDirectory()) throw fail(real === abs ? "is a file, not a directory" : `${real} is a file, not a directory`);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw fail(`cannot be looked at (${describe(err)})`);
  }
  try {
    mkdirSync(abs, { recursive: true });
  } catch (err) {
    throw fail(`cannot be created (${describe(err)})`);
  }
  // Permissions, read-only mounts, ACLs, quotas: writing a file is the one test that covers them all.
  const probe = join(abs, `.write-check-${process.pid}`);
  try {
    writeFileSync(probe, "");
    rmSync(probe, { force: true });
  } catch (err) {
    throw fail(`is not writable (${describe(err)})`);
  }
  return abs;
}
