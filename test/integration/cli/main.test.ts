import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { VERSION_LINE, buildProgram, main, operandsLast } from "../../../local/cli/main.js";
import { completionScript, completionTree } from "../../../local/cli/completion-commands.js";
import { COMPLETION_SHELLS } from "../../../local/cli/choices.js";
import { startupProgress } from "../../../local/runtime/dynamodb-local.js";
import { knownNames, matchName, resolveName } from "../../../local/cli/scope-names.js";
import { UsageError } from "../../../local/cli/shared.js";
import { EVENT_VERSION } from "../../../lib/model/event.js";
import type { AuditRow } from "../../../lib/model/audit-row.js";

const fixture = (name: string) => new URL(`../../fixtures/routes/${name}`, import.meta.url).pathname;
const SECRETS = { SLACK_WEBHOOK_ONCALL: "https://hooks.example/x", SLACK_BOT_TOKEN: "xoxb-1", SMTP_URL: "smtp://127.0.0.1:2525" };
const dir = mkdtempSync(join(tmpdir(), "lookout-cli-"));

/** Runs `main` with stdout and stderr captured (and the fixture's secrets set). */
async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const write = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  process.stdout.write = ((c: string) => ((stdout += String(c)), true)) as typeof process.stdout.write;
  process.stderr.write = ((c: string) => ((stderr += String(c)), true)) as typeof process.stderr.write;
  const saved = { ...process.env };
  Object.assign(process.env, SECRETS);
  try {
    return { code: await main(argv), stdout, stderr };
  } finally {
    process.stdout.write = write.out;
    process.stderr.write = write.err;
    for (const k of Object.keys(SECRETS)) if (!(k in saved)) delete process.env[k];
  }
}

describe("lookout --version", () => {
  it("prints the package version and the event schema version, with -V too", async () => {
    const { version } = JSON.parse(execFileSync("node", ["-p", "JSON.stringify(require('./package.json'))"], { encoding: "utf8" })) as { version: string };
    expect(VERSION_LINE).toBe(`lookout ${version} (event schema version ${EVENT_VERSION})`);
    for (const flag of ["--version", "-V"]) expect(await cli(flag)).toEqual({ code: 0, stdout: `${VERSION_LINE}\n`, stderr: "" });
  });
});

describe("exit codes: 0 ok, 1 failure, 2 usage", () => {
  it("2 for an unknown flag, an unknown command, a bad value, a missing argument or no command", async () => {
    for (const argv of [
      ["check-config", "--bogus"],
      ["frobnicate"],
      ["audit", "--format", "yaml"],
      ["report", "--format", "ndjson"],
      ["check-config", "--format", "xml"],
      ["simulate", "--port", "abc"],
      ["audit", "--serve", "--port", "70000"],
      ["completion", "tcsh"],
      ["routes", "test"],
      ["explain"],
      [],
    ]) {
      const r = await cli(...argv);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.stdout, argv.join(" ")).toBe("");
      expect(r.stderr, argv.join(" ")).toMatch(argv.length ? /error: / : /^Usage: lookout/);
      // One line and a pointer to the help, not the help itself.
      if (argv.length) expect(r.stderr.trim().split("\n").length, argv.join(" ")).toBeLessThanOrEqual(3);
    }
  });

  it("2 for a bad value the command itself checks (before any store is opened)", async () => {
    const r = await cli("audit", "--config", fixture("lookout.yaml"), "--since", "soon");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^lookout audit: --since/);
    const report = await cli("report", "--config", fixture("lookout.yaml"), "--since", "soon");
    expect(report).toMatchObject({ code: 2, stdout: "" });
    expect(report.stderr).toMatch(/^lookout report: --since: "soon" is not a duration/);
    const env = await cli("report", "--config", fixture("lookout.yaml"), "--environment", "prod-1234", "--since", "7d", "--from", "2026-03-01");
    expect(env.stderr).toMatch(/^lookout report: --since: give since, or from and\/or to, not both/);
    const mute = await cli("mute", "--config", fixture("lookout.yaml"), "--service", "api");
    expect(mute.code).toBe(2);
    expect(mute.stderr).toMatch(/^lookout mute: say why/);
  });

  it("1 for a missing configuration file or a bad one; 0 and --help on stdout", async () => {
    const missing = await cli("check-config", "--config", join(dir, "nope.yaml"));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/: not found; pass --config FILE/);
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "platform: { url: ftp://x, tokn: env:T }\nwatch: []\nbackfil_window: 5m\n");
    const r = await cli("check-config", "--config", bad);
    expect(r.code).toBe(1);
    // Every problem, each on its own line with its path, in file order.
    expect(r.stderr.trimEnd().split("\n")).toEqual([
      expect.stringMatching(/^lookout check-config: .*bad\.yaml: platform\.url: /),
      `lookout check-config: ${bad}: platform.tokn: unknown field; did you mean token?`,
      expect.stringMatching(/^lookout check-config: .*bad\.yaml: platform\.token: is required/),
      expect.stringMatching(/^lookout check-config: .*bad\.yaml: watch: too few items/),
      `lookout check-config: ${bad}: backfil_window: unknown field; did you mean backfill_window?`,
    ]);
    const help = await cli("audit", "--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--format <format>/);
  });

  it("are the process's exit codes (bin/lookout.mjs)", () => {
    const run = (...args: string[]) => spawnSync("node", ["bin/lookout.mjs", ...args], { encoding: "utf8", env: { ...process.env, ...SECRETS } }).status;
    expect(run("--bogus")).toBe(2);
    expect(run("check-config", "--config", join(dir, "nope.yaml"))).toBe(1);
    expect(run("check-config", "--config", fixture("lookout.yaml"))).toBe(0);
  }, 60_000);
});

