import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig, resolveSecret } from "../../../lib/config/load.js";
import { parseDuration } from "../../../lib/config/duration.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkConfigCommand } from "../../../local/cli/routes-commands.js";
import { configProblem } from "../../support/config-problem.js";

const ORG = "0b9c3a52-3f9e-4c43-9d5f-1f0f4a2b7c11";
const APP = "6a3c2d1e-5b4f-4a7e-8c9d-0e1f2a3b4c5d";
const minimal = `
platform: { url: "http://127.0.0.1:4010", token: "env:PLATFORM_API_TOKEN" }
watch:
  - organization: ${ORG}
    applications: [${APP}]
`;

const problem = configProblem;

describe("configuration", () => {
  it("fills defaults", () => {
    const c = parseConfig(minimal, "lookout.yaml", {});
    expect(c.platform).toMatchObject({ auth: "token", requestsPerHour: 1000, timeoutMs: 10_000 });
    expect(c.backfillWindowMs).toBe(15 * 60_000);
    expect(c.retentionMs).toBe(400 * 86_400_000);
    // Records that raised nothing: 30 days unless said, never past retention.
    expect(c.routineRetentionMs).toBe(30 * 86_400_000);
    expect(parseConfig(minimal + "retention: 7d\n", "lookout.yaml", {}).routineRetentionMs).toBe(7 * 86_400_000);
    expect(parseConfig(minimal + "retention_routine: 400d\n", "lookout.yaml", {}).routineRetentionMs).toBe(400 * 86_400_000);
    expect(problem(minimal + "retention: 90d\nretention_routine: 91d\n")).toBe(
      "lookout.yaml: retention_routine: 91d is longer than retention (90d): records that raised nothing are kept at most as long as the rest");
    expect(problem(minimal + "retention_routine: 0d\n")).toMatch(/^lookout\.yaml: retention_routine: /);
    expect(c.dataDir).toBe(".lookout");
    expect(c.watch[0]!.applications).toEqual([{ id: APP }]);
    expect(c.watch[0]!.webhooks).toEqual([]);
  });

  it("names the path of a bad field", () => {
    expect(problem(minimal.replace(APP, "not-a-uuid"))).toMatch(/^lookout\.yaml: watch\[0\]\.applications\[0\]: /);
    expect(problem(minimal.replace(ORG, "nope"))).toMatch(/^lookout\.yaml: watch\[0\]\.organization: is not a valid uuid/);
    expect(problem(minimal + "backfill_window: soon\n")).toBe(
      "lookout.yaml: backfill_window: is not a duration like 90s, 15m, 1h or 400d",
    );
    expect(problem(minimal.replace("token: \"env:PLATFORM_API_TOKEN\"", "token: abc123secret"))).toMatch(
      /^lookout\.yaml: platform\.token: must name where the secret is kept/,
    );
    expect(problem(minimal.replace('url: "http://127.0.0.1:4010"', 'url: "ftp://x"'))).toMatch(/^lookout\.yaml: platform\.url: /);
    expect(problem("platform: { url: 'http://x', token: 'env:T' }\nwatch: []\n")).toMatch(/^lookout\.yaml: watch: too few items \(min 1\)/);
  });

  it("names a misspelt or unknown key instead of ignoring it, at every level", () => {
    expect(problem(minimal + "backfil_window: 5m\n")).toBe("lookout.yaml: backfil_window: unknown field; did you mean backfill_window?");
    expect(problem(minimal.replace("token:", "tokn: x, token:"))).toBe("lookout.yaml: platform.tokn: unknown field; did you mean token?");
    expect(problem(minimal.replace("    applications:", "    aplications: []\n    applications:"))).toBe("lookout.yaml: watch[0].aplications: unknown field; did you mean applications?");
    expect(problem(minimal + "health: { failing_afer: 2 }\n")).toBe("lookout.yaml: health.failing_afer: unknown field; did you mean failing_after?");
    expect(problem(minimal.replace(`[${APP}]`, `[{ id: ${APP}, enviroment: prod }]`))).toMatch(/^lookout\.yaml: watch\[0\]\.applications\[0\]\.enviroment: /);
  });

  it("reports every problem of a file in one run, in file order, each with its path", () => {
    const text = `
retention: soon
platform: { url: "ftp://x", tokn: "env:T", token: "env:T" }
watch:
  - organization: nope
    applications: [${APP}, not-a-uuid]
backfil_window: 5m
routes:
  - name: a
    slack: { channel: "#x", token: "env:T", broadcast_resolution: "no" }
`;
    let err: ConfigError | undefined;
    try {
      parseConfig(text, "lookout.yaml", {});
    } catch (e) {
      err = e as ConfigError;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.message.split("\n")).toEqual([
      "lookout.yaml: retention: is not a duration like 90s, 15m, 1h or 400d",
      expect.stringMatching(/^lookout\.yaml: platform\.url: /),
      "lookout.yaml: platform.tokn: unknown field; did you mean token?",
      "lookout.yaml: watch[0].organization: is not a valid uuid",
      expect.stringMatching(/^lookout\.yaml: watch\[0\]\.applications\[1\]: /),
      "lookout.yaml: backfil_window: unknown field; did you mean backfill_window?",
      // One receiver written without a list: its path has no [0], and a wrong type is not "is required".
      "lookout.yaml: routes[0].slack.broadcast_resolution: must be a boolean",
    ]);
    expect(err!.problems).toHaveLength(7);
    expect(err!.field).toBe("retention");
  });

  it("suggests only a near key (at most two edits away)", () => {
    expect(problem(minimal + "zzzz: 1\n")).toBe("lookout.yaml: zzzz: unknown field");
    expect(problem(minimal + "Retention: 1d\n")).toBe("lookout.yaml: Retention: unknown field; did you mean retention?");
  });

  it("reports every routing problem, not only the first", () => {
    const slack = `slack: { webhook_url: "env:H" }`;
    const lines = problem(`${minimal}routes: [{ name: a, ${slack} }, { name: a, ${slack} }, { name: b, match: { kind: health } }, { name: c, email: { to: [a@example.com] } }]\n`).split("\n");
    expect(lines).toEqual([
      `lookout.yaml: routes[1].name: "a" is already the name of routes[0]`,
      "lookout.yaml: routes[2]: has no receivers: add slack, email, pagerduty, webhook or teams, or continue: false to silence what it matches",
      "lookout.yaml: notify.email.from: is required: routes[3] sends email",
    ]);
  });

  it("says when the file is not YAML or JSON, or not a mapping", () => {
    expect(problem("platform: [unclosed")).toMatch(/^lookout\.yaml: is not valid YAML/);
    // The line it points at, quoted: never a message ending on a colon.
    expect(problem("platform:\n  url: [\nwatch: x\n")).toMatch(/is not valid YAML: .* at line 3, column 1: "watch: x"$/);
    expect(problem("{", "lookout.json")).toMatch(/^lookout\.json: is not valid JSON/);
    // JSON.parse names a position only: its line and column too, and that line quoted.
    expect(problem('{\n  "platform": {\n    "url": "x",\n  },\n  "watch": []\n}\n', "lookout.json")).toMatch(/is not valid JSON: .*\(line 4, column 3\): "},"$/);
    expect(problem("- a\n- b\n")).toMatch(/must be a mapping/);
  });

  it("takes the platform URL and token from the environment", () => {
    const c = parseConfig(`watch: [{ organization: ${ORG} }]`, "f.yaml", {
      PLATFORM_API_URL: "https://api.example.com/",
      PLATFORM_API_TOKEN: "t",
    });
    expect(c.platform.url).toBe("https://api.example.com");
    expect(c.platform.tokenRef).toBe("env:PLATFORM_API_TOKEN");
  });

  it("resolves env: secrets and refuses cloud ones without a resolver", async () => {
    await expect(resolveSecret("env:TOKEN", { TOKEN: "s3cret" })).resolves.toBe("s3cret");
    await expect(resolveSecret("env:TOKEN", {})).rejects.toThrow("environment: TOKEN is not set; export it (the configuration reads env:TOKEN)");
    await expect(resolveSecret("ssm:/lookout/token", {})).rejects.toThrow(/only be read in the cloud/);
    await expect(resolveSecret("ssm:/lookout/token", {}, { ssm: async () => "x" })).resolves.toBe("x");
  });

  it("parses durations", () => {
    expect(parseDuration("1h30m")).toBe(5_400_000);
    expect(parseDuration("250ms")).toBe(250);
    expect(parseDuration("15")).toBeUndefined();
    expect(parseDuration("-1m")).toBeUndefined();
  });
});

