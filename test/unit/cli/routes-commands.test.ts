import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NOTHING_WATCHED, NO_LINKS_NOTE, checkConfigCommand, routesTestCommand } from "../../../local/cli/routes-commands.js";
import type { Output } from "../../../local/cli/shared.js";
import { main } from "../../../local/cli/main.js";

const fixture = (name: string) => new URL(`../../fixtures/routes/${name}`, import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "lookout-routes-"));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

function capture(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l) };
}

/** The secrets test/fixtures/routes/lookout.yaml names, set. */
const SECRETS = { SLACK_WEBHOOK_ONCALL: "https://hooks.example/x", SLACK_BOT_TOKEN: "xoxb-1", SMTP_URL: "smtp://127.0.0.1:2525" };

describe("lookout check-config", () => {
  it("says what a good configuration sets up, and which kinds of event reach nobody", async () => {
    const io = capture();
    expect(await checkConfigCommand({ configFile: fixture("lookout.yaml"), env: SECRETS }, io)).toBe(0);
    expect(io.stdout).toEqual([
      "ok: 4 sources watched, 5 routes, 6 receivers",
      // Closes have their incident's severity: everything-else, which selects by severity, takes them.
      "warning: deployment/cancelled (info) reaches nobody: add a route or notify.default",
      // No link template anywhere: the messages will link to no console or logs.
      `note: ${NO_LINKS_NOTE}`,
    ]);
    expect(io.stderr).toEqual([]);
  });

  it("names every receiver secret that is not set here, and fails", async () => {
    const io = capture();
    expect(await checkConfigCommand({ configFile: fixture("lookout.yaml"), env: { ...SECRETS, SLACK_BOT_TOKEN: "" } }, io)).toBe(1);
    expect(io.stdout[0]).toBe("not ok: 4 sources watched, 5 routes, 6 receivers");
    expect(io.stderr).toEqual([
      "lookout check-config: routes[1].slack[1].token: env:SLACK_BOT_TOKEN is not set in this environment; export SLACK_BOT_TOKEN (a receiver without it cannot send)",
      "lookout check-config: routes[2].slack.token: env:SLACK_BOT_TOKEN is not set in this environment; export SLACK_BOT_TOKEN (a receiver without it cannot send)",
      "lookout check-config: routes[3].slack.token: env:SLACK_BOT_TOKEN is not set in this environment; export SLACK_BOT_TOKEN (a receiver without it cannot send)",
    ]);
    // The values themselves are never shown.
    expect([...io.stdout, ...io.stderr].join("\n")).not.toMatch(/xoxb-1|hooks\.example|smtp:\/\//);
  });

  it("with no routes at all, every kind of event reaches nobody; notify.default takes them all", async () => {
    const head = `platform: { url: "http://127.0.0.1:4010", token: "env:T" }
watch: [{ organization: 5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01 }]
`;
    const none = capture();
    expect(await checkConfigCommand({ configFile: file("none.yaml", head), env: {} }, none)).toBe(0);
    expect(none.stdout[0]).toBe("ok: 0 sources watched, 0 routes, 0 receivers");
    const warned = none.stdout.slice(1).filter((l) => l.startsWith("warning: ") && l !== `warning: ${NOTHING_WATCHED}`);
    // It loads, and reads nothing: said first.
    expect(none.stdout[1]).toBe(`warning: ${NOTHING_WATCHED}`);
    expect(warned).toContain("warning: cluster_log/cluster_error (error) reaches nobody: add a route or notify.default");
    expect(warned).toContain("warning: webhook_delivery/delivery_failed (warning) reaches nobody: add a route or notify.default");
    expect(warned).toContain("warning: health/receiver_failing (warning) reaches nobody: add a route or notify.default");
    expect(warned).toHaveLength(16); // every kind/transition there is

    const withDefault = capture();
    const text = `${head}notify: { default: { slack: { webhook_url: "env:HOOK" } } }\n`;
    expect(await checkConfigCommand({ configFile: file("default.yaml", text), env: { HOOK: "https://hooks.example/d" } }, withDefault)).toBe(0);
    expect(withDefault.stdout).toEqual(["ok: 0 sources watched, 0 routes and the default route, 1 receiver", `warning: ${NOTHING_WATCHED}`, `note: ${NO_LINKS_NOTE}`]);
    // One link template anywhere (here a service's own) and the note is gone.
    const linked = capture();
    const withLink = `${head.replace("}]", ', applications: [{ id: 6b2d8e4f-1c80-4d2f-8b62-3a7f1e2f9b12, links: { logs: "https://console.example.com/d/{execution_id}" } }] }]')}notify: { default: { slack: { webhook_url: "env:HOOK" } } }\n`;
    expect(await checkConfigCommand({ configFile: file("linked.yaml", withLink), env: { HOOK: "https://hooks.example/d" } }, linked)).toBe(0);
    expect(linked.stdout).toEqual(["ok: 1 source watched, 0 routes and the default route, 1 receiver"]);
  });

  it("on the shipped example: every kind reaches someone, and cloud-only secrets are listed, not checked", async () => {
    const io = capture();
    expect(await checkConfigCommand({ configFile: new URL("../../../lookout.example.yaml", import.meta.url).pathname, env: {} }, io)).toBe(0);
    expect(io.stdout.filter((l) => l.startsWith("warning:"))).toEqual([]);
    expect(io.stdout).toContain("note: routes[0].slack.token: ssm:/lookout/prod/slack-bot-token is read in the cloud; not checked here");
    expect(io.stderr).toEqual([]);
  });

  it("--deploy: what deploying refuses is a problem each, at its field, as packaging would say it; without it, one machine's configuration is ok", async () => {
    const oneMachine = file(
      "one-machine.yaml",
      `platform: { url: "http://127.0.0.1:4010", token: "env:T" }
watch: [{ organization: 5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01, webhooks: [6b2d8e4f-1c80-4d2f-8b62-3a7f1e2f9b12] }]
routes: [{ name: a, slack: { webhook_url: "env:H" } }]
notify: { digest_within: 30s }
`,
    );
    const env = { T: "t", H: "https://hooks.example/x" };
    const here = capture();
    expect(await checkConfigCommand({ configFile: oneMachine, env }, here)).toBe(0);
    expect(here.stderr).toEqual([]);
    const deploy = capture();
    expect(await checkConfigCommand({ configFile: oneMachine, env, deploy: true }, deploy)).toBe(1);
    expect(deploy.stdout[0]).toBe("not ok: 1 source watched, 1 route, 1 receiver");
    expect(deploy.stderr).toEqual([
      `lookout check-config: ${oneMachine}: platform.token: env:T is read from the environment, which the deployed functions do not get; use ssm:/… (SecureString) or secretsmanager:… (deploying refuses it)`,
      `lookout check-config: ${oneMachine}: routes[0].slack.webhook_url: env:H is read from the environment, which the deployed functions do not get; use ssm:/… (SecureString) or secretsmanager:… (deploying refuses it)`,
      `lookout check-config: ${oneMachine}: notify.digest_within: the cloud flushes digests once a minute; give at least 1m (deploying refuses it)`,
    ]);
    const json = capture();
    expect(await checkConfigCommand({ configFile: oneMachine, env, deploy: true, format: "json" }, json)).toBe(1);
    const doc = JSON.parse(json.stdout.join("\n")) as { ok: boolean; problems: Array<{ field: string }> };
    expect(doc.ok).toBe(false);
    expect(doc.problems.map((p) => p.field)).toEqual(["platform.token", "routes[0].slack.webhook_url", "notify.digest_within"]);
    // Read as deployed: the environment's PLATFORM_API_URL and PLATFORM_API_TOKEN fill in here, not there.
    const urlFromEnv = file("url-from-env.yaml", `watch: [{ organization: 5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01, webhooks: [6b2d8e4f-1c80-4d2f-8b62-3a7f1e2f9b12] }]
routes: [{ name: a, slack: { webhook_url: "ssm:/lookout/hook" } }]
`);
    const viaEnv = capture();
    expect(await checkConfigCommand({ configFile: urlFromEnv, env: { PLATFORM_API_URL: "https://platform.example.com", PLATFORM_API_TOKEN: "t" }, deploy: true }, viaEnv)).toBe(1);
    expect(viaEnv.stderr).toEqual([
      `lookout check-config: ${urlFromEnv}: platform.url: is required (deploying refuses it)`,
      `lookout check-config: ${urlFromEnv}: platform.token: is required (deploying refuses it)`,
    ]);
    // A secret name no IAM policy can hold: refused by packaging after serverless starts, said here first.
    const badName = file("bad-secret-name.yaml", `platform: { url: "https://platform.example.com", token: "ssm:/lookout/platform token" }
watch: [{ organization: 5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01, webhooks: [6b2d8e4f-1c80-4d2f-8b62-3a7f1e2f9b12] }]
routes: [{ name: a, slack: { webhook_url: "secretsmanager:lookout/hook url" } }]
`);
    const named = capture();
    expect(await checkConfigCommand({ configFile: badName, env: {}, deploy: true }, named)).toBe(1);
    expect(named.stderr).toEqual([
      `lookout check-config: ${badName}: platform.token: ssm:/lookout/platform token: not an SSM parameter name this stack can grant access to (deploying refuses it)`,
      `lookout check-config: ${badName}: routes[0].slack.webhook_url: secretsmanager:lookout/hook url: not a Secrets Manager secret name or ARN (deploying refuses it)`,
    ]);
    // The shipped example deploys.
    const example = capture();
    expect(await checkConfigCommand({ configFile: new URL("../../../lookout.example.yaml", import.meta.url).pathname, env: {}, deploy: true }, example)).toBe(0);
  });

  it("a file named like a secret keeps its path in the problem lines", async () => {
    const named = file("missingtoken.yaml", `platform: { url: "http://127.0.0.1:4010", token: "env:T" }
watch: [{ organization: 5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01 }]
routes: [{ name: a, slack: { channel: "#x" } }]
`);
    const io = capture();
    expect(await checkConfigCommand({ configFile: named, env: {} }, io)).toBe(1);
    expect(io.stderr).toEqual([`lookout check-config: ${named}: routes[0].slack.token: is required with channel`]);
    // A field's path is redacted on its own: a token pasted as a key is not shown.
    const pasted = file("pasted.yaml", `platform: { url: "http://127.0.0.1:4010", token: "env:T" }
watch: [{ organization: 5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01 }]
routes: [{ name: a, slack: { webhook_url: "env:H" }, xoxb-1234567890-abcdefghijkl: x }]
`);
    const shown = capture();
    expect(await checkConfigCommand({ configFile: pasted, env: {} }, shown)).toBe(1);
    expect(shown.stderr).toEqual([`lookout check-config: ${pasted}: routes[0]["[redacted:slack-token]"]: unknown field`]);
  });

  it("says in one line what is wrong and where", async () => {
    const bad = file(
      "bad.yaml",
      `platform: { url: "http://127.0.0.1:4010", token: "env:T" }
watch: [{ organization: 5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01 }]
routes:
  - { name: a, slack: { webhook_url: "env:H" } }
  - { name: b, match: { severity: [error, fatal] }, slack: { webhook_url: "env:H" } }
`,
    );
    const io = capture();
    expect(await checkConfigCommand({ configFile: bad, env: {} }, io)).toBe(1);
    expect(io.stderr).toEqual([`lookout check-config: ${bad}: routes[1].match.severity[1]: must be one of "critical", "error", "warning", "info"`]);
    expect(io.stdout).toEqual([]);

    const missing = capture();
    expect(await checkConfigCommand({ configFile: join(dir, "nope.yaml"), env: {} }, missing)).toBe(1);
    // The same hint as every command's (local/cli/shared.ts): where a configuration comes from.
    expect(missing.stderr).toEqual([expect.stringMatching(new RegExp(`^lookout check-config: ${join(dir, "nope.yaml").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: not found; pass --config FILE`))]);
  });
});

describe("lookout routes test", () => {
  const run = async (event: string) => {
    const io = capture();
    const code = await routesTestCommand({ configFile: fixture("lookout.yaml"), eventFile: event, env: {} }, io);
    return { code, ...io };
  };

  it("shows each route, why, the receivers reached, and where continue: false stopped", async () => {
    const r = await run(fixture("prod-failed.json"));
    expect(r.code).toBe(0);
    expect(r.stdout).toEqual([
      "event: Deployment Failed (error) at acme / storefront / production / api-gateway [Hq2b7XkP0vQm4sN9cT1eWa]",
      '1. no-previews: not matched: environment.name "production" is not preview',
      '2. prod-failures: matched: kind "deployment" is deployment; transition "failed" is one of failed, still_failing, recovered; environment.name "production" is one of prod, production',
      "   → slack webhook env:SLACK_WEBHOOK_ONCALL; slack #oncall; email oncall@example.com",
      "   continue: false: later routes are not considered",
      "3. api-team: not considered (route prod-failures matched and has continue: false)",
      "4. lookout-health: not considered (route prod-failures matched and has continue: false)",
      "5. everything-else: not considered (route prod-failures matched and has continue: false)",
      "reaches: slack webhook env:SLACK_WEBHOOK_ONCALL; slack #oncall; email oncall@example.com",
    ]);
  });

  it("takes a whole envelope, and says when a field is absent", async () => {
    const r = await run(fixture("staging-cluster-envelope.json"));
    expect(r.code).toBe(0);
    expect(r.stdout).toEqual([
      "event: Cluster Error (error) at acme / eu-main [cl-9f8e7d6c5b4a]",
      "1. no-previews: not matched: environment.name is absent from the event (route wants preview)",
      '2. prod-failures: not matched: kind "cluster_log" is not deployment',
      "3. api-team: not matched: service.name is absent from the event (route wants api-*)",
      '4. lookout-health: not matched: kind "cluster_log" is not health',
      '5. everything-else: matched: severity "error" is one of error, critical, warning',
      "   → email ops@example.com",
      "reaches: email ops@example.com",
    ]);
  });

  it("says when a silencing route takes the event", async () => {
    const r = await run(fixture("preview-failed.json"));
    expect(r.stdout[1]).toBe('1. no-previews: matched: environment.name "preview" is preview');
    expect(r.stdout[2]).toBe("   → no receivers (it only stops later routes)");
    expect(r.stdout.at(-1)).toBe("reaches: nobody (the matching routes have no receivers)");
  });

  it("notes an envelope EventBridge would route differently", async () => {
    const envelope = JSON.parse(
      JSON.stringify({ source: "acme", "detail-type": "Deployment Failed", detail: { kind: "cluster_log", transition: "cluster_error", severity: "error" } }),
    );
    const r = await run(file("odd.json", JSON.stringify(envelope)));
    expect(r.stdout.filter((l) => l.startsWith("note: "))).toEqual([
      'note: source is "acme": the deployed rules match source "lookout" only',
      'note: detail-type "Deployment Failed" disagrees with the detail (Cluster Error); Lookout publishes Cluster Error',
    ]);
  });

  it("fails in one line on an unreadable or unusable event file", async () => {
    for (const [name, text, message] of [
      ["broken.json", "{", /: is not valid JSON: /],
      ["list.json", "[]", /: must be an event detail or an envelope \(a JSON object\)$/],
      ["empty.json", "{}", /: the detail needs kind and transition \(docs\/events\.md\)$/],
    ] as const) {
      const r = await run(file(name, text));
      expect(r.code).toBe(1);
      expect(r.stderr).toHaveLength(1);
      expect(r.stderr[0]).toMatch(new RegExp(`^lookout routes test: ${join(dir, name).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}${message.source}`));
    }
  });

  it("is wired into the CLI", async () => {
    const out: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => (out.push(String(chunk)), true)) as typeof process.stdout.write;
    const saved = { ...process.env };
    Object.assign(process.env, SECRETS);
    try {
      expect(await main(["check-config", "--config", fixture("lookout.yaml")])).toBe(0);
      expect(await main(["routes", "test", "--config", fixture("lookout.yaml"), "--event", fixture("preview-failed.json")])).toBe(0);
    } finally {
      process.stdout.write = write;
      for (const k of Object.keys(SECRETS)) if (!(k in saved)) delete process.env[k];
    }
    expect(out[0]).toBe("ok: 4 sources watched, 5 routes, 6 receivers\n");
    expect(out.at(-1)).toBe("reaches: nobody (the matching routes have no receivers)\n");
  });
});
