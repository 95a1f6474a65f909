/**
 * One temporary directory for the whole test run, both projects: every file's `mkdtemp(tmpdir())` lands
 * in it (TMPDIR, inherited by the workers and what they start), and it is removed when the run ends,
 * failed or not, so tests leave nothing behind in the system's temporary directory.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Each vitest project calls this global setup (unit, integration): the first makes the directory, the others share it. */
const SHARED = Symbol.for("lookout.tests.tmp");
type WithTmp = typeof globalThis & { [SHARED]?: string };

export default function setup() {
  const holder = globalThis as WithTmp;
  if (holder[SHARED]) return () => undefined;
  const runTmp = mkdtempSync(join(tmpdir(), "lookout-tests-"));
  // Others may enter it, as they may /tmp (a test runs a command as an unprivileged user); none may write.
  chmodSync(runTmp, 0o755);
  holder[SHARED] = runTmp;
  process.env.TMPDIR = runTmp;
  const removeTmp = () => rmSync(runTmp, { recursive: true, force: true });
  // A run stopped by a signal (Ctrl-C, or `npm test` stopping it on a type error) skips the teardown.
  process.once("exit", removeTmp);
  return removeTmp;
}
