/**
 * `lookout simulate` (local/cli/simulate-command.ts) as a new user runs it beside `lookout run`: the
 * simulator's clock starts now, as Lookout's does, so what it deploys is news, not backfill.
 */
import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";

const BIN = new URL("../../../bin/lookout.mjs", import.meta.url).pathname;
const DAY = 86_400_000;

describe("lookout simulate", () => {
  it("prints how to reach it, and its platform's history ends now, not at a fixed date", async () => {
    const child = spawn(process.execPath, [BIN, "simulate", "--json", "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise<number | null>((ok) => child.on("exit", ok));
    try {
      let stdout = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", () => {});
      for (const until = Date.now() + 30_000; !stdout.includes("\n") && Date.now() < until; ) await new Promise((ok) => setTimeout(ok, 100));
      const info = JSON.parse(stdout.split("\n")[0]!) as { url: string; apiToken: string; applications: Array<{ id: string }> };
      const stamps: number[] = [];
      for (const app of info.applications) {
        const res = await fetch(`${info.url}/application/${app.id}/deploymentHistoryV2`, { headers: { Authorization: `Token ${info.apiToken}` } });
        const body = (await res.json()) as { results: Array<{ auditing_data: { updated_at: string } }> };
        stamps.push(...body.results.map((r) => Date.parse(r.auditing_data.updated_at)));
      }
      const latest = Math.max(...stamps);
      expect(latest).toBeLessThanOrEqual(Date.now() + 60_000);
      expect(latest).toBeGreaterThan(Date.now() - 60 * DAY);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  }, 60_000);
});
