/**
 * `npm start` on the embedded default (local/cli/start-command.ts), as a new user runs it: the demo says where its
 * data and configuration are, presses Acknowledge on its first incident's message in the terminal's
 * Slack (a signed request to the local interactivity endpoint, docs/actions.md) and shows the edit, and
 * after Ctrl-C `lookout status` reads them (docs/status.md).
 */
import { describe, expect, it } from "vitest";
import { execFile, spawn } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { randomUUID } from "node:crypto";
import { dynamodbEndpoint } from "../../support/dynamodb.js";

const BIN = new URL("../../../bin/lookout.mjs", import.meta.url).pathname;

describe("the embedded demo", () => {
  it("names its data folder and configuration, shows a button pressed, and lookout status reads them after Ctrl-C", async () => {
    // The run's DynamoDB Local, the file's database: no second Java process.
    const env = { ...process.env, DYNAMODB_ENDPOINT: dynamodbEndpoint(), LOOKOUT_TABLE: `demo-${randomUUID().slice(0, 8)}` };
    delete (env as NodeJS.ProcessEnv).PLATFORM_API_URL;
    const child = spawn(process.execPath, [BIN, "start", "--config", `/nonexistent/${randomUUID()}.yaml`], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", () => {});
    const exited = new Promise<number | null>((ok) => child.on("exit", ok));
    // Until the demo's first press was acted on (its first incident comes within half a minute).
    for (const until = Date.now() + 90_000; !/slack action: acknowledge by you: acknowledged/.test(stdout) && Date.now() < until; ) {
      await new Promise((ok) => setTimeout(ok, 250));
    }
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    const configFile = /lookout status --config (\S+)\)/.exec(stdout)?.[1];
    expect(configFile, stdout.slice(0, 2000)).toBeDefined();
    expect(existsSync(configFile!)).toBe(true);
    expect(stdout).toContain(`the demo's data stays in ${dirname(configFile!)}`);
    expect(stdout).toMatch(/slack actions: POST http:\/\/127\.0\.0\.1:\d+\/slack\/actions/);
    // The press, the message edited in place to say who is looking (its Acknowledge button gone), the reply.
    expect(stdout).toMatch(/demo: you pressed \[👀 Acknowledge\] on .* \(the endpoint answered 200\)/);
    const edit = stdout.split("┌─").find((m) => m.includes("edited in place") && m.includes("Acknowledged by @U0DEMO"));
    expect(edit, stdout.slice(-4000)).toMatch(/\[🔕 Mute 1h\] \[🔕 Mute until resolved\]/);
    expect(edit).not.toContain("[👀 Acknowledge]");
    expect(stdout).toContain("👀 Acknowledged by @U0DEMO: they are looking at it.");

    const status = await new Promise<{ code: number | null; out: string }>((done) =>
      execFile(process.execPath, [BIN, "status", "--config", configFile!, "--format", "json"], { env, timeout: 60_000 }, (err, out) =>
        done({ code: err ? (typeof err.code === "number" ? err.code : null) : 0, out })));
    // Healthy or not (the demo's failures are on purpose), the report names every source it polled.
    expect([0, 1]).toContain(status.code);
    const report = JSON.parse(status.out) as { generated_at: string; sources: Array<{ last_poll_at: string | null }> };
    expect(report.sources.length).toBeGreaterThan(0);
    expect(report.sources.some((s) => s.last_poll_at !== null)).toBe(true);
    // Read on the demo's clock (its simulator ran 5× real time): no poll is "in 3 min".
    for (const s of report.sources) if (s.last_poll_at) expect(Date.parse(s.last_poll_at)).toBeLessThanOrEqual(Date.parse(report.generated_at));
    expect(Date.parse(report.generated_at)).toBeGreaterThan(Date.now());
    // The report too: its window ends at the demo's now, not the wall clock's (which would cut its incidents off).
    const report7d = await new Promise<string>((done) =>
      execFile(process.execPath, [BIN, "report", "--config", configFile!, "--format", "json"], { env, timeout: 60_000 }, (_err, out) => done(out)));
    const period = (JSON.parse(report7d) as { period: { to: string } }).period;
    expect(Date.parse(period.to)).toBeGreaterThan(Date.now());
    rmSync(dirname(configFile!), { recursive: true, force: true });
  }, 180_000);
});
