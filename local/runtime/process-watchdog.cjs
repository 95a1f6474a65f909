// Kills a helper's process group (DynamoDB Local's Java, moto_server) when the Lookout process that
// started it is gone, however it went (SIGKILL included). `node process-watchdog.cjs <pgid>`, its stdin a pipe from Lookout: only
// Lookout holds the other end, so the pipe closes exactly when Lookout exits or dies — no pid polling,
// no pid reuse. Plain CommonJS so that it starts in milliseconds without tsx. See local/runtime/process-group.ts.
"use strict";

const pgid = Number(process.argv[2]);
if (!Number.isInteger(pgid) || pgid <= 1) process.exit(2);

const alive = () => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
};

let stopping = false;
function stop() {
  if (stopping) return;
  stopping = true;
  try {
    process.kill(-pgid, "SIGTERM");
  } catch {
    // already gone
  }
  const since = Date.now();
  setInterval(() => {
    if (!alive()) process.exit(0);
    // A process that ignores SIGTERM for 3 s is killed outright.
    if (Date.now() - since > 3000) {
      try {
        process.kill(-pgid, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
  }, 100);
}

process.stdin.on("end", stop);
process.stdin.on("close", stop);
process.stdin.on("error", stop);
process.stdin.resume();
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, stop);
// The helper stopped on its own (or by Lookout): nothing left to watch.
setInterval(() => {
  if (!stopping && !alive()) process.exit(0);
}, 1000).unref();
