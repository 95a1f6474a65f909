import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig, resolveSecret } from "../../lib/config/load.js";
import { parseDuration } from "../../lib/config/duration.js";

const ORG = "0b9c3a52-3f9e-4c43-9d5f-1f0f4a2b7c11";
const APP = "6a3c2d1e-5b4f-4a7e-8c9d-0e1f2a3b4c5d";
const minimal = `
platform: { url: "http://127.0.0.1:4010", token: "env:PLATFORM_API_TOKEN" }
watch:
  - organization: ${ORG}
    applications: [${APP}]
`;

function problem(text: string, source = "lookout.yaml"): string {
  try {
    parseConfig(text, source, {});
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("configuration", () => {
  it("fills defaults", () => {
    const c = parseConfig(minimal, "lookout.yaml", {});
    expect(c.platform).toMatchObject({ auth: "token", requestsPerHour: 1000, timeoutMs: 10_000 });
    expect(c.backfillWindowMs).toBe(15 * 60_000);
    expect(c.retentionMs).toBe(400 * 86_400_000);
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
    expect(problem(minimal + "backfil_window: 5m\n")).toBe("lookout.yaml: unknown field(s) backfil_window");
    expect(problem(minimal.replace("token:", "tokn: x, token:"))).toBe("lookout.yaml: platform: unknown field(s) tokn");
    expect(problem(minimal.replace("    applications:", "    aplications: []\n    applications:"))).toBe("lookout.yaml: watch[0]: unknown field(s) aplications");
    expect(problem(minimal + "health: { failing_afer: 2 }\n")).toBe("lookout.yaml: health: unknown field(s) failing_afer");
    expect(problem(minimal.replace(`[${APP}]`, `[{ id: ${APP}, enviroment: prod }]`))).toMatch(/^lookout\.yaml: watch\[0\]\.applications\[0\]: /);
  });

  it("says when the file is not YAML or JSON, or not a mapping", () => {
    expect(problem("platform: [unclosed")).toMatch(/^lookout\.yaml: is not valid YAML/);
    expect(problem("{", "lookout.json")).toMatch(/^lookout\.json: is not valid JSON/);
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