describe("--format json", () => {
  it("check-config: one JSON document on stdout, and the problems in it when the file is wrong", async () => {
    const ok = await cli("check-config", "--config", fixture("lookout.yaml"), "--format", "json");
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, sources: 4, routes: 5, receivers: 6, problems: [] });
    const bad = join(dir, "bad-json.yaml");
    writeFileSync(bad, "platform: { url: http://x, token: env:T }\nwatch: []\n");
    const r = await cli("check-config", "--config", bad, "--format", "json");
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({ ok: false, source: bad, warnings: [], notes: [], problems: [{ field: "watch", problem: "too few items (min 1)" }] });
    expect(r.stderr).toMatch(/watch: too few items/);
  });

  it("routes test: one JSON document with each route's outcome and who is reached", async () => {
    const r = await cli("routes", "test", "--config", fixture("lookout.yaml"), "--event", fixture("preview-failed.json"), "--format", "json");
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    const doc = JSON.parse(r.stdout) as { event: string; routes: Array<{ position: number; outcome: string }>; via: string };
    expect(doc.event).toMatch(/^Deployment Failed/);
    expect(doc.routes.map((x) => x.position)).toEqual(doc.routes.map((_, i) => i + 1));
    expect(doc.via).toBe("nobody");
  });
});

describe("lookout completion", () => {
  const program = buildProgram(() => async () => undefined);
  const tree = completionTree(program);
  const commands = tree.filter((n) => n.path.length).map((n) => n.path.at(-1)!);

  it("walks every command of the program, nested ones too", () => {
    expect(commands).toEqual(expect.arrayContaining(["run", "check-config", "routes", "test", "audit", "explain", "report", "status", "mute", "unmute", "mutes", "completion", "simulate", "start"]));
    expect(tree.find((n) => n.path.join(" ") === "audit")!.options.find((o) => o.flags[0] === "--format")!.choices).toEqual(["table", "json", "ndjson", "csv"]);
    expect(tree.find((n) => n.path.join(" ") === "report")!.options.find((o) => o.flags[0] === "--format")!.choices).toEqual(["table", "json", "csv"]);
  });

  for (const shell of COMPLETION_SHELLS) {
    it(`${shell}: names every command and option, and the shell parses it`, async (ctx) => {
      const script = completionScript(shell, program);
      for (const name of commands) expect(script, name).toContain(name);
      for (const flag of ["--format", "--config", "--event", "--quarantine-within", "--version"]) expect(script).toContain(shell === "fish" ? `-l ${flag.slice(2)}` : flag);
      expect((await cli("completion", shell)).stdout).toBe(script);
      const path = join(dir, `lookout.${shell}`);
      writeFileSync(path, script);
      const check = spawnSync(shell, ["-n", path], { encoding: "utf8" });
      if (check.error && (check.error as NodeJS.ErrnoException).code === "ENOENT") return ctx.skip(`${shell} is not installed: the script's syntax is not checked`);
      expect(check.stderr).toBe("");
      expect(check.status).toBe(0);
    });
  }

  it("bash: completes commands, nested commands, options and option values", () => {
    const script = join(dir, "complete.bash");
    writeFileSync(script, completionScript("bash", program));
    const complete = (...words: string[]) =>
      execFileSync("bash", ["-c", `source ${script}; COMP_WORDS=(${words.map((w) => `"${w}"`).join(" ")}); COMP_CWORD=${words.length - 1}; _lookout_complete; echo "\${COMPREPLY[*]}"`], { encoding: "utf8" }).trim();
    expect(complete("lookout", "")).toMatch(/^simulate run check-config routes .* completion help$/);
    expect(complete("lookout", "routes", "")).toBe("test");
    expect(complete("lookout", "routes", "test", "--e")).toBe("--event");
    expect(complete("lookout", "audit", "--format", "")).toBe("table json ndjson csv");
    expect(complete("lookout", "completion", "")).toBe("bash zsh fish");
  });
});

