/**
 * Helper processes Lookout starts (DynamoDB Local's Java, moto_server) run in a process group of their
 * own, watched by process-watchdog.cjs (also in its own group), which kills that group as soon as the
 * pipe from Lookout closes — on a clean exit, an uncaught error or a SIGKILL alike. Nothing is left
 * running when Lookout dies, however it dies.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Socket } from "node:net";
import { fileURLToPath } from "node:url";

/** Signals a child's whole process group (it was spawned detached: the group is its pid). */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (!child.pid || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal); // no group (not spawned detached after all): the process itself
  }
}

const WATCHDOG = fileURLToPath(new URL("./process-watchdog.cjs", import.meta.url));

/**
 * The watchdog: detached, so that neither a signal to Lookout's group nor Lookout's end takes it along,
 * and unreferenced, so that it never keeps Lookout's event loop alive; its stdin is the pipe it watches.
 */
export function startWatchdog(pgid: number): ChildProcess {
  const dog = spawn(process.execPath, [WATCHDOG, String(pgid)], { detached: true, stdio: ["pipe", "ignore", "ignore"] });
  dog.on("error", () => undefined); // no watchdog is no reason not to run; the helper is still stopped on a clean exit
  dog.stdin?.on("error", () => undefined);
  (dog.stdin as Socket | null)?.unref();
  dog.unref();
  return dog;
}