describe("health settings", () => {
  it("default to three failures and the dispatcher's own stall threshold, and can be set", () => {
    expect(parseConfig(minimal, "f.yaml", {}).health).toEqual({ failingAfter: 3 });
    expect(parseConfig(`${minimal}health: { stalled_after: 45m, failing_after: 5 }\n`, "f.yaml", {}).health).toEqual({ failingAfter: 5, stalledAfterMs: 45 * 60_000 });
    expect(() => parseConfig(`${minimal}health: { stalled_after: later }\n`, "f.yaml", {})).toThrow(/health\.stalled_after: is not a duration/);
  });
});

describe("limits (lib/config/duration.ts DURATION_LIMITS; docs/limits.md)", () => {
  const platform = (extra: string) => minimal.replace('token: "env:PLATFORM_API_TOKEN" }', `token: "env:PLATFORM_API_TOKEN", ${extra} }`);
  /** Each out-of-range value, the file that holds it, and the one line `lookout check-config` says. */
  const BAD: Array<[string, string]> = [
    [platform("timeout: 0s"), "platform.timeout: 0s: must be from 1s to 5m"],
    [platform("timeout: 999ms"), "platform.timeout: 999ms: must be from 1s to 5m"],
    [platform("timeout: 301s"), "platform.timeout: 301s: must be from 1s to 5m"],
    [platform("max_response_size: 1KB"), "platform.max_response_size: must be from 64KB to 1GB"],
    [platform("max_response_size: 2GB"), "platform.max_response_size: must be from 64KB to 1GB"],
    [platform("max_response_size: lots"), "platform.max_response_size: is not a size like 512KB, 20MB or 1GB"],
    [platform("requests_per_hour: 0"), "platform.requests_per_hour: too small (min 1)"],
    [platform("requests_per_hour: 1e12"), "platform.requests_per_hour: too large (max 1000000)"],
    [`${minimal}retention: 999999999999d\n`, "retention: 999999999999d: must be from 1d to 3650d"],
    [`${minimal}retention: 3651d\n`, "retention: 3651d: must be from 1d to 3650d"],
    [`${minimal}retention: 23h\n`, "retention: 23h: must be from 1d to 3650d"],
    [`${minimal}retention: ${"9".repeat(400)}d\n`, "retention: 99999999999999999999…: must be from 1d to 3650d"],
    [`${minimal}backfill_window: 0m\n`, "backfill_window: 0m: must be from 1m to 30d"],
    [`${minimal}backfill_window: 31d\n`, "backfill_window: 31d: must be from 1m to 30d"],
    [`${minimal}poll_interval: 0s\n`, "poll_interval: 0s: must be from 1s to 1d"],
    [`${minimal}poll_interval: 2d\n`, "poll_interval: 2d: must be from 1s to 1d"],
    [`${minimal}health: { stalled_after: 59s }\n`, "health.stalled_after: 59s: must be from 1m to 30d"],
    [`${minimal}health: { stalled_after: 1000d }\n`, "health.stalled_after: 1000d: must be from 1m to 30d"],
    [`${minimal}health: { failing_after: 0 }\n`, "health.failing_after: too small (min 1)"],
    [`${minimal}health: { failing_after: 100000 }\n`, "health.failing_after: too large (max 1000)"],
    [`${minimal}notify: { slack_rate: { per_second: 0 } }\n`, "notify.slack_rate.per_second: too small (min 0.01)"],
    [`${minimal}notify: { slack_rate: { per_second: 1e-300 } }\n`, "notify.slack_rate.per_second: too small (min 0.01)"],
    [`${minimal}notify: { slack_rate: { per_second: 1e300 } }\n`, "notify.slack_rate.per_second: too large (max 100)"],
    [`${minimal}notify: { slack_rate: { burst: 0 } }\n`, "notify.slack_rate.burst: too small (min 1)"],
    [`${minimal}notify: { slack_rate: { burst: 1000000 } }\n`, "notify.slack_rate.burst: too large (max 1000)"],
  ];

  it("lookout check-config refuses each value out of its range with one line naming the field, exit 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lookout-limits-"));
    for (const [i, [text, line]] of BAD.entries()) {
      const file = join(dir, `c${i}.yaml`);
      writeFileSync(file, text);
      const out: string[] = [];
      const err: string[] = [];
      const code = await checkConfigCommand({ configFile: file, env: {} }, { out: (l) => out.push(l), err: (l) => err.push(l) });
      expect({ code, out, err }, text).toEqual({ code: 1, out: [], err: [`lookout check-config: ${file}: ${line}`] });
    }
  });

  it("accepts each end of each range", () => {
    const c = parseConfig(
      `${platform("timeout: 1s, requests_per_hour: 1000000, max_response_size: 64KB")}retention: 3650d\nbackfill_window: 1m\npoll_interval: 1d\nhealth: { stalled_after: 30d, failing_after: 1000 }\nnotify: { slack_rate: { per_second: 0.01, burst: 1000 } }\n`,
      "f.yaml",
      {},
    );
    expect(c).toMatchObject({ retentionMs: 3650 * 86_400_000, backfillWindowMs: 60_000, pollIntervalMs: 86_400_000, platform: { timeoutMs: 1000 } });
    expect(parseConfig(platform("max_response_size: 1GB"), "f.yaml", {}).platform.maxResponseBytes).toBe(1024 ** 3);
    expect(parseConfig(`${platform("timeout: 5m")}retention: 1d\nbackfill_window: 30d\npoll_interval: 1s\nhealth: { stalled_after: 1m }\n`, "f.yaml", {}))
      .toMatchObject({ retentionMs: 86_400_000, platform: { timeoutMs: 300_000 }, health: { stalledAfterMs: 60_000 } });
  });
});