describe("the DynamoDB Local start indicator", () => {
  it("not on a terminal: one line at the start, one with the time it took", () => {
    let text = "";
    let t = 1_000;
    const p = startupProgress({ write: (s: string) => (text += s), isTTY: false }, "starting DynamoDB Local", () => t);
    t += 9_800;
    p.done(true);
    expect(text).toBe("starting DynamoDB Local…\nDynamoDB Local ready in 9.8s\n");
  });

  it("on a terminal: one line redrawn in place with the seconds, erased when ready", () => {
    let text = "";
    let t = 0;
    const p = startupProgress({ write: (s: string) => (text += s), isTTY: true }, "starting DynamoDB Local", () => t);
    t = 4_200;
    p.done(true);
    expect(text).toMatch(/^\r\x1b\[2K. starting DynamoDB Local… 0s/);
    expect(text).not.toContain("\n");
    expect(text.endsWith("\r\x1b[2K")).toBe(true);
  });
});

describe("names where ids are taken", () => {
  const ids = ["11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333"];
  const row = (environment: { id: string; name: string }): AuditRow =>
    ({ type: "record", id: "r", kind: "deployment", at: "2026-01-01T00:00:00.000Z", observed_at: "2026-01-01T00:00:00.000Z", organization: ids[0]!, environment, summary: "" }) as AuditRow;
  const known = knownNames(
    { watch: [{ organization: ids[0]!, name: "acme", webhooks: [], clusters: [{ id: ids[1]!, name: "eu-1" }], applications: [{ id: ids[2]!, name: "api" }] }] },
    [row({ id: ids[1]!, name: "production" }), row({ id: ids[2]!, name: "production" }), row({ id: ids[0]!, name: "staging" })],
  );

  it("resolves a name from the configuration or the stored records; an id stays as it is", () => {
    expect(resolveName("organization", "acme", known)).toBe(ids[0]);
    expect(resolveName("service", "api", known)).toBe(ids[2]);
    expect(resolveName("cluster", "EU-1", known)).toBe(ids[1]);
    expect(resolveName("environment", "staging", known)).toBe(ids[0]);
    expect(resolveName("environment", ids[1]!.toUpperCase(), known)).toBe(ids[1]);
  });

  it("an ambiguous or unknown name is a usage error that lists the candidates", () => {
    expect(() => resolveName("environment", "production", known)).toThrow(UsageError);
    expect(() => resolveName("environment", "production", known)).toThrow(`--environment: "production" names 2 environments: production (${ids[1]}), production (${ids[2]}); give the id`);
    expect(() => resolveName("project", "shop", known)).toThrow(/^--project: no project named "shop"/);
    expect(matchName("environment", "production", known).ids).toHaveLength(2);
  });
});

describe("an id that begins with a dash", () => {
  it("is explain's operand, wherever it is given, not an unknown option (about one alert id in 64 begins with -)", async () => {
    const program = buildProgram(() => async () => {});
    expect(operandsLast(program, ["explain", "-TAGFzmvdg7Mx0bG6tcNTK", "--config", "f.yaml"], "explain")).toEqual(["explain", "--config", "f.yaml", "--", "-TAGFzmvdg7Mx0bG6tcNTK"]);
    expect(operandsLast(program, ["explain", "--format", "json", "-X1", "--table", "t"], "explain")).toEqual(["explain", "--format", "json", "--table", "t", "--", "-X1"]);
    // Untouched: an id without a dash, an option's value that begins with one, what already has `--`, other commands.
    for (const argv of [["explain", "abc", "--config", "f"], ["explain", "abc", "--config", "-odd.yaml"], ["explain", "--config", "f", "--", "-X"], ["audit", "-X"]]) {
      expect(operandsLast(program, argv, "explain")).toEqual(argv);
    }
    // Through the command: the id is looked up (here: not found in an empty store), not refused as an option.
    const r = await cli("explain", "-TAGFzmvdg7Mx0bG6tcNTK", "--config", "/nonexistent/lookout.yaml");
    expect(r.stderr).not.toMatch(/unknown option/);
  });
});
