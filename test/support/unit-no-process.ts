/**
 * Before each unit test file: "unit" means no server, no process and no Java (docs/testing.md), so here
 * starting a child process or listening on a socket throws, naming what the test did; the file's end
 * gives them back (workers are shared from file to file). test/unit/repo/unit-purity.test.ts reads what
 * the unit files import; this catches what they reach through other modules, at run time.
 */
import { afterAll } from "vitest";
import childProcess from "node:child_process";
import net from "node:net";
import { syncBuiltinESMExports } from "node:module";

const STARTERS = ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"] as const;
const keptStarters: Record<string, unknown> = Object.fromEntries(STARTERS.map((k) => [k, childProcess[k]]));
const keptListen = net.Server.prototype.listen;

const refuse = (what: string) => () => {
  throw new Error(`a unit test ${what}: unit tests start no server, process or Java (docs/testing.md); this one belongs in test/integration/`);
};
for (const k of STARTERS) (childProcess as unknown as Record<string, unknown>)[k] = refuse(`started a process (child_process.${k})`);
net.Server.prototype.listen = refuse("listened on a socket (a server)") as never;
syncBuiltinESMExports();

afterAll(() => {
  Object.assign(childProcess, keptStarters);
  net.Server.prototype.listen = keptListen;
  syncBuiltinESMExports();
});