describe("incidents and how routes present events", () => {
  const head = (apps = APP) => minimal.replace(`[${APP}]`, `[${apps}]`);
  const BOT = `slack: { channel: "#oncall", token: "env:B" }`;
  const route = (extra: string) => `${head()}routes: [{ name: a, ${BOT}, ${extra} }]\n`;
  const placeholders = "known: {organization.id}, {project.id}, {environment.id}, {service.id}, {service.name}, {cluster.id}, {webhook.id}, {execution_id}, {record.id}, {alert.id}";
  /** Each bad value and the one line that names it. */
  const BAD: Array<[string, string]> = [
    [`${head()}incidents: { cluster_quiet_period: 10s }\n`, "incidents.cluster_quiet_period: 10s: must be from 1m to 7d"],
    [`${head()}incidents: { cluster_quiet_period: 8d }\n`, "incidents.cluster_quiet_period: 8d: must be from 1m to 7d"],
    [`${head()}incidents: { cluster_quiet_period: soon }\n`, "incidents.cluster_quiet_period: is not a duration like 90s, 15m, 1h or 400d"],
    // A bare number has no unit: said so (a string of the wrong kind, or a boolean, stays a type error).
    [`${head()}retention: 400\n`, "retention: 400 has no unit: write a duration like 90s, 15m, 1h or 400d"],
    [`${head()}notify: { digest_within: 120 }\n`, "notify.digest_within: 120 has no unit: write a duration like 90s, 15m, 1h or 400d"],
    [`${head()}backfill_window: true\n`, "backfill_window: must be a string"],
    [`${head()}incidents: { cluster_quiet: 5m }\n`, "incidents.cluster_quiet: unknown field"],
    [route("severity: fatal"), `routes[0].severity: must be one of "critical", "error", "warning", "info"`],
    [route("severity: 3"), "routes[0].severity: must be a severity (critical, error, warning, info) or a map from environment type to severity"],
    [route("severity: { production: fatal }"), `routes[0].severity.production: must be one of "critical", "error", "warning", "info"`],
    [route("severity: { production: critical, PRODUCTION: error }"), "routes[0].severity.PRODUCTION: names the same environment type as production"],
    [route(`severity: { "prod env": critical }`), `routes[0].severity["prod env"]: is not an environment type like PRODUCTION, PREVIEW, STAGING or DEVELOPMENT`],
    [route("severity: {}"), "routes[0].severity: needs at least one environment type"],
    [route(`mention: "@everyone"`), "routes[0].mention: must be @here, @channel, a user group id (S0123ABCD) or a user id (U0123ABCD, W0123ABCD)"],
    [route(`mention: ["@here", alice]`), "routes[0].mention[1]: must be @here, @channel, a user group id (S0123ABCD) or a user id (U0123ABCD, W0123ABCD)"],
    [route("mention_on: critical"), "routes[0].mention_on: needs mention: who to mention"],
    [route(`mention: "@here", mention_on: [fatal]`), `routes[0].mention_on[0]: must be one of "critical", "error", "warning", "info"`],
    [`${head()}notify: { default: { ${BOT}, mention: "#oncall" } }\n`, "notify.default.mention: must be @here, @channel, a user group id (S0123ABCD) or a user id (U0123ABCD, W0123ABCD)"],
    [`${head()}notify: { default: { ${BOT}, mention_on: error } }\n`, "notify.default.mention_on: needs mention: who to mention"],
    [`${head()}notify: { links: { console: "https://c.example/{org.id}" } }\n`, `notify.links.console: unknown placeholder {org.id}; ${placeholders}`],
    [`${head()}notify: { links: { console: "/relative/{service.id}" } }\n`, "notify.links.console: must be an absolute http(s) URL (https://…)"],
    [`${head()}notify: { links: { console: "ftp://files.example/{service.id}" } }\n`, "notify.links.console: must be an absolute http(s) URL (https://…)"],
    [`${head()}notify: { links: { console: "https://c.example/{service.id" } }\n`, "notify.links.console: has a brace that opens or closes no placeholder"],
    [`${head()}notify: { links: { "": "https://c.example/" } }\n`, `notify.links[""]: is not a label of 1 to 40 characters on one line`],
    [route(`links: { runbook: "https://r.example/{alert}" }`), `routes[0].links.runbook: unknown placeholder {alert}; ${placeholders}`],
    [head(`{ id: ${APP}, links: { logs: "https://l.example/{execution}" } }`), `watch[0].applications[0].links.logs: unknown placeholder {execution}; ${placeholders}`],
    [head(`{ id: ${APP}, links: { logs: 3 } }`), "watch[0].applications[0].links.logs: must be a string"],
    [
      `${head()}routes: [{ name: a, slack: { webhook_url: "env:H", broadcast_resolution: false } }]\n`,
      "routes[0].slack.broadcast_resolution: is for the Web API form (channel and token): an incoming webhook cannot reply in a thread",
    ],
  ];

  it("refuses each bad value with one line naming its path", () => {
    for (const [text, line] of BAD) expect(problem(text), text).toBe(`lookout.yaml: ${line}`);
    // A watched application in neither form says what is wrong with the object, not only that it is invalid.
    expect(problem(head(`{ id: ${APP}, enviroment: prod }`))).toBe("lookout.yaml: watch[0].applications[0].enviroment: unknown field; did you mean environment?");
  });

  it("reads them: quiet period, severity by environment type (keys upper-cased), mentions, links in the order written", () => {
    const c = parseConfig(
      `${head(`{ id: ${APP}, name: api, links: { logs: "https://l.example/{execution_id}" } }`)}incidents: { cluster_quiet_period: 45m }
routes:
  - { name: a, ${BOT}, severity: { production: critical, Preview: warning }, mention: ["@here", S0123ABCD, "@here"], links: { runbook: "https://r.example/{service.name}" } }
  - { name: b, slack: [{ channel: "#b", token: "env:B", broadcast_resolution: false }], severity: error }
notify:
  links: { console: "https://c.example/{organization.id}/{service.id}", docs: "https://docs.example/" }
  default: { ${BOT}, mention: U0123ABCD, mention_on: [critical, error] }
`,
      "f.yaml",
      {},
    );
    expect(c.incidents).toEqual({ clusterQuietMs: 45 * 60_000 });
    expect(c.routes[0]).toMatchObject({
      severity: { byEnvironmentType: { PRODUCTION: "critical", PREVIEW: "warning" } },
      mention: { who: ["@here", "S0123ABCD"], on: ["critical"] },
      links: [{ label: "runbook", template: "https://r.example/{service.name}" }],
      slack: [{ broadcastResolution: true }],
    });
    expect(c.routes[1]).toMatchObject({ severity: "error", slack: [{ broadcastResolution: false }] });
    expect(c.notify.links!.map((l) => l.label)).toEqual(["console", "docs"]);
    expect(c.notify.default!.mention).toEqual({ who: ["U0123ABCD"], on: ["critical", "error"] });
    expect(c.watch[0]!.applications[0]).toEqual({ id: APP, name: "api", links: [{ label: "logs", template: "https://l.example/{execution_id}" }] });
    expect(parseConfig(minimal, "f.yaml", {}).incidents).toEqual({ clusterQuietMs: 30 * 60_000 });
  });
});
